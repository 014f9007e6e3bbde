"""Translation of filter ASTs to backend queries: Milvus boolean expressions and Elasticsearch query clauses.

Invariants: user text is never pasted into a backend expression (field names come from the field table or the
backend's field map and must match a strict pattern; values are re-checked and re-encoded here); no scope field
can be named; ``not`` is pushed down to the comparisons and negated tests are guarded by "has a value", so a
missing value never satisfies a negation and both translations agree with :func:`~.evaluation.matches`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assistant_bridge.core.filters.expr import (
    _LEAVES,
    DEFAULT_FIELDS,
    SCOPE_FIELDS,
    And,
    Comparison,
    Expr,
    InList,
    Leaf,
    Not,
    Value,
)
from assistant_bridge.core.filters.parse import _literal
from assistant_bridge.core.filters.validation import _value_problem
from assistant_bridge.errors import ConfigurationError, FilterSyntaxError

_MILVUS_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(\["[A-Za-z0-9_.\-]+"\])*\Z')
_ES_NAME = re.compile(r"[A-Za-z_@][A-Za-z0-9_.@\-]*\Z")


def _backend_name(field: str, field_map: Mapping[str, str] | None, pattern: re.Pattern[str]) -> str:
    if field_map is None:
        spec = DEFAULT_FIELDS.get(field)
        name = spec.backend_name if spec else field
    else:
        if field not in field_map:
            raise FilterSyntaxError(f"field {field!r} is not filterable on this backend", field=field)
        name = field_map[field]
    if not pattern.match(name) or re.split(r"[\[.]", name)[0] in SCOPE_FIELDS or field in SCOPE_FIELDS:
        raise ConfigurationError(f"refusing to filter on backend field {name!r}")
    return name


def _safe(value: Any) -> Any:
    problem = _value_problem(value)
    if problem:
        raise FilterSyntaxError(problem)
    return value


def _milvus_literal(value: Value) -> str:
    value = _safe(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'") + '"'
    return _literal(value)


_NEGATED_OP = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _milvus_leaf(leaf: Leaf, name: str, negate: bool) -> tuple[str, bool]:
    """The leaf's text, and whether it is compound (needs parentheses inside ``and``/``or``)."""
    if isinstance(leaf, Comparison):
        op = _NEGATED_OP[leaf.op] if negate else leaf.op
        return f"{name} {op} {_milvus_literal(leaf.value)}", False
    if isinstance(leaf, InList):
        values = ", ".join(_milvus_literal(v) for v in leaf.values)
        if leaf.negated == negate:
            return f"{name} in [{values}]", False
        # Milvus treats "null in [...]" as false, so "not in" alone would select rows without a value
        return f"{name} is not null and {name} not in [{values}]", True
    pattern = re.sub(r"([\\%_])", r"\\\1", _safe(leaf.value))
    pattern = pattern + "%" if leaf.kind == "prefix" else "%" + pattern + "%"
    like = f"{name} like {_milvus_literal(pattern)}"
    return (f"{name} is not null and not ({like})", True) if negate else (like, False)


def _milvus(expr: Expr, fm: Mapping[str, str] | None, negate: bool) -> tuple[str, bool]:
    if isinstance(expr, _LEAVES):
        return _milvus_leaf(expr, _backend_name(expr.field, fm, _MILVUS_NAME), negate)
    if isinstance(expr, Not):
        return _milvus(expr.item, fm, not negate)
    word = " and " if isinstance(expr, And) != negate else " or "
    parts = (_milvus(i, fm, negate) for i in expr.items)
    return word.join(f"({text})" if compound else text for text, compound in parts), True


def to_milvus(expr: Expr, field_map: Mapping[str, str] | None = None) -> str:
    """A Milvus boolean expression, always wrapped in parentheses so it can be joined to a scope with ``and``.

    ``not`` is pushed down to the comparisons (De Morgan), and negated ``in``/``like`` tests are guarded with
    ``is not null``, so a missing value never satisfies a negation whether or not the engine treats null
    comparisons as unknown. Missing values must be stored as null (nullable fields), not as sentinels.

    :param field_map: public field name -> Milvus field name; default: each field's ``backend_name``.
    :raises FilterSyntaxError: if a field has no backend name in ``field_map`` or a value is unsafe.
    """
    return f"({_milvus(expr, field_map, False)[0]})"


_RANGE_KEY = {"<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}


def _es_leaf(leaf: Leaf, name: str, negate: bool) -> dict[str, Any]:
    if isinstance(leaf, Comparison):
        op = _NEGATED_OP[leaf.op] if negate else leaf.op
        if op in _RANGE_KEY:
            return {"range": {name: {_RANGE_KEY[op]: _safe(leaf.value)}}}
        term = {"term": {name: _safe(leaf.value)}}
        return term if op == "==" else _es_present_not(name, term)
    if isinstance(leaf, InList):
        terms = {"terms": {name: [_safe(v) for v in leaf.values]}}
        return _es_present_not(name, terms) if leaf.negated != negate else terms
    if leaf.kind == "prefix":
        query: dict[str, Any] = {"prefix": {name: {"value": _safe(leaf.value)}}}
    else:
        escaped = re.sub(r"([\\*?])", r"\\\1", _safe(leaf.value))
        query = {"wildcard": {name: {"value": f"*{escaped}*"}}}
    return _es_present_not(name, query) if negate else query


def _es_present_not(name: str, query: dict[str, Any]) -> dict[str, Any]:
    # "false" under three-valued logic: the field has a value and the value fails the test
    return {"bool": {"filter": [{"exists": {"field": name}}], "must_not": [query]}}


def _es(expr: Expr, fm: Mapping[str, str] | None, negate: bool) -> dict[str, Any]:
    if isinstance(expr, _LEAVES):
        return _es_leaf(expr, _backend_name(expr.field, fm, _ES_NAME), negate)
    if isinstance(expr, Not):
        return _es(expr.item, fm, not negate)
    parts = [_es(i, fm, negate) for i in expr.items]
    if isinstance(expr, And) != negate:  # and, or the negation of an or (De Morgan)
        return {"bool": {"filter": parts}}
    return {"bool": {"should": parts, "minimum_should_match": 1}}


def to_elasticsearch(expr: Expr, field_map: Mapping[str, str] | None = None) -> dict[str, Any]:
    """An Elasticsearch query clause for keyword/numeric/boolean fields (put it in a ``bool.filter``).

    ``not`` is pushed down to the comparisons so a missing value never satisfies a negation, matching
    :func:`matches` and Milvus nullable fields.
    """
    return _es(expr, field_map, False)
