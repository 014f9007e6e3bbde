"""The filter language's expression tree: typed field specs, limits, AST node types and tree walks.

Every other filter module builds or reads these nodes. Invariants: a :class:`FieldSpec` is always a valid
identifier of a known type and never a scope field (tenant, owner, workspaces, session), so no field table
built from specs can make a scope filterable; the nodes are frozen, so a parsed or validated tree never changes
afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from assistant_bridge.errors import ConfigurationError

FieldType = Literal["str", "int", "float", "bool"]
CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
MatchKind = Literal["prefix", "contains"]
Value = str | int | float | bool

MAX_FILTER_CHARS = 4096
MAX_DEPTH = 16
MAX_LIST_ITEMS = 256
MAX_COMPARISONS = 64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: Names a filter may never use: the scope of a request is decided by the server alone.
SCOPE_FIELDS = frozenset(
    {
        "tenant",
        "owner",
        "owner_user_id",
        "user",
        "user_id",
        "workspace",
        "workspaces",
        "workspace_ids",
        "session",
        "session_id",
    }
)
COMPARE_OPS: tuple[str, ...] = ("==", "!=", "<", "<=", ">", ">=")
_FIELD_TYPES = ("str", "int", "float", "bool")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class FieldSpec:
    """One filterable field: public ``name``, value ``type`` and the name the backends store it under."""

    name: str
    type: FieldType
    backend_name: str = ""

    def __post_init__(self) -> None:
        if not self.backend_name:
            object.__setattr__(self, "backend_name", self.name)
        if not _IDENT.match(self.name) or self.type not in _FIELD_TYPES:
            raise ConfigurationError(f"invalid filter field {self.name!r} of type {self.type!r}")
        if self.name in SCOPE_FIELDS or self.backend_name in SCOPE_FIELDS:
            raise ConfigurationError(f"scope field {self.name!r} cannot be made filterable")


def _fields(*specs: FieldSpec) -> Mapping[str, FieldSpec]:
    return MappingProxyType({s.name: s for s in specs})


DEFAULT_FIELDS: Mapping[str, FieldSpec] = _fields(
    FieldSpec("document_id", "str"),
    FieldSpec("title", "str"),
    FieldSpec("url", "str"),
    FieldSpec("filename", "str"),
    FieldSpec("language", "str"),
    FieldSpec("modality", "str"),
    FieldSpec("page_number", "int"),
    FieldSpec("start_time", "float"),
    FieldSpec("end_time", "float"),
    FieldSpec("position", "int"),
)


# ---------------------------------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Comparison:
    field: str
    op: CompareOp
    value: Value


@dataclass(frozen=True)
class InList:
    field: str
    values: tuple[Value, ...]
    negated: bool = False


@dataclass(frozen=True)
class StringMatch:
    field: str
    kind: MatchKind
    value: str


@dataclass(frozen=True)
class And:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Not:
    item: Expr


Leaf = Comparison | InList | StringMatch
Expr = Comparison | InList | StringMatch | And | Or | Not
_LEAVES = (Comparison, InList, StringMatch)


def describe_fields(fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS) -> list[dict[str, str]]:
    """The filterable fields as ``[{"name": ..., "type": ...}]``, sorted by name (for errors and docs)."""
    return [{"name": f.name, "type": f.type} for f in sorted(fields.values(), key=lambda f: f.name)]


def iter_leaves(expr: Expr) -> Iterator[Leaf]:
    """Every comparison in ``expr``, left to right."""
    if isinstance(expr, _LEAVES):
        yield expr
    elif isinstance(expr, Not):
        yield from iter_leaves(expr.item)
    else:
        for item in expr.items:
            yield from iter_leaves(item)


def depth(expr: Expr) -> int:
    """Nesting depth of ``and``/``or``/``not`` nodes (a single comparison has depth 0)."""
    if isinstance(expr, _LEAVES):
        return 0
    if isinstance(expr, Not):
        return 1 + depth(expr.item)
    return 1 + max(depth(i) for i in expr.items)
