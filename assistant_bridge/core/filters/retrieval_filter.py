"""Conversion of an Amazon Bedrock ``RetrievalFilter`` object to a filter AST.

Invariants: the result obeys the same field table and limits as a parsed filter string (depth, number of
comparisons, value types); every problem is a ``FilterSyntaxError`` naming the JSON path of its cause
(``$.andAll[1].equals.key``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assistant_bridge.core.filters.expr import (
    DEFAULT_FIELDS,
    MAX_COMPARISONS,
    MAX_DEPTH,
    And,
    Comparison,
    Expr,
    FieldSpec,
    InList,
    Leaf,
    Or,
    StringMatch,
)
from assistant_bridge.core.filters.validation import _leaf_problem, _lookup
from assistant_bridge.errors import FilterSyntaxError

_BEDROCK_OPS: dict[str, str] = {
    "equals": "==",
    "notEquals": "!=",
    "greaterThan": ">",
    "greaterThanOrEquals": ">=",
    "lessThan": "<",
    "lessThanOrEquals": "<=",
}
_BEDROCK_MEMBERS = (*_BEDROCK_OPS, "in", "notIn", "startsWith", "listContains", "stringContains", "andAll", "orAll")


def from_retrieval_filter(obj: Mapping[str, Any], fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS) -> Expr:
    """Convert an Amazon Bedrock ``RetrievalFilter`` object to an AST.

    ``notEquals``/``notIn`` follow this language's rule for missing values (a record without the key does
    not match), which is narrower than Bedrock's documented ``notEquals``.

    :raises FilterSyntaxError: naming the JSON path (``$.andAll[1].equals.key``) of the first problem.
    """
    counter = [0]
    return _from_rf(obj, "$", 0, counter, fields)


def _rf_fail(message: str, path: str) -> FilterSyntaxError:
    return FilterSyntaxError(f"{message} at {path}", path=path)


def _from_rf(obj: Any, path: str, level: int, counter: list[int], fields: Mapping[str, FieldSpec]) -> Expr:
    if not isinstance(obj, Mapping):
        raise _rf_fail("expected a RetrievalFilter object", path)
    members = [k for k, v in obj.items() if v is not None]
    if len(members) != 1 or members[0] not in _BEDROCK_MEMBERS:
        raise _rf_fail(
            f"a RetrievalFilter sets exactly one of {', '.join(_BEDROCK_MEMBERS)}; got {sorted(map(str, members))}",
            path,
        )
    member = members[0]
    body, here = obj[member], f"{path}.{member}"
    if member in ("andAll", "orAll"):
        if level >= MAX_DEPTH:
            raise _rf_fail(f"filter nests deeper than {MAX_DEPTH} levels", here)
        if not isinstance(body, list) or len(body) < 2:
            raise _rf_fail(f"{member} needs a list of at least two filters", here)
        items = tuple(_from_rf(x, f"{here}[{i}]", level + 1, counter, fields) for i, x in enumerate(body))
        return And(items) if member == "andAll" else Or(items)
    if member == "listContains":
        raise _rf_fail("listContains is not supported: no filterable field holds a list", here)
    if not isinstance(body, Mapping) or set(body) != {"key", "value"}:
        raise _rf_fail("expected an object with exactly 'key' and 'value'", here)
    key, value = body["key"], body["value"]
    if not isinstance(key, str) or not 1 <= len(key) <= 100:
        raise _rf_fail("key must be a string of 1 to 100 characters", f"{here}.key")
    spec = _lookup(key, fields, f" at {here}.key", path=f"{here}.key")
    counter[0] += 1
    if counter[0] > MAX_COMPARISONS:
        raise _rf_fail(f"filter has more than {MAX_COMPARISONS} comparisons", here)
    leaf: Leaf
    if member in ("in", "notIn"):
        if not isinstance(value, list):
            raise _rf_fail(f"{member} needs a list value", f"{here}.value")
        leaf = InList(spec.name, tuple(value), member == "notIn")
    elif member in ("startsWith", "stringContains"):
        leaf = StringMatch(spec.name, "prefix" if member == "startsWith" else "contains", value)
    else:
        leaf = Comparison(spec.name, _BEDROCK_OPS[member], value)  # type: ignore[arg-type]
    problem = _leaf_problem(leaf, spec)
    if problem:
        raise _rf_fail(problem, f"{here}.value")
    return leaf
