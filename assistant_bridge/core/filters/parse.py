"""The filter language's text form: tokenizer and recursive-descent parser (:func:`parse_filter`), and the
printer (:func:`format_filter`).

Invariants: the parser checks each name against the field table and each value against its field's type as it
reads them, under the same limits as :func:`~assistant_bridge.core.filters.validation.validate`, and reports a
problem in the text with its column; ``parse_filter(format_filter(e)) == e`` for every valid tree. The
grammar is documented in ``docs/filter-language.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from assistant_bridge.core.filters.expr import (
    _LEAVES,
    DEFAULT_FIELDS,
    MAX_COMPARISONS,
    MAX_DEPTH,
    MAX_FILTER_CHARS,
    MAX_LIST_ITEMS,
    SCOPE_FIELDS,
    And,
    Comparison,
    Expr,
    FieldSpec,
    InList,
    Leaf,
    Not,
    Or,
    StringMatch,
    Value,
    depth,
)
from assistant_bridge.core.filters.validation import (
    _bad_text,
    _leaf_problem,
    _lookup,
    _show,
    _type_problem,
    _value_problem,
)
from assistant_bridge.errors import FilterSyntaxError

_KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false", "startswith", "contains"})
_TOKEN = re.compile(
    r"(?P<num>-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|<|>|:)|(?P<punct>[()\[\],])"
)
# after ``field:`` (the Lucene-style form watsonx Assistant users write: ``product:widgets``), an unquoted
# value runs to the next white space or parenthesis
_BARE = re.compile(r"[^\s()\[\],\"']+")
# a ``field:value`` clause on a field this service does not have matches no chunk (the field is missing
# from every chunk), like a search engine's query on an unmapped field; it is not an error, so that a
# watsonx integration's default filter gives "no results", not a "connectivity issue"
NO_SUCH_FIELD = Comparison("document_id", "==", "")


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
        if m is None and toks and toks[-1].text == ":" and toks[-1].kind == "op" and _BARE.match(text, i):
            bare = _BARE.match(text, i)
            assert bare is not None
            toks.append(_Tok("bare", bare.group(), bare.group(), i + 1))
            i = bare.end()
            continue
        if m is None:
            hint = " (use == for equality)" if ch == "=" else ""
            raise _fail(f"unexpected character {_show(ch)}{hint}", i + 1)
        kind, word = m.lastgroup or "", m.group()
        value: Any = word
        if toks and toks[-1].text == ":" and toks[-1].kind == "op":
            bare = _BARE.match(text, i)
            if bare is not None and bare.end() > m.end():  # widgets-2, en-US, 3.1.4: one bare value
                word = value = bare.group()
                toks.append(_Tok("bare", word, word, i + 1))
                i = bare.end()
                continue
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
        return self.chain("or", self.and_expr, Or)

    def and_expr(self) -> Expr:
        return self.chain("and", self.not_expr, And)

    def chain(self, keyword: str, operand: Callable[[], Expr], node: type[And] | type[Or]) -> Expr:
        """``operand (keyword operand)*``: one operand as it is, several under ``node``."""
        items = [operand()]
        while self.is_kw(keyword):
            self.take()
            items.append(operand())
        return items[0] if len(items) == 1 else node(tuple(items))

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
        if self.peek().kind == "op" and self.peek().text == ":" and name.text not in self.fields:
            if name.text in SCOPE_FIELDS:  # never filterable, in any form: this raises
                _lookup(name.text, self.fields, f" at column {name.col}", column=name.col)
            self.take()
            self.literal(None)
            self.comparisons += 1
            return NO_SUCH_FIELD
        spec = _lookup(name.text, self.fields, f" at column {name.col}", column=name.col)
        self.comparisons += 1
        if self.comparisons > MAX_COMPARISONS:
            raise _fail(f"filter has more than {MAX_COMPARISONS} comparisons", name.col)
        tok = self.take()
        leaf: Leaf
        if tok.kind == "op":
            op = "==" if tok.text == ":" else tok.text
            leaf = Comparison(spec.name, op, self.literal(spec))  # type: ignore[arg-type]
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

    def literal(self, spec: FieldSpec | None) -> Value:
        """Read one value and check it against the field's type (none: any value), reporting the value's own
        column. A bare value (after ``field:``) takes the field's type: ``page_number:3`` is the number 3."""
        tok = self.take()
        if tok.kind == "bare" or (tok.kind == "name" and self.toks[self.pos - 2].text == ":"):
            value: Value = _bare_value(tok.text, spec)
        elif tok.kind in ("str", "num"):
            value = tok.value
        elif tok.kind == "kw" and tok.value in ("true", "false"):
            value = tok.value == "true"
        else:
            raise _fail(f"expected a value (string, number, true or false), found {_show(tok.text)}", tok.col)
        problem = _type_problem(spec, value) if spec is not None else _value_problem(value)
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


def _bare_value(word: str, spec: FieldSpec | None) -> Value:
    """An unquoted value as the field's type wants it (a string when it is not a number of a numeric field)."""
    if spec is not None and spec.type in ("int", "float"):
        try:
            return int(word) if spec.type == "int" and word.lstrip("-").isdigit() else float(word)
        except ValueError:
            return word  # the type check names the problem
    if spec is not None and spec.type == "bool" and word.lower() in ("true", "false"):
        return word.lower() == "true"
    return word


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
