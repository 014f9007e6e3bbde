"""The filter language: parse, validate, print and translate metadata filters.

A filter arrives as a string (watsonx Assistant custom-service search sends ``filter``) or as an Amazon Bedrock
``RetrievalFilter`` object. Both become one small AST, checked against a whitelist of typed fields, and each
backend gets its own translation from that AST. Invariants:

* user text is never pasted into a backend expression: identifiers come from the field table, values are
  re-encoded by the translator (string escaping, no control characters, finite numbers in int64 range);
* scope fields (tenant, owner, workspaces, session) cannot be named, so a filter can only narrow a search;
* a value that is missing (``None`` or absent) makes its comparison *unknown*, SQL style: ``not`` of unknown is
  unknown and a record matches only if the whole filter is true. :func:`matches`, :func:`to_milvus` (nullable
  fields) and :func:`to_elasticsearch` all follow this rule, so the three agree.

The grammar is documented in ``docs/filter-language.md``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Union

from assistant_bridge.domain import Chunk
from assistant_bridge.errors import ConfigurationError, FilterSyntaxError

FieldType = Literal["str", "int", "float", "bool"]
CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
MatchKind = Literal["prefix", "contains"]
Value = Union[str, int, float, bool]

MAX_FILTER_CHARS = 4096
MAX_DEPTH = 16
MAX_LIST_ITEMS = 256
MAX_COMPARISONS = 64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: Names a filter may never use: the scope of a request is decided by the server alone.
SCOPE_FIELDS = frozenset(
    {"tenant", "owner", "owner_user_id", "user", "user_id", "workspace", "workspaces", "workspace_ids",
     "session", "session_id"}
)
COMPARE_OPS: tuple[str, ...] = ("==", "!=", "<", "<=", ">", ">=")
_FIELD_TYPES = ("str", "int", "float", "bool")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MILVUS_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(\["[A-Za-z0-9_.\-]+"\])*\Z')
_ES_NAME = re.compile(r"[A-Za-z_@][A-Za-z0-9_.@\-]*\Z")


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
    FieldSpec("document_id", "str"), FieldSpec("title", "str"), FieldSpec("url", "str"),
    FieldSpec("filename", "str"), FieldSpec("language", "str"), FieldSpec("modality", "str"),
    FieldSpec("page_number", "int"), FieldSpec("start_time", "float"), FieldSpec("end_time", "float"),
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


Leaf = Union[Comparison, InList, StringMatch]
Expr = Union[Comparison, InList, StringMatch, And, Or, Not]
_LEAVES = (Comparison, InList, StringMatch)


def describe_fields(fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS) -> list[dict[str, str]]:
    """The filterable fields as ``[{"name": ..., "type": ...}]``, sorted by name (for errors and docs)."""
    return [{"name": f.name, "type": f.type} for f in sorted(fields.values(), key=lambda f: f.name)]


def _allowed(fields: Mapping[str, FieldSpec]) -> str:
    return ", ".join(sorted(fields))


def _show(text: str, limit: int = 40) -> str:
    """Quote user text for an error message without echoing control characters or megabytes."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ------------------------------------------------------------------------------------------- validation


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


# ------------------------------------------------------------------------------------------------ parser

_KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false", "startswith", "contains"})
_TOKEN = re.compile(
    r"(?P<num>-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|<|>)|(?P<punct>[()\[\],])"
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # num | name | kw | op | punct | str | end
    text: str
    value: Any
    col: int


def _fail(message: str, col: int) -> FilterSyntaxError:
    return FilterSyntaxError(f"{message} at column {col}", column=col)


def _read_string(text: str, start: int) -> tuple[str, int]:
    quote, i = text[start], start + 1
    out: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt not in ("\\", '"', "'"):
                raise _fail(f"unknown escape {_show(chr(92) + nxt)} (only \\\\, \\\" and \\' are allowed)", i + 1)
            out.append(nxt)
            i += 2
            continue
        problem = _bad_text(ch)
        if problem:
            raise _fail(problem, i + 1)
        out.append(ch)
        i += 1
    raise _fail("unterminated string starting", start + 1)


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch in "\"'":
            string, end = _read_string(text, i)
            toks.append(_Tok("str", text[i:end], string, i + 1))
            i = end
            continue
        m = _TOKEN.match(text, i)
        if m is None:
            hint = " (use == for equality)" if ch == "=" else ""
            raise _fail(f"unexpected character {_show(ch)}{hint}", i + 1)
        kind, word = m.lastgroup or "", m.group()
        value: Any = word
        if kind == "num":
            value = _number(word, i + 1)
        elif kind == "name" and word.lower() in _KEYWORDS:
            kind, value = "kw", word.lower()
        toks.append(_Tok(kind, word, value, i + 1))
        i = m.end()
    toks.append(_Tok("end", "end of filter", None, len(text) + 1))
    return toks


def _number(word: str, col: int) -> int | float:
    value: int | float = float(word) if any(c in word for c in ".eE") else int(word)
    problem = _value_problem(value)
    if problem:
        raise _fail(problem, col)
    return value


class _Parser:
    def __init__(self, text: str, fields: Mapping[str, FieldSpec]) -> None:
        self.toks = _tokenize(text)
        self.pos = 0
        self.fields = fields
        self.nesting = 0
        self.comparisons = 0

    def peek(self) -> _Tok:
        return self.toks[self.pos]

    def take(self) -> _Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def is_kw(self, word: str) -> bool:
        tok = self.peek()
        return tok.kind == "kw" and tok.value == word

    def expect(self, kind: str, text: str, what: str) -> _Tok:
        tok = self.take()
        if tok.kind != kind or (tok.value if kind == "kw" else tok.text) != text:
            raise _fail(f"expected {what}, found {_show(tok.text)}", tok.col)
        return tok

    def parse(self) -> Expr:
        expr = self.or_expr()
        tok = self.peek()
        if tok.kind != "end":
            raise _fail(f"expected 'and', 'or' or end of filter, found {_show(tok.text)}", tok.col)
        if depth(expr) > MAX_DEPTH:
            raise FilterSyntaxError(f"filter nests deeper than {MAX_DEPTH} levels")
        return expr

    def or_expr(self) -> Expr:
        items = [self.and_expr()]
        while self.is_kw("or"):
            self.take()
            items.append(self.and_expr())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self) -> Expr:
        items = [self.not_expr()]
        while self.is_kw("and"):
            self.take()
            items.append(self.not_expr())
        return items[0] if len(items) == 1 else And(tuple(items))

    def enter(self, tok: _Tok) -> None:
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise _fail(f"filter nests deeper than {MAX_DEPTH} levels", tok.col)

    def not_expr(self) -> Expr:
        if self.is_kw("not"):
            self.enter(self.take())
            item = self.not_expr()
            self.nesting -= 1
            return Not(item)
        tok = self.peek()
        if tok.kind == "punct" and tok.text == "(":
            self.enter(self.take())
            expr = self.or_expr()
            self.expect("punct", ")", "')'")
            self.nesting -= 1
            return expr
        return self.predicate()

    def predicate(self) -> Expr:
        name = self.take()
        if name.kind != "name":
            raise _fail(f"expected a field name, found {_show(name.text)}", name.col)
        spec = _lookup(name.text, self.fields, f" at column {name.col}", column=name.col)
        self.comparisons += 1
        if self.comparisons > MAX_COMPARISONS:
            raise _fail(f"filter has more than {MAX_COMPARISONS} comparisons", name.col)
        tok = self.take()
        leaf: Leaf
        if tok.kind == "op":
            leaf = Comparison(spec.name, tok.text, self.literal(spec))  # type: ignore[arg-type]
        elif tok.kind == "kw" and tok.value in ("in", "not"):
            if tok.value == "not":
                self.expect("kw", "in", "'in' after 'not'")
            leaf = InList(spec.name, self.list_literal(spec), tok.value == "not")
        elif tok.kind == "kw" and tok.value in ("startswith", "contains"):
            if spec.type != "str":
                raise _fail(f"{tok.value} needs a string field; {spec.name!r} is {spec.type}", tok.col)
            value = self.literal(spec)
            assert isinstance(value, str)
            leaf = StringMatch(spec.name, "prefix" if tok.value == "startswith" else "contains", value)
        else:
            raise _fail(
                f"expected an operator (==, !=, <, <=, >, >=, in, not in, startswith, contains) after "
                f"{_show(spec.name)}, found {_show(tok.text)}",
                tok.col,
            )
        problem = _leaf_problem(leaf, spec)
        if problem:
            raise _fail(problem, tok.col)
        return leaf

    def literal(self, spec: FieldSpec) -> Value:
        """Read one value and check it against the field's type, reporting the value's own column."""
        tok = self.take()
        if tok.kind in ("str", "num"):
            value: Value = tok.value
        elif tok.kind == "kw" and tok.value in ("true", "false"):
            value = tok.value == "true"
        else:
            raise _fail(f"expected a value (string, number, true or false), found {_show(tok.text)}", tok.col)
        problem = _type_problem(spec, value)
        if problem:
            raise _fail(problem, tok.col)
        return value

    def list_literal(self, spec: FieldSpec) -> tuple[Value, ...]:
        opening = self.expect("punct", "[", "'['")
        values: list[Value] = []
        if self.peek().text == "]" and self.peek().kind == "punct":
            raise _fail("the list is empty", opening.col)
        while True:
            values.append(self.literal(spec))
            if len(values) > MAX_LIST_ITEMS:
                raise _fail(f"list has more than {MAX_LIST_ITEMS} items", self.toks[self.pos - 1].col)
            tok = self.take()
            if tok.kind == "punct" and tok.text == "]":
                return tuple(values)
            if not (tok.kind == "punct" and tok.text == ","):
                raise _fail(f"expected ',' or ']', found {_show(tok.text)}", tok.col)


