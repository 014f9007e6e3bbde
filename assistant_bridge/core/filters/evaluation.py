"""In-memory evaluation of filter ASTs, with SQL-style three-valued logic.

Invariant: a value that is missing (``None`` or absent) or of another kind than the compared literal makes its
comparison *unknown*; ``not`` of unknown is unknown, and :func:`matches` is true only when the whole filter is
true. The backend translators (:mod:`.translate`) follow the same rule, so all three agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assistant_bridge.core.filters.expr import _LEAVES, DEFAULT_FIELDS, Expr, InList, Leaf, Not, Or, StringMatch
from assistant_bridge.domain import Chunk


def _same_kind(a: Any, b: Any) -> bool:
    def kind(v: Any) -> str:
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, (int, float)):
            return "num"
        return "str" if isinstance(v, str) else "other"

    return kind(a) == kind(b) != "other"


def _eval_leaf(leaf: Leaf, value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(leaf, StringMatch):
        if not isinstance(value, str):
            return None
        return value.startswith(leaf.value) if leaf.kind == "prefix" else leaf.value in value
    if isinstance(leaf, InList):
        if not all(_same_kind(value, v) for v in leaf.values):
            return None
        return (value in leaf.values) != leaf.negated
    if not _same_kind(value, leaf.value):
        return None
    other = leaf.value
    return bool(
        {
            "==": value == other,
            "!=": value != other,
            "<": value < other,
            "<=": value <= other,
            ">": value > other,
            ">=": value >= other,
        }[leaf.op]
    )


def evaluate(expr: Expr, record: Mapping[str, Any]) -> bool | None:
    """Three-valued evaluation: True, False, or None (unknown, because a compared value is missing)."""
    if isinstance(expr, _LEAVES):
        return _eval_leaf(expr, record.get(expr.field))
    if isinstance(expr, Not):
        inner = evaluate(expr.item, record)
        return None if inner is None else not inner
    results = [evaluate(i, record) for i in expr.items]
    decisive = isinstance(expr, Or)  # True decides an or, False decides an and
    if decisive in results:
        return decisive
    return None if None in results else not decisive


def matches(expr: Expr | None, record: Mapping[str, Any]) -> bool:
    """Whether ``record`` (public field name -> value) passes the filter; ``None`` passes everything."""
    return expr is None or evaluate(expr, record) is True


def record_of_chunk(chunk: Chunk) -> dict[str, Any]:
    """The filterable view of a chunk, for in-memory backends (``None`` for absent optional values): each of
    :data:`~assistant_bridge.core.filters.expr.DEFAULT_FIELDS` is the chunk's attribute of that name."""
    return {name: getattr(chunk, name) for name in DEFAULT_FIELDS}


def stored_record(chunk: Chunk) -> dict[str, Any]:
    """:func:`record_of_chunk` as the backends store it: an absent url is ``""`` there, so ``url == ""`` finds
    it. What a backend that filters in process compares (the memory backend, the exact index's reads)."""
    return record_of_chunk(chunk) | {"url": chunk.url or ""}
