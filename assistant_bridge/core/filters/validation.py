"""Checks of filter ASTs against a field table and the limits, and the value checks the translators rely on.

Invariants: a tree that passes :func:`validate` names only fields of the table (never a scope field), has
values of each field's type that are safe to encode for any backend (no control characters or lone
surrogates, integers in int64 range, finite numbers), and stays within :data:`MAX_DEPTH`,
:data:`MAX_COMPARISONS` and :data:`MAX_LIST_ITEMS`. Error messages quote user text only shortened
(:func:`_show`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from typing import Any

from assistant_bridge.core.filters.expr import (
    _LEAVES,
    COMPARE_OPS,
    DEFAULT_FIELDS,
    INT64_MAX,
    INT64_MIN,
    MAX_COMPARISONS,
    MAX_DEPTH,
    MAX_LIST_ITEMS,
    SCOPE_FIELDS,
    And,
    Expr,
    FieldSpec,
    InList,
    Leaf,
    Not,
    Or,
    StringMatch,
    iter_leaves,
)
from assistant_bridge.errors import FilterSyntaxError


def _allowed(fields: Mapping[str, FieldSpec]) -> str:
    return ", ".join(sorted(fields))


def _show(text: str, limit: int = 40) -> str:
    """Quote user text for an error message without echoing control characters or megabytes."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _bad_text(value: str) -> str | None:
    for ch in value:
        category = unicodedata.category(ch)
        if category == "Cc":
            return f"control character U+{ord(ch):04X} is not allowed in a value"
        if category == "Cs":
            return f"lone surrogate U+{ord(ch):04X} is not allowed in a value"
    return None


def _type_problem(spec: FieldSpec, value: Any) -> str | None:
    """Why ``value`` cannot be compared with ``spec``'s field, or None when it can."""
    kind = spec.type
    if kind == "str":
        return None if isinstance(value, str) else f"field {spec.name!r} expects a string, got {_kind(value)}"
    if kind == "bool":
        return None if isinstance(value, bool) else f"field {spec.name!r} expects true or false, got {_kind(value)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind == "int" and isinstance(value, float)):
        return f"field {spec.name!r} expects {'an integer' if kind == 'int' else 'a number'}, got {_kind(value)}"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    return "a " + type(value).__name__


def _value_problem(value: Any) -> str | None:
    """Checks that keep a value safe to encode for any backend."""
    if isinstance(value, str):
        return _bad_text(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if INT64_MIN <= value <= INT64_MAX else "integer out of the 64-bit range"
    if isinstance(value, float):
        return None if math.isfinite(value) else "number out of range"
    return f"unsupported value type {type(value).__name__}"


def _leaf_problem(leaf: Leaf, spec: FieldSpec) -> str | None:
    if isinstance(leaf, StringMatch):
        if leaf.kind not in ("prefix", "contains"):
            return f"unknown string match {leaf.kind!r}"
        if spec.type != "str":
            return f"{'startswith' if leaf.kind == 'prefix' else 'contains'} needs a string field; {spec.name!r} is {spec.type}"
        values: tuple[Any, ...] = (leaf.value,)
    elif isinstance(leaf, InList):
        if not leaf.values:
            return "the list is empty"
        if len(leaf.values) > MAX_LIST_ITEMS:
            return f"more than {MAX_LIST_ITEMS} list items"
        values = leaf.values
    else:
        if leaf.op not in COMPARE_OPS:
            return f"unknown operator {leaf.op!r}"
        if spec.type == "bool" and leaf.op not in ("==", "!="):
            return f"field {spec.name!r} is boolean and only supports == and !="
        values = (leaf.value,)
    for v in values:
        problem = _type_problem(spec, v) or _value_problem(v)
        if problem:
            return problem
    return None


def validate(expr: Expr, fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS) -> Expr:
    """Check an AST built in code against the field table and the limits; return it unchanged.

    :raises FilterSyntaxError: on an unknown or scope field, a wrong value type or an exceeded limit.
    """
    _check_shape(expr, 0)
    count = 0
    for leaf in iter_leaves(expr):
        count += 1
        if count > MAX_COMPARISONS:
            raise FilterSyntaxError(f"filter has more than {MAX_COMPARISONS} comparisons")
        spec = _lookup(leaf.field, fields, "")
        problem = _leaf_problem(leaf, spec)
        if problem:
            raise FilterSyntaxError(f"{problem} (field {leaf.field!r})", field=leaf.field)
    return expr


def _check_shape(expr: Any, level: int) -> None:
    if level > MAX_DEPTH:
        raise FilterSyntaxError(f"filter nests deeper than {MAX_DEPTH} levels")
    if isinstance(expr, (And, Or)):
        if len(expr.items) < 2:
            raise FilterSyntaxError(f"{type(expr).__name__} needs at least two items")
        for item in expr.items:
            _check_shape(item, level + 1)
    elif isinstance(expr, Not):
        _check_shape(expr.item, level + 1)
    elif not isinstance(expr, _LEAVES):
        raise FilterSyntaxError(f"not a filter expression: {type(expr).__name__}")


def _lookup(name: str, fields: Mapping[str, FieldSpec], where: str, **details: Any) -> FieldSpec:
    if not isinstance(name, str):
        raise FilterSyntaxError(f"field name{where} must be a string, got {_kind(name)}", **details)
    spec = fields.get(name)
    if spec is not None:
        return spec
    if name in SCOPE_FIELDS:
        raise FilterSyntaxError(
            f"field {_show(name)}{where} is a scope field and cannot be filtered; scope comes from the caller's "
            f"credentials. Allowed: {_allowed(fields)}",
            field=name,
            **details,
        )
    hint = ""
    for candidate in fields:
        if candidate.lower() == name.lower():
            hint = f" (did you mean {candidate!r}?)"
    raise FilterSyntaxError(
        f"unknown field {_show(name)}{where}{hint}; allowed: {_allowed(fields)}", field=name, **details
    )