def parse_filter(text: str | None, fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS) -> Expr | None:
    """Parse a filter string into an AST; an empty or blank string means "no filter" and gives ``None``.

    :param fields: the filterable fields; names outside it are rejected.
    :raises FilterSyntaxError: with the column of the problem, for any input that is not a valid filter.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise FilterSyntaxError(f"filter must be a string, got {type(text).__name__}")
    if len(text) > MAX_FILTER_CHARS:
        raise FilterSyntaxError(f"filter is longer than {MAX_FILTER_CHARS} characters", length=len(text))
    if not text.strip():
        return None
    return _Parser(text, fields).parse()


# ----------------------------------------------------------------------------------------------- printer


def _literal(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_filter(expr: Expr) -> str:
    """Print an AST in the filter language; ``parse_filter(format_filter(e)) == e`` for valid ASTs."""
    if isinstance(expr, Comparison):
        return f"{expr.field} {expr.op} {_literal(expr.value)}"
    if isinstance(expr, InList):
        keyword = "not in" if expr.negated else "in"
        return f"{expr.field} {keyword} [{', '.join(_literal(v) for v in expr.values)}]"
    if isinstance(expr, StringMatch):
        return f"{expr.field} {'startswith' if expr.kind == 'prefix' else 'contains'} {_literal(expr.value)}"
    if isinstance(expr, Not):
        inner = format_filter(expr.item)
        return "not " + (inner if isinstance(expr.item, (*_LEAVES, Not)) else f"({inner})")
    word, grouped = (" and ", (And, Or)) if isinstance(expr, And) else (" or ", (Or,))
    return word.join(f"({format_filter(i)})" if isinstance(i, grouped) else format_filter(i) for i in expr.items)


# --------------------------------------------------------------------------------------- evaluation


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
    return bool({
        "==": value == other, "!=": value != other, "<": value < other,
        "<=": value <= other, ">": value > other, ">=": value >= other,
    }[leaf.op])


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
    """The filterable view of a chunk, for in-memory backends (``None`` for absent optional values)."""
    return {
        "document_id": chunk.document_id, "title": chunk.title, "url": chunk.url, "filename": chunk.filename,
        "language": chunk.language, "modality": chunk.modality, "page_number": chunk.page_number,
        "start_time": chunk.start_time, "end_time": chunk.end_time, "position": chunk.position,
    }


# ------------------------------------------------------------------------------------------- translators


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


# -------------------------------------------------------------------------------- Bedrock RetrievalFilter

_BEDROCK_OPS: dict[str, str] = {
    "equals": "==", "notEquals": "!=", "greaterThan": ">", "greaterThanOrEquals": ">=",
    "lessThan": "<", "lessThanOrEquals": "<=",
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
