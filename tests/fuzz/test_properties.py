"""Property-based tests that complete the ones next to each module: the snippet builder (first occurrences,
nothing missed, source order), ``fit_within`` (never over the limit, order kept, count of trimmed results),
SSE framing (user text cannot forge events; ``_delta_sse`` ids and frame sizes), and the filter language
(bounded parse time, no recursion error at any depth, string literals that never end early in Milvus)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_bridge.client.sse import iter_json_events, parse_sse
from assistant_bridge.core.custom_search import fit_within
from assistant_bridge.core.filters import MAX_DEPTH, MAX_FILTER_CHARS, Comparison, StringMatch, parse_filter, to_milvus
from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.snippets import build_snippets
from assistant_bridge.core.textnorm import normalize_for_dedup
from assistant_bridge.errors import FilterSyntaxError
from assistant_bridge.streaming.delta import MIN_EVENT_BYTES
from assistant_bridge.streaming.framing import encode_event, frame
from tests.scaling import assert_linear

pytestmark = pytest.mark.unit
FAST = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# -- snippets ---------------------------------------------------------------------------------------------

# passages that collide after normalisation (case, spacing, trailing punctuation), blanks, CJK, emoji
PASSAGE = st.one_of(
    st.sampled_from(
        [
            "Reset it.",
            "reset it",
            "  RESET   it… ",
            "...",
            "   ",
            "",
            "払い戻し。",
            "払い戻し",
            "Use the VPN",
            "use the vpn!",
            "😀",
            "a",
            "A",
            "b",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=15),
)
RESULT = st.builds(
    lambda title, body, hl: SearchResult(title=title, body=body, highlight_body=hl),
    st.text(max_size=8),
    PASSAGE,
    st.one_of(st.none(), st.lists(PASSAGE, max_size=4).map(tuple)),
)


def _sources(result: SearchResult) -> tuple[str, ...]:
    return tuple(result.highlight_body) if result.highlight_body else (result.body,)


@FAST
@given(st.lists(RESULT, max_size=8), st.integers(1, 7))
def test_snippets_are_the_first_occurrences_in_source_order(results: list[SearchResult], cap: int) -> None:
    out = build_snippets(results, max_snippets=cap)
    walk = [(i, j, raw) for i, res in enumerate(results) for j, raw in enumerate(_sources(res))]
    positions = []
    for snip in out:
        res = results[snip.result_index]
        assert snip.title == res.title
        j = next(
            j
            for j, raw in enumerate(_sources(res))
            if raw.strip() == snip.text and (snip.result_index, j) not in positions
        )
        positions.append((snip.result_index, j))
    assert positions == sorted(positions) and len(out) <= cap
    keys = [normalize_for_dedup(s.text) for s in out]
    assert all(keys) and len(set(keys)) == len(keys)
    # the first passage carrying each key is the one kept, and nothing is missed below the cap
    first: dict[str, tuple[int, int]] = {}
    for i, j, raw in walk:
        key = normalize_for_dedup(raw)
        if key:
            first.setdefault(key, (i, j))
    expected = sorted(first.items(), key=lambda kv: kv[1])[:cap]
    assert [pos for _, pos in expected] == positions


# -- fit_within -------------------------------------------------------------------------------------------

RESULTS = st.lists(
    st.fixed_dictionaries(
        {
            "title": st.text(max_size=300),
            "body": st.text(max_size=3000),
            "result_metadata": st.fixed_dictionaries({"score": st.floats(0, 1)}),
        },
        optional={
            "highlight": st.fixed_dictionaries({"body": st.lists(st.text(max_size=500), max_size=3)}),
            "url": st.text(max_size=100),
        },
    ),
    max_size=20,
)


def _size(body: Any) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


@FAST
@given(RESULTS, st.integers(0, 60_000))
def test_fit_within_never_exceeds_the_limit_and_keeps_the_order(results: list[dict[str, Any]], limit: int) -> None:
    body, trimmed = fit_within(results, limit)
    kept = body["search_results"]
    assert _size(body) <= limit or kept == []
    if _size({"search_results": results}) <= limit:
        assert kept == results and trimmed == 0
        return
    assert len(kept) <= len(results)
    if not kept:
        assert trimmed == len(results)
        return
    assert kept[:-1] == results[: len(kept) - 1]  # a prefix, in order
    shortened = 0
    last, original = kept[-1], results[len(kept) - 1]
    if last != original:
        shortened = 1
        assert original["body"].startswith(last["body"]) and original["title"].startswith(last["title"])
    assert trimmed == len(results) - len(kept) + shortened


# -- SSE framing ------------------------------------------------------------------------------------------

HOSTILE = st.lists(
    st.sampled_from(
        list('ab é漢😀:\\"{}')
        + ["\n", "\r", "\r\n", "\n\n", "event: forged\n", "data: x\n\n", "id: 99\n", ": comment\n", "retry: 1\n"]
    ),
    max_size=60,
).map("".join)


@FAST
@given(HOSTILE)
def test_user_text_in_an_event_cannot_forge_another_event(text: str) -> None:
    wire = frame("tool_partial_update", json.dumps({"content": text}), id="3")
    events = list(parse_sse([wire]))
    assert [(e.event, e.id) for e in events] == [("tool_partial_update", "3")]
    assert json.loads(events[0].data) == {"content": text}
    raw = frame("message", text)  # even raw, non-JSON text stays one event with the same lines
    parsed = list(parse_sse([raw]))
    assert len(parsed) <= 1 and (not parsed or parsed[0].data == "\n".join(re.split(r"\r\n|\r|\n", text)))


JSON_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_DATA, st.integers(MIN_EVENT_BYTES, 1500), st.integers(0, 10**6))
def test_split_events_carry_the_id_on_their_last_frame_only(data: Any, limit: int, event_id: int) -> None:
    wire = encode_event("tool_end", {"response": data, "pad": "é😀" * 200}, max_bytes=limit, id=str(event_id))
    frames = list(parse_sse([wire]))
    assert all(len(f.data.encode()) <= limit for f in frames)
    ids = [f.id for f in frames]
    assert ids[-1] == str(event_id)
    assert all(i is None for i in ids[:-1]) or len(frames) == 1
    assert list(iter_json_events([wire])) == [("tool_end", {"response": data, "pad": "é😀" * 200})]


# -- filter language --------------------------------------------------------------------------------------

TOKENS = [
    "(",
    ")",
    "not ",
    " and ",
    " or ",
    "title",
    " == ",
    '"x"',
    "'y'",
    "[",
    "]",
    ",",
    " in ",
    "page_number",
    " >= ",
    "1",
    "-2.5e3",
    '"\\"',
    "\\",
    "startswith",
    "contains",
    " ",
    "é",
    "\x00",
]


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=100, max_size=1200).map("".join))
def test_long_adversarial_filters_parse_or_fail_cleanly(text: str) -> None:
    try:
        parse_filter(text[:MAX_FILTER_CHARS])
    except FilterSyntaxError:
        pass


def test_parsing_time_grows_linearly_with_the_filter() -> None:
    """Tokens that all lex, so the whole text is read before the parser fails or succeeds."""
    lexing = [t for t in TOKENS if t not in ('"\\"', "\\", "é", "\x00")]
    text = "".join(lexing[(i * 7) % len(lexing)] for i in range(2000))

    def parse(n: int) -> None:
        try:
            parse_filter(text[:n])
        except FilterSyntaxError:
            pass

    assert_linear(parse, MAX_FILTER_CHARS // 10)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH + 1, 200, 1000, 2000])
def test_any_nesting_depth_is_a_clean_answer(depth: int) -> None:
    for text in ("(" * depth + 'title == "a"' + ")" * depth, "not " * depth + 'title == "a"'):
        if len(text) > MAX_FILTER_CHARS:
            text = text[:MAX_FILTER_CHARS]
        try:
            assert parse_filter(text) is not None
            assert depth < MAX_DEPTH
        except FilterSyntaxError as err:
            assert err.message


def _milvus_string(expr: str, start: int) -> tuple[str, int]:
    """Decode the Milvus string literal starting at ``expr[start]`` (a quote); returns it and the index after."""
    assert expr[start] == '"'
    out, i = [], start + 1
    while expr[i] != '"':
        if expr[i] == "\\":
            i += 1
        out.append(expr[i])
        i += 1
    return "".join(out), i + 1


VALUES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)


@FAST
@given(VALUES)
def test_milvus_string_literals_hold_the_whole_value(value: str) -> None:
    expr = to_milvus(Comparison("title", "==", value))
    assert expr.startswith('(title == "')
    decoded, end = _milvus_string(expr, len("(title == "))
    assert decoded == value and expr[end:] == ")"  # the literal ends where the expression ends
    like = to_milvus(StringMatch("title", "prefix", value))
    pattern, end = _milvus_string(like, len("(title like "))
    assert like[end:] == ")"
    unescaped = re.sub(r"\\(.)", r"\1", pattern[:-1])  # LIKE escapes: \% \_ \\ ; the trailing % is the wildcard
    assert pattern.endswith("%") and unescaped == value
    assert not re.search(r"(?<!\\)[%_]", pattern[:-1].replace("\\\\", ""))  # no wildcard from the value
