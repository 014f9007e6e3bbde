"""Tests for the filter language: parser, limits, translators, Bedrock conversion and their agreement."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_bridge.core.filters import (
    DEFAULT_FIELDS,
    MAX_COMPARISONS,
    MAX_DEPTH,
    MAX_FILTER_CHARS,
    MAX_LIST_ITEMS,
    And,
    Comparison,
    Expr,
    FieldSpec,
    InList,
    Not,
    Or,
    StringMatch,
    depth,
    describe_fields,
    evaluate,
    format_filter,
    from_retrieval_filter,
    matches,
    parse_filter,
    record_of_chunk,
    to_elasticsearch,
    to_milvus,
    validate,
)
from assistant_bridge.domain import Chunk
from assistant_bridge.errors import ConfigurationError, FilterSyntaxError

unit = pytest.mark.unit

T = "title"
FIELDS_WITH_BOOL: Mapping[str, FieldSpec] = {**DEFAULT_FIELDS, "archived": FieldSpec("archived", "bool")}


def syntax_error(text: str, fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS) -> FilterSyntaxError:
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text, fields)
    return info.value


# ------------------------------------------------------------------------------------------- parsing


@unit
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('title == "a"', Comparison(T, "==", "a")),
        ("title != 'a'", Comparison(T, "!=", "a")),
        ("page_number < 3", Comparison("page_number", "<", 3)),
        ("page_number <= -3", Comparison("page_number", "<=", -3)),
        ("start_time > 1.5", Comparison("start_time", ">", 1.5)),
        ("end_time >= 2", Comparison("end_time", ">=", 2)),
        ("end_time >= 1e3", Comparison("end_time", ">=", 1000.0)),
        ("end_time >= 2.5E-1", Comparison("end_time", ">=", 0.25)),
        ("language in [\"en\", 'fr']", InList("language", ("en", "fr"))),
        ("position not in [1, 2, 3]", InList("position", (1, 2, 3), negated=True)),
        ('title startswith "Intro"', StringMatch(T, "prefix", "Intro")),
        ('title contains "policy"', StringMatch(T, "contains", "policy")),
        ('not title == "a"', Not(Comparison(T, "==", "a"))),
        ("((position == 1))", Comparison("position", "==", 1)),
        ("position==1", Comparison("position", "==", 1)),
        ("\tposition\n==\r\n1  ", Comparison("position", "==", 1)),
    ],
)
def test_each_operator_parses(text: str, expected: Expr) -> None:
    assert parse_filter(text) == expected


@unit
def test_booleans_only_on_bool_fields() -> None:
    assert parse_filter("archived == TRUE", FIELDS_WITH_BOOL) == Comparison("archived", "==", True)
    assert parse_filter("archived != false", FIELDS_WITH_BOOL) == Comparison("archived", "!=", False)
    assert "only supports == and !=" in syntax_error("archived < true", FIELDS_WITH_BOOL).message
    assert "expects a string" in syntax_error("title == true").message


@unit
def test_string_escapes() -> None:
    assert parse_filter(r'title == "a\"b\\c\'d"') == Comparison(T, "==", "a\"b\\c'd")
    assert parse_filter(r"title == 'it\'s'") == Comparison(T, "==", "it's")
    assert parse_filter("title == 'say \"hi\"'") == Comparison(T, "==", 'say "hi"')
    assert parse_filter('title == "héllo 😀 日本"') == Comparison(T, "==", "héllo 😀 日本")
    assert parse_filter('title == ""') == Comparison(T, "==", "")


@unit
@pytest.mark.parametrize("text", [None, "", "   ", "\n\t "])
def test_empty_means_no_filter(text: str | None) -> None:
    assert parse_filter(text) is None


@unit
def test_keywords_are_case_insensitive() -> None:
    expected = Or((Not(InList(T, ("a",))), And((InList("url", ("b",), True), StringMatch(T, "prefix", "x")))))
    assert parse_filter('NOT title IN ["a"] Or url Not In ["b"] AND title StartsWith "x"') == expected


@unit
def test_precedence_not_over_and_over_or() -> None:
    a, b, c = (Comparison("position", "==", i) for i in (1, 2, 3))
    assert parse_filter("position == 1 or position == 2 and position == 3") == Or((a, And((b, c))))
    assert parse_filter("position == 1 and position == 2 or position == 3") == Or((And((a, b)), c))
    assert parse_filter("not position == 1 and position == 2") == And((Not(a), b))
    assert parse_filter("not position == 1 or position == 2") == Or((Not(a), b))
    assert parse_filter("not (position == 1 or position == 2)") == Not(Or((a, b)))
    assert parse_filter("(position == 1 or position == 2) and position == 3") == And((Or((a, b)), c))
    assert parse_filter("position == 1 or position == 2 or position == 3") == Or((a, b, c))
    assert parse_filter("not not position == 1") == Not(Not(a))


@unit
@pytest.mark.parametrize(
    ("text", "fragment", "column"),
    [
        ('foo == "x"', "unknown field 'foo' at column 1; allowed: document_id, end_time,", 1),
        ('title == "a" and  foo == 1', "unknown field 'foo' at column 19", 19),
        ('Title == "x"', "did you mean 'title'?", 1),
        ('tenant == "other"', "scope field", 1),
        ('workspaces in ["w"]', "scope field", 1),
        ('session_id == "s"', "scope field", 1),
        ('title = "x"', "use == for equality", 7),
        ('title == "x', "unterminated string starting at column 10", 10),
        (r'title == "a\n"', "unknown escape '\\\\n'", 12),
        ('title == "a\x00"', "control character U+0000", 12),
        ('title == "x" garbage', "expected 'and', 'or' or end of filter, found 'garbage' at column 14", 14),
        ("title ==", "expected a value", 9),
        ('title "x"', "expected an operator", 7),
        ("== 3", "expected a field name", 1),
        ('(title == "x"', "expected ')'", 14),
        ("title in []", "the list is empty", 10),
        ('title in ["a" "b"]', "expected ',' or ']'", 15),
        ('title in "a"', "expected '['", 10),
        ('title not "a"', "expected 'in' after 'not'", 11),
        ('page_number == "3"', "expects an integer, got a string", 16),
        ("page_number == 1.5", "expects an integer, got a float", 16),
        ("title == 3", "expects a string, got an integer", 10),
        ("start_time == 'x'", "expects a number", 15),
        ('title in ["a", 1]', "expects a string", 16),
        ("page_number startswith 'x'", "startswith needs a string field", 13),
        ("title startswith 3", "expects a string, got an integer", 18),
        ("title < true", "expects a string, got a boolean", 9),
        ("position == 9223372036854775808", "64-bit", 13),
        ("start_time == 1e400", "out of range", 15),
        ("title == @", "unexpected character '@'", 10),
        ("and", "expected a field name", 1),
    ],
)
def test_errors_name_the_problem_and_column(text: str, fragment: str, column: int) -> None:
    error = syntax_error(text)
    assert fragment in error.message
    assert error.details["column"] == column
    assert f"column {column}" in error.message
    assert error.status == 400 and error.code == "invalid_filter"


@unit
def test_non_string_filter_is_rejected() -> None:
    with pytest.raises(FilterSyntaxError, match="must be a string"):
        parse_filter(42)  # type: ignore[arg-type]


@unit
def test_lone_surrogate_is_rejected() -> None:
    assert "surrogate" in syntax_error('title == "\ud800"').message


# --------------------------------------------------------------------------------------------- limits


def _or_chain(n: int) -> str:
    return " or ".join(f"position == {i}" for i in range(n))


@unit
def test_length_limit() -> None:
    ok = 'title == "' + "x" * (MAX_FILTER_CHARS - 11) + '"'
    assert len(ok) == MAX_FILTER_CHARS and parse_filter(ok) is not None
    assert "longer than 4096" in syntax_error(ok + " ").message
    assert "longer than 4096" in syntax_error(" " * (MAX_FILTER_CHARS + 1)).message


@unit
def test_depth_limit_parentheses_and_not() -> None:
    leaf = "position == 1"
    assert parse_filter("(" * MAX_DEPTH + leaf + ")" * MAX_DEPTH) == Comparison("position", "==", 1)
    error = syntax_error("(" * (MAX_DEPTH + 1) + leaf + ")" * (MAX_DEPTH + 1))
    assert "deeper than 16" in error.message and error.details["column"] == MAX_DEPTH + 1
    assert depth(parse_filter("not " * MAX_DEPTH + leaf)) == MAX_DEPTH  # type: ignore[arg-type]
    assert "deeper than 16" in syntax_error("not " * (MAX_DEPTH + 1) + leaf).message
    assert "deeper than 16" in syntax_error("(" * 2000 + leaf + ")" * 2000).message


@unit
def test_depth_limit_counts_and_or_levels() -> None:
    text = "position == 0"
    for i in range(1, 9):  # each step adds an and level and an or level inside one pair of parentheses
        text = f"position == {i} or position == {i} and ({text})"
    assert depth(parse_filter(text)) == MAX_DEPTH  # type: ignore[arg-type]
    assert "deeper than 16" in syntax_error(f"position == 9 and ({text})").message


@unit
def test_list_item_limit() -> None:
    items = ", ".join(str(i) for i in range(MAX_LIST_ITEMS))
    assert len(parse_filter(f"position in [{items}]").values) == MAX_LIST_ITEMS  # type: ignore[union-attr]
    assert "more than 256 items" in syntax_error(f"position in [{items}, 999]").message


@unit
def test_comparison_limit() -> None:
    assert len(parse_filter(_or_chain(MAX_COMPARISONS)).items) == MAX_COMPARISONS  # type: ignore[union-attr]
    error = syntax_error(_or_chain(MAX_COMPARISONS + 1))
    assert "more than 64 comparisons" in error.message
    assert error.details["column"] == len(_or_chain(MAX_COMPARISONS)) + len(" or ") + 1


# ------------------------------------------------------------------------------------------ injection

INJECTIONS = [
    r'title == "x\" or 1==1"',
    r'title == "x\" or title != \""',
    r"title == 'x\' or title != \''",
    r'title == "x\\" or title != "y"',
    "title == \"x') or (title != '\"",
    r'title in ["a\", \"b"]',
]


@unit
@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_stays_one_string_comparison(text: str) -> None:
    expr = parse_filter(text)
    if text == r'title == "x\\" or title != "y"':  # the backslash is escaped, so the string really ends
        assert isinstance(expr, Or)
        return
    assert isinstance(expr, (Comparison, InList)) and expr.field == T
    milvus = to_milvus(expr)
    # re-reading the Milvus literal gives back exactly the value, and nothing follows it
    body = re.fullmatch(r"\(title (==|in) (.*)\)", milvus)
    assert body is not None
    literal = body.group(2).strip("[]") if isinstance(expr, InList) else body.group(2)
    tokens = re.findall(r'"((?:[^"\\]|\\.)*)"', literal)
    values = expr.values if isinstance(expr, InList) else (expr.value,)
    assert [re.sub(r"\\(.)", r"\1", t) for t in tokens] == list(values)
    assert re.sub(r'"((?:[^"\\]|\\.)*)"', "S", literal) in ("S", "S, S")


@unit
def test_injection_exact_milvus_and_es_output() -> None:
    expr = parse_filter(r'title == "x\" or 1==1"')
    assert expr == Comparison(T, "==", 'x" or 1==1')
    assert to_milvus(expr) == r'(title == "x\" or 1==1")'  # type: ignore[arg-type]
    assert to_elasticsearch(expr) == {"term": {"title": 'x" or 1==1'}}  # type: ignore[arg-type]
    assert to_milvus(Comparison(T, "==", "a'b\\")) == r"(title == " + '"a\\\'b\\\\")'


@unit
@pytest.mark.parametrize("bad", ["a\nb", "a\x00", "\x7f", "\x85", "\ud800"])
def test_translators_reject_control_characters_in_programmatic_asts(bad: str) -> None:
    for expr in (Comparison(T, "==", bad), InList(T, ("ok", bad)), StringMatch(T, "contains", bad)):
        with pytest.raises(FilterSyntaxError):
            to_milvus(expr)
        with pytest.raises(FilterSyntaxError):
            to_elasticsearch(expr)
        with pytest.raises(FilterSyntaxError):
            validate(expr)


@unit
@pytest.mark.parametrize(
    "name", ["title) or (1 == 1", "tenant", "tenant.keyword", 'tenant["x"]', 'meta["a"] or 1', "", "a b"]
)
def test_field_map_cannot_inject_or_reach_scope(name: str) -> None:
    with pytest.raises(ConfigurationError):
        to_milvus(Comparison(T, "==", "x"), {T: name})
    with pytest.raises(ConfigurationError):
        to_elasticsearch(Comparison(T, "==", "x"), {T: name})


@unit
def test_field_specs_refuse_scope_fields() -> None:
    for name, backend in (("tenant", ""), ("mine", "owner_user_id"), ("session", "")):
        with pytest.raises(ConfigurationError):
            FieldSpec(name, "str", backend)
    with pytest.raises(ConfigurationError):
        FieldSpec("x", "list")  # type: ignore[arg-type]
    assert not set(DEFAULT_FIELDS) & {"tenant", "owner_user_id", "workspace_ids", "session_id"}


# ----------------------------------------------------------------------------------------- translators


@unit
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('title == "a"', '(title == "a")'),
        ("page_number >= 2 and start_time < 1.5", "(page_number >= 2 and start_time < 1.5)"),
        ('language in ["en", "fr"]', '(language in ["en", "fr"])'),
        ("position not in [1]", "(position is not null and position not in [1])"),
        ("not position in [1] or position < 0", "((position is not null and position not in [1]) or position < 0)"),
        ("not position not in [1]", "(position in [1])"),
        ('not (title == "a" or title == "b")', '(title != "a" and title != "b")'),
        ('title == "a" or not url == "u" and position == 1', '(title == "a" or (url != "u" and position == 1))'),
        ("not (position < 1 and not position >= 2)", "(position >= 1 or position >= 2)"),
        (
            'not title startswith "a" and position > 0',
            '((title is not null and not (title like "a%")) and position > 0)',
        ),
        ('title startswith "50%_off\\\\"', r'(title like "50\\%\\_off\\\\%")'),
        ('title contains "a\\"b"', r'(title like "%a\"b%")'),
    ],
)
def test_to_milvus_output(text: str, expected: str) -> None:
    assert to_milvus(parse_filter(text)) == expected  # type: ignore[arg-type]


@unit
def test_to_milvus_field_map() -> None:
    expr = parse_filter('title == "a" and page_number == 1')
    assert to_milvus(expr, {"title": "doc_title", "page_number": 'meta["page"]'}) == (  # type: ignore[arg-type]
        '(doc_title == "a" and meta["page"] == 1)'
    )
    with pytest.raises(FilterSyntaxError, match="not filterable on this backend"):
        to_milvus(expr, {"title": "doc_title"})  # type: ignore[arg-type]
    spec = FieldSpec("title", "str", "doc_title")
    assert spec.backend_name == "doc_title" and FieldSpec("url", "str").backend_name == "url"


@unit
def test_to_elasticsearch_output() -> None:
    expr = parse_filter('page_number >= 2 and (language in ["en"] or not title startswith "a*")')
    assert to_elasticsearch(expr, {"page_number": "page", "language": "lang", "title": "title.kw"}) == {  # type: ignore[arg-type]
        "bool": {
            "filter": [
                {"range": {"page": {"gte": 2}}},
                {
                    "bool": {
                        "should": [
                            {"terms": {"lang": ["en"]}},
                            {
                                "bool": {
                                    "filter": [{"exists": {"field": "title.kw"}}],
                                    "must_not": [{"prefix": {"title.kw": {"value": "a*"}}}],
                                }
                            },
                        ],
                        "minimum_should_match": 1,
                    }
                },
            ]
        }
    }
    assert to_elasticsearch(parse_filter('title contains "a*?\\\\"')) == {  # type: ignore[arg-type]
        "wildcard": {"title": {"value": "*a\\*\\?\\\\*"}}
    }
    assert to_elasticsearch(parse_filter("not position < 3")) == {"range": {"position": {"gte": 3}}}  # type: ignore[arg-type]
    assert to_elasticsearch(parse_filter("not position != 3")) == {"term": {"position": 3}}  # type: ignore[arg-type]


def es_eval(query: Mapping[str, Any], doc: Mapping[str, Any]) -> bool:
    """A small interpreter for the Elasticsearch clauses to_elasticsearch emits (keyword/numeric fields)."""
    ((kind, body),) = query.items()
    if kind == "bool":
        ok = all(es_eval(q, doc) for q in body.get("filter", ()))
        ok = ok and not any(es_eval(q, doc) for q in body.get("must_not", ()))
        if "should" in body:
            ok = ok and sum(es_eval(q, doc) for q in body["should"]) >= body["minimum_should_match"]
        return ok
    if kind == "exists":
        return doc.get(body["field"]) is not None
    ((field, arg),) = body.items()
    value = doc.get(field)
    if value is None:
        return False
    same = lambda a, b: isinstance(a, str) == isinstance(b, str) and a == b  # noqa: E731
    if kind == "term":
        return same(value, arg)
    if kind == "terms":
        return any(same(value, a) for a in arg)
    if kind == "range":
        if isinstance(value, str) != isinstance(next(iter(arg.values())), str):
            return False
        ops = {
            "lt": lambda a, b: a < b,
            "lte": lambda a, b: a <= b,
            "gt": lambda a, b: a > b,
            "gte": lambda a, b: a >= b,
        }
        return all(ops[k](value, v) for k, v in arg.items())
    if not isinstance(value, str):
        return False
    if kind == "prefix":
        return value.startswith(arg["value"])
    assert kind == "wildcard"
    pattern = re.sub(
        r"\\(.)|(\*)|(\?)|(.)",
        lambda m: (
            re.escape(m.group(1))
            if m.group(1)
            else ".*"
            if m.group(2)
            else "."
            if m.group(3)
            else re.escape(m.group(4))
        ),
        arg["value"],
        flags=re.S,
    )
    return re.fullmatch(pattern, value, flags=re.S) is not None


# --------------------------------------------------------------------------------------------- matches


@unit
def test_matches_three_valued_logic() -> None:
    rec = {"title": "Intro", "page_number": None, "position": 2}
    assert matches(None, rec)
    assert matches(parse_filter('title startswith "In" and position >= 2'), rec)
    assert not matches(parse_filter("page_number > 3"), rec)
    assert not matches(parse_filter("not page_number > 3"), rec)  # missing: unknown, and not unknown is unknown
    assert not matches(parse_filter("page_number != 3"), rec)
    assert not matches(parse_filter("page_number not in [3]"), rec)
    assert matches(parse_filter("page_number > 3 or position == 2"), rec)  # true or unknown = true
    assert not matches(parse_filter("page_number > 3 and position == 2"), rec)
    assert evaluate(parse_filter("page_number > 3 or position == 9"), rec) is None  # type: ignore[arg-type]
    assert evaluate(parse_filter("page_number > 3 and position == 9"), rec) is False  # type: ignore[arg-type]
    assert not matches(parse_filter('url contains "x"'), {})
    assert not matches(parse_filter('title == "3"'), {"title": 3})  # wrong stored type: unknown, never an error
    assert not matches(parse_filter("position < 3"), {"position": "2"})
    assert matches(parse_filter("start_time == 1"), {"start_time": 1.0})


@unit
def test_record_of_chunk() -> None:
    chunk = Chunk(id="c1", document_id="d1", title="T", text="body", page_number=4, filename="f.pdf")
    rec = record_of_chunk(chunk)
    assert set(rec) == set(DEFAULT_FIELDS)
    assert matches(parse_filter('document_id == "d1" and page_number == 4 and modality == "text"'), rec)
    assert not matches(parse_filter("start_time >= 0"), rec)


@unit
def test_describe_fields() -> None:
    described = describe_fields()
    assert described[0] == {"name": "document_id", "type": "str"}
    assert {"name": "page_number", "type": "int"} in described
    assert {"name": "start_time", "type": "float"} in described
    assert [d["name"] for d in described] == sorted(DEFAULT_FIELDS)


@unit
def test_validate_programmatic_asts() -> None:
    good = And((Comparison("position", ">", 1), Not(InList(T, ("a",)))))
    assert validate(good) is good
    for bad, fragment in [
        (Comparison("tenant", "==", "t"), "scope field"),
        (Comparison("position", "~", 1), "unknown operator"),
        (Comparison("position", "==", True), "expects an integer"),
        (And((Comparison("position", "==", 1),)), "at least two"),
        (InList(T, ()), "empty"),
        ("title == 1", "not a filter expression"),
    ]:
        with pytest.raises(FilterSyntaxError, match=fragment):
            validate(bad)  # type: ignore[arg-type]
    deep: Expr = Comparison("position", "==", 1)
    for _ in range(MAX_DEPTH + 1):
        deep = Not(deep)
    with pytest.raises(FilterSyntaxError, match="deeper"):
        validate(deep)
    many = Or(tuple(Comparison("position", "==", i) for i in range(MAX_COMPARISONS + 1)))
    with pytest.raises(FilterSyntaxError, match="more than 64"):
        validate(many)


# -------------------------------------------------------------------------------- Bedrock RetrievalFilter


@unit
@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"equals": {"key": "title", "value": "a"}}, Comparison(T, "==", "a")),
        ({"notEquals": {"key": "title", "value": "a"}}, Comparison(T, "!=", "a")),
        ({"greaterThan": {"key": "page_number", "value": 3}}, Comparison("page_number", ">", 3)),
        ({"greaterThanOrEquals": {"key": "start_time", "value": 1}}, Comparison("start_time", ">=", 1)),
        ({"lessThan": {"key": "end_time", "value": 2.5}}, Comparison("end_time", "<", 2.5)),
        ({"lessThanOrEquals": {"key": "position", "value": 0}}, Comparison("position", "<=", 0)),
        ({"in": {"key": "language", "value": ["en", "fr"]}}, InList("language", ("en", "fr"))),
        ({"notIn": {"key": "language", "value": ["en"]}}, InList("language", ("en",), True)),
        ({"startsWith": {"key": "url", "value": "https://"}}, StringMatch("url", "prefix", "https://")),
        ({"stringContains": {"key": "title", "value": "at"}}, StringMatch(T, "contains", "at")),
        (
            {
                "andAll": [
                    {"equals": {"key": "title", "value": "a"}},
                    {
                        "orAll": [
                            {"equals": {"key": "position", "value": 1}},
                            {"equals": {"key": "position", "value": 2}},
                        ]
                    },
                ]
            },
            And((Comparison(T, "==", "a"), Or((Comparison("position", "==", 1), Comparison("position", "==", 2))))),
        ),
        ({"equals": {"key": "title", "value": "a"}, "orAll": None}, Comparison(T, "==", "a")),
    ],
)
def test_from_retrieval_filter(obj: Mapping[str, Any], expected: Expr) -> None:
    assert from_retrieval_filter(obj) == expected


@unit
@pytest.mark.parametrize(
    ("obj", "fragment"),
    [
        ({"equals": {"key": "foo", "value": 1}}, "unknown field 'foo' at $.equals.key"),
        ({"equals": {"key": "tenant", "value": "t"}}, "field 'tenant' at $.equals.key is a scope field"),
        (
            {"andAll": [{"equals": {"key": "title", "value": "a"}}, {"equals": {"key": "page_number", "value": "3"}}]},
            "expects an integer, got a string at $.andAll[1].equals.value",
        ),
        ({"andAll": [{"equals": {"key": "title", "value": "a"}}]}, "at least two filters at $.andAll"),
        ({"orAll": "x"}, "at least two filters at $.orAll"),
        ({"listContains": {"key": "title", "value": "a"}}, "listContains is not supported"),
        ({}, "exactly one of"),
        ({"equals": {"key": "title", "value": "a"}, "notEquals": {"key": "title", "value": "b"}}, "exactly one of"),
        ({"like": {"key": "title", "value": "a"}}, "exactly one of"),
        ({"equals": {"key": "title"}}, "exactly 'key' and 'value' at $.equals"),
        ({"equals": {"key": "", "value": "a"}}, "1 to 100 characters at $.equals.key"),
        ({"equals": {"key": 5, "value": "a"}}, "1 to 100 characters at $.equals.key"),
        ({"in": {"key": "title", "value": "a"}}, "needs a list value at $.in.value"),
        ({"in": {"key": "title", "value": []}}, "empty at $.in.value"),
        ({"in": {"key": "position", "value": list(range(MAX_LIST_ITEMS + 1))}}, "more than 256"),
        ({"startsWith": {"key": "position", "value": "1"}}, "needs a string field"),
        ({"equals": {"key": "title", "value": None}}, "got null"),
        ({"equals": {"key": "title", "value": "a\nb"}}, "control character"),
        ({"equals": {"key": "position", "value": True}}, "got a boolean"),
        (
            {"orAll": [{"equals": {"key": "title", "value": "a"}}, [1]]},
            "expected a RetrievalFilter object at $.orAll[1]",
        ),
        ("equals", "expected a RetrievalFilter object at $"),
    ],
)
def test_from_retrieval_filter_errors_name_the_json_path(obj: Any, fragment: str) -> None:
    with pytest.raises(FilterSyntaxError) as info:
        from_retrieval_filter(obj)
    assert fragment in info.value.message
    assert info.value.details.get("path", "$").startswith("$")


@unit
def test_from_retrieval_filter_limits() -> None:
    leaf = {"equals": {"key": "position", "value": 1}}
    deep: dict[str, Any] = leaf
    for _ in range(MAX_DEPTH):
        deep = {"andAll": [deep, leaf]}
    assert depth(from_retrieval_filter(deep)) == MAX_DEPTH
    with pytest.raises(FilterSyntaxError, match="deeper"):
        from_retrieval_filter({"andAll": [deep, leaf]})
    wide = {"orAll": [leaf] * (MAX_COMPARISONS + 1)}
    with pytest.raises(FilterSyntaxError, match="more than 64"):
        from_retrieval_filter(wide)


# ------------------------------------------------------------------------------------ property tests

_STR_POOL = ["", "a", "ab", "A", "b%_", 'x"y', "q'r", "s\\t", "é😀"]
_INT_POOL = [-1, 0, 1, 2, 3]
_FLOAT_POOL = [-0.5, 0.0, 0.5, 1, 1.5, 2]
_FIELDS = sorted(DEFAULT_FIELDS)


def _values(kind: str, pooled: bool) -> st.SearchStrategy[Any]:
    if pooled:
        return st.sampled_from({"str": _STR_POOL, "int": _INT_POOL, "float": _FLOAT_POOL, "bool": [True, False]}[kind])
    if kind == "str":
        return st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=8)
    if kind == "int":
        return st.integers(-(2**63), 2**63 - 1)
    if kind == "bool":
        return st.booleans()
    return st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False))


def _leaves(fields: Mapping[str, FieldSpec], pooled: bool) -> st.SearchStrategy[Expr]:
    def for_field(spec: FieldSpec) -> st.SearchStrategy[Expr]:
        ops = ["==", "!="] if spec.type == "bool" else ["==", "!=", "<", "<=", ">", ">="]
        vals = _values(spec.type, pooled)
        options = [
            st.builds(Comparison, st.just(spec.name), st.sampled_from(ops), vals),
            st.builds(InList, st.just(spec.name), st.lists(vals, min_size=1, max_size=4).map(tuple), st.booleans()),
        ]
        if spec.type == "str":
            options.append(st.builds(StringMatch, st.just(spec.name), st.sampled_from(["prefix", "contains"]), vals))
        return st.one_of(options)

    return st.sampled_from(sorted(fields.values(), key=lambda f: f.name)).flatmap(for_field)


def _exprs(fields: Mapping[str, FieldSpec], pooled: bool) -> st.SearchStrategy[Expr]:
    return st.recursive(
        _leaves(fields, pooled),
        lambda kids: st.one_of(
            st.builds(Not, kids),
            st.lists(kids, min_size=2, max_size=3).map(lambda xs: And(tuple(xs))),
            st.lists(kids, min_size=2, max_size=3).map(lambda xs: Or(tuple(xs))),
        ),
        max_leaves=8,
    ).filter(lambda e: depth(e) <= MAX_DEPTH)


def _records() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {name: st.one_of(st.none(), _values(spec.type, True)) for name, spec in DEFAULT_FIELDS.items()}
    )


@unit
@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs(FIELDS_WITH_BOOL, pooled=False))
def test_round_trip_print_and_parse(expr: Expr) -> None:
    text = format_filter(expr)
    assert parse_filter(text, FIELDS_WITH_BOOL) == expr
    assert validate(expr, FIELDS_WITH_BOOL) is expr


@unit
@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs(DEFAULT_FIELDS, pooled=True), st.lists(_records(), min_size=1, max_size=6))
def test_elasticsearch_translation_agrees_with_matches(expr: Expr, records: list[dict[str, Any]]) -> None:
    query = to_elasticsearch(expr)
    to_milvus(expr)  # never fails on a valid AST
    for rec in records:
        assert es_eval(query, rec) == matches(expr, rec), (format_filter(expr), rec, query)


_TOKENS = [
    "title",
    "page_number",
    "start_time",
    "foo",
    "tenant",
    "and",
    "OR",
    "not",
    "in",
    "startswith",
    "contains",
    "true",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "=",
    "(",
    ")",
    "[",
    "]",
    ",",
    '"a"',
    "'b'",
    '"\\"',
    '"',
    "'",
    "\\",
    "1",
    "-2",
    "1.5e3",
    "1e999",
    "99999999999999999999",
    " ",
    "\x00",
    "é",
    "\ud800",
]


@unit
@settings(max_examples=400, deadline=None, database=None)
@given(
    st.one_of(
        st.text(max_size=60),
        st.lists(st.sampled_from(_TOKENS), max_size=25).map(" ".join),
        st.lists(st.sampled_from(_TOKENS), max_size=25).map("".join),
    )
)
def test_parse_random_text_only_raises_filter_syntax_error(text: str) -> None:
    try:
        expr = parse_filter(text)
    except FilterSyntaxError as error:
        assert error.message
        return
    if expr is not None:  # anything accepted must translate and re-print cleanly
        assert parse_filter(format_filter(expr)) == expr
        to_milvus(expr)
        to_elasticsearch(expr)


# ---------------------------------------------------------------------------------- Milvus integration

ROWS: list[dict[str, Any]] = [
    {
        "document_id": "d1",
        "title": "Intro",
        "url": "https://a/1",
        "filename": "a.pdf",
        "language": "en",
        "modality": "text",
        "page_number": 1,
        "start_time": None,
        "end_time": None,
        "position": 0,
    },
    {
        "document_id": "d1",
        "title": "Intro",
        "url": "https://a/1",
        "filename": "a.pdf",
        "language": "en",
        "modality": "text",
        "page_number": 2,
        "start_time": None,
        "end_time": None,
        "position": 1,
    },
    {
        "document_id": "d2",
        "title": 'x" or 1==1',
        "url": None,
        "filename": "b.txt",
        "language": "fr",
        "modality": "text",
        "page_number": None,
        "start_time": None,
        "end_time": None,
        "position": 0,
    },
    {
        "document_id": "d3",
        "title": "50%_off",
        "url": "http://b",
        "filename": "c.mp3",
        "language": "de",
        "modality": "audio_transcript",
        "page_number": None,
        "start_time": 0.0,
        "end_time": 12.5,
        "position": 0,
    },
    {
        "document_id": "d3",
        "title": "50%XYoff",
        "url": "http://b",
        "filename": "c.mp3",
        "language": "de",
        "modality": "audio_transcript",
        "page_number": None,
        "start_time": 12.5,
        "end_time": 30.0,
        "position": 1,
    },
    {
        "document_id": "d4",
        "title": "back\\slash 'q'",
        "url": "",
        "filename": "d.mp4",
        "language": "",
        "modality": "video_transcript",
        "page_number": None,
        "start_time": 1.5,
        "end_time": 2,
        "position": 0,
    },
    {
        "document_id": "d5",
        "title": "héllo 日本 😀",
        "url": "https://c",
        "filename": "e.png",
        "language": "ja",
        "modality": "image_caption",
        "page_number": 3,
        "start_time": None,
        "end_time": None,
        "position": 0,
    },
    {
        "document_id": "d6",
        "title": "a",
        "url": "https://a/2",
        "filename": "f.pdf",
        "language": "en",
        "modality": "text",
        "page_number": 10,
        "start_time": None,
        "end_time": None,
        "position": 2,
    },
    {
        "document_id": "d6",
        "title": "ab",
        "url": "https://a/2",
        "filename": "f.pdf",
        "language": "en",
        "modality": "text",
        "page_number": -1,
        "start_time": None,
        "end_time": None,
        "position": 3,
    },
    {
        "document_id": "d7",
        "title": "",
        "url": None,
        "filename": "",
        "language": "en",
        "modality": "text",
        "page_number": 0,
        "start_time": -0.5,
        "end_time": 0.5,
        "position": 4,
    },
]

MILVUS_FILTERS = [
    'title == "Intro"',
    r'title == "x\" or 1==1"',
    r'title == "back\\slash \'q\'"',
    'title startswith "50%_"',
    'title contains "%"',
    'title contains "\\\\"',
    'title contains "日本"',
    "page_number > 1",
    "not page_number > 1",
    "page_number != 2",
    "page_number not in [1, 2]",
    'url != "http://b"',
    'not (url startswith "https" or modality == "text")',
    "start_time >= 0 and end_time <= 12.5",
    "start_time == 0 or position >= 3",
    'language in ["en", "de"] and not (title == "a" or page_number < 1)',
    'title > "a" and title <= "b"',
    'not not document_id == "d3"',
    'url == ""',
    "end_time > 1 or page_number > 2 and not position == 0",
]


@pytest.fixture(scope="module")
def milvus(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pymilvus = pytest.importorskip("pymilvus")
    pytest.importorskip("milvus_lite")
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    DataType = pymilvus.DataType
    client = pymilvus.MilvusClient(str(tmp_path_factory.mktemp("milvus") / "m.db"))
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    for name, spec in DEFAULT_FIELDS.items():
        nullable = name in ("url", "page_number", "start_time", "end_time")
        if spec.type == "str":
            schema.add_field(name, DataType.VARCHAR, max_length=256, nullable=nullable)
        elif spec.type == "int":
            schema.add_field(name, DataType.INT64, nullable=nullable)
        else:
            schema.add_field(name, DataType.DOUBLE, nullable=nullable)
    index = client.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="L2")
    client.create_collection("chunks", schema=schema, index_params=index)
    client.insert("chunks", [{"id": i, "vector": [0.0, 1.0], **row} for i, row in enumerate(ROWS)])
    client.flush("chunks")
    yield client
    client.close()


def _milvus_ids(client: Any, expr: Expr) -> set[int]:
    return {row["id"] for row in client.query("chunks", filter=to_milvus(expr), output_fields=["id"])}


@pytest.mark.integration
@pytest.mark.parametrize("text", MILVUS_FILTERS)
def test_milvus_lite_selects_what_matches_selects(milvus: Any, text: str) -> None:
    expr = parse_filter(text)
    assert expr is not None
    expected = {i for i, row in enumerate(ROWS) if matches(expr, row)}
    assert _milvus_ids(milvus, expr) == expected
    assert {i for i, row in enumerate(ROWS) if es_eval(to_elasticsearch(expr), row)} == expected


@pytest.mark.integration
def test_milvus_lite_injection_selects_one_row(milvus: Any) -> None:
    assert _milvus_ids(milvus, parse_filter(r'title == "x\" or 1==1"')) == {2}  # type: ignore[arg-type]


@pytest.mark.integration
def test_milvus_lite_agrees_on_random_filters(milvus: Any) -> None:
    rng = random.Random(20240601)
    pools = {
        n: sorted({r[n] for r in ROWS if r[n] is not None}, key=repr) + (["zz", "%"] if s.type == "str" else [7])
        for n, s in DEFAULT_FIELDS.items()
    }

    def leaf() -> Expr:
        name = rng.choice(_FIELDS)
        pick = lambda: rng.choice(pools[name])  # noqa: E731
        roll = rng.random()
        if roll < 0.5:
            return Comparison(name, rng.choice(["==", "!=", "<", "<=", ">", ">="]), pick())
        if roll < 0.8 or DEFAULT_FIELDS[name].type != "str":
            return InList(name, tuple(pick() for _ in range(rng.randint(1, 3))), rng.random() < 0.5)
        value = pick()
        return StringMatch(name, rng.choice(["prefix", "contains"]), value[: rng.randint(0, len(value))])

    def expr(level: int) -> Expr:
        roll = rng.random()
        if level > 3 or roll < 0.35:
            return leaf()
        if roll < 0.55:
            return Not(expr(level + 1))
        items = tuple(expr(level + 1) for _ in range(rng.randint(2, 3)))
        return And(items) if roll < 0.8 else Or(items)

    for _ in range(60):
        e = validate(expr(0))
        expected = {i for i, row in enumerate(ROWS) if matches(e, row)}
        assert _milvus_ids(milvus, e) == expected, format_filter(e)
