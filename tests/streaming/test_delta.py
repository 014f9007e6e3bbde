"""The ``_delta_sse`` splitter (server) and reassembler (client): sizes, order, surrogates, round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_bridge.client.sse import DeltaReassembler, iter_json_events, parse_sse
from assistant_bridge.streaming.delta import MIN_EVENT_BYTES, dumps, split_event, split_payload, wire_size
from assistant_bridge.streaming.framing import encode_event

pytestmark = pytest.mark.unit

# text with ASCII, accents, CJK, emoji (astral), JSON specials and control characters
TEXT = st.text(
    alphabet=st.sampled_from(list('ab "\\/\n\t\x01é漢字😀𝄞\u2028<>')) | st.characters(blacklist_categories=("Cs",)),
    max_size=400,
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | TEXT,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(TEXT, inner, max_size=6),
    max_leaves=40,
)


def _roundtrip(event: str, data: Any, limit: int) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    assembler = DeltaReassembler()
    for piece in split_event(event, data, limit):
        assert len(piece.payload.encode("utf-8")) <= limit
        out.extend(assembler.feed(piece.event, json.loads(piece.payload)))
    assert assembler.pending == 0
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=JSON_VALUES, limit=st.integers(MIN_EVENT_BYTES, 4096))
def test_split_then_reassemble_gives_the_original_event(data: Any, limit: int) -> None:
    assert _roundtrip("tool_end", data, limit) == [("tool_end", data)]


@settings(max_examples=100, deadline=None)
@given(text=TEXT, copies=st.integers(1, 40), limit=st.integers(MIN_EVENT_BYTES, 2048))
def test_large_multibyte_payloads_split_within_the_limit(text: str, copies: int, limit: int) -> None:
    data = {"response": (text + "漢😀é") * copies}
    pieces = split_event("tool_end", data, limit)
    if len(dumps(data).encode()) <= limit:
        assert [p.event for p in pieces] == ["tool_end"]
    else:
        assert {p.event for p in pieces} == {"tool_end_delta_sse"}
        envelopes = [json.loads(p.payload) for p in pieces]
        assert [e["chunk_index"] for e in envelopes] == list(range(len(pieces)))
        assert {e["total_chunks"] for e in envelopes} == {len(pieces)}
        assert [e["is_last_chunk"] for e in envelopes] == [False] * (len(pieces) - 1) + [True]
        assert len({e["chunk_id"] for e in envelopes}) == 1
        assert "".join(e["chunk_data"] for e in envelopes) == dumps(data)
    assert _roundtrip("tool_end", data, limit) == [("tool_end", data)]


@settings(max_examples=40, deadline=None)
@given(data=JSON_VALUES, limit=st.integers(MIN_EVENT_BYTES, 1500), seed=st.randoms(use_true_random=False))
def test_fragments_arriving_out_of_order_or_twice_still_reassemble(data: Any, limit: int, seed: Any) -> None:
    pieces = [json.loads(p.payload) for p in split_event("tool_update", {"blob": data, "pad": "x" * 900}, limit)]
    if len(pieces) == 1:
        return
    shuffled = pieces + [seed.choice(pieces)]
    seed.shuffle(shuffled)
    assembler = DeltaReassembler()
    out: list[tuple[str, Any]] = []
    for envelope in shuffled:
        out.extend(assembler.feed("tool_update_delta_sse", envelope))
    assert out[0] == ("tool_update", {"blob": data, "pad": "x" * 900})


def test_surrogate_pairs_are_never_split() -> None:
    # a raw surrogate pair as two code points (as produced by some decoders) must stay in one fragment
    pair = "\ud83d\ude00"
    text = json.dumps({"t": pair * 400}, ensure_ascii=False)
    pieces = split_payload("tool_end", text, MIN_EVENT_BYTES)
    assert len(pieces) > 1
    for p in pieces:
        fragment = json.loads(p.payload)["chunk_data"]
        assert not ("\ud800" <= fragment[-1] <= "\udbff")
        assert not ("\udc00" <= fragment[0] <= "\udfff")
    # astral characters survive a JSON round trip through the fragments
    data = {"emoji": "😀𝄞" * 500}
    assert _roundtrip("tool_end", data, 600) == [("tool_end", data)]


def test_lone_surrogates_are_escaped_and_valid_utf8() -> None:
    data = {"t": "a\ud800b" * 300}
    frames = encode_event("tool_end", data, max_bytes=MIN_EVENT_BYTES)
    frames.decode("utf-8")  # must not raise
    events = list(iter_json_events([frames]))
    assert events == [("tool_end", data)]


def test_wire_size_matches_json_encoding() -> None:
    for text in ["plain", 'quo"te\\', "ctl\x01\x1f\n", "é漢😀", "\u2028", "\ud800"]:
        encoded = dumps(text)
        assert wire_size(text) == len(encoded.encode()) - 2


def test_small_limits_are_refused() -> None:
    with pytest.raises(ValueError):
        split_event("tool_end", {"x": 1}, MIN_EVENT_BYTES - 1)


def test_small_events_pass_unchanged() -> None:
    (piece,) = split_event("tool_update", {"phase": "RETRIEVAL"}, 16384)
    assert piece.event == "tool_update" and json.loads(piece.payload) == {"phase": "RETRIEVAL"}


def test_reassembler_falls_back_to_is_last_chunk_without_total() -> None:
    assembler = DeltaReassembler()
    parts = ['{"a":', "[1,2", "]}"]
    out: list[tuple[str, Any]] = []
    for i, part in enumerate(parts):
        out += assembler.feed(
            "x_delta_sse",
            {
                "chunk_id": "g",
                "chunk_index": i,
                "original_event_type": "x",
                "chunk_data": part,
                "is_last_chunk": i == 2,
            },
        )
    assert out == [("x", {"a": [1, 2]})]


def test_reassembler_redispatches_recursively_and_maps_final_result() -> None:
    inner = split_event("final_result", {"response": "é" * 2000}, 600)
    outer_text = dumps(
        {
            "chunk_id": "g0",
            "chunk_index": 0,
            "total_chunks": 1,
            "original_event_type": inner[0].event,
            "chunk_data": inner[0].payload,
            "is_last_chunk": True,
        }
    )
    assembler = DeltaReassembler()
    out = assembler.feed(inner[0].event + "_delta_sse", json.loads(outer_text))
    for piece in inner[1:]:
        out += assembler.feed(piece.event, json.loads(piece.payload))
    assert out == [("tool_end", {"response": "é" * 2000})]


def test_reassembler_ttl_and_buffer_guards() -> None:
    now = [0.0]
    assembler = DeltaReassembler(ttl_seconds=10, max_buffer_bytes=4000, clock=lambda: now[0])
    assert (
        assembler.feed(
            "x_delta_sse",
            {"chunk_id": "old", "chunk_index": 0, "total_chunks": 2, "original_event_type": "x", "chunk_data": "[1,"},
        )
        == []
    )
    now[0] = 11.0
    assert (
        assembler.feed(
            "x_delta_sse",
            {"chunk_id": "new", "chunk_index": 0, "total_chunks": 2, "original_event_type": "x", "chunk_data": "["},
        )
        == []
    )
    assert assembler.pending == 1 and assembler.dropped == 1
    assert (
        assembler.feed(
            "x_delta_sse",
            {
                "chunk_id": "big",
                "chunk_index": 0,
                "total_chunks": 2,
                "original_event_type": "x",
                "chunk_data": "x" * 2000,
            },
        )
        == []
    )
    assert assembler.dropped == 2
    assert assembler.feed("x_delta_sse", {"chunk_id": "bad", "chunk_index": "0"}) == []
    assert assembler.dropped == 3


@settings(max_examples=60, deadline=None)
@given(data=JSON_VALUES, limit=st.integers(MIN_EVENT_BYTES, 2000), cuts=st.lists(st.integers(1, 64), max_size=30))
def test_stream_bytes_cut_anywhere_parse_back(data: Any, limit: int, cuts: list[int]) -> None:
    stream = (
        b": hello\n\n"
        + encode_event("tool_update", {"phase": "X"}, max_bytes=limit, id="1")
        + encode_event("tool_end", {"d": data, "pad": "é" * 300}, max_bytes=limit, id="2")
    )
    pieces, pos = [], 0
    for cut in cuts:
        pieces.append(stream[pos : pos + cut])
        pos += cut
    pieces.append(stream[pos:])
    assert list(iter_json_events(pieces)) == [
        ("tool_update", {"phase": "X"}),
        ("tool_end", {"d": data, "pad": "é" * 300}),
    ]


def test_parser_handles_crlf_multiline_ids_and_comments() -> None:
    raw = [b"event: a\r\nid: 7\r\ndata: line1\r", b"\ndata: line2\r\n\r\n: ping\n\nretry: 10\ndata: x\n\n"]
    frames = list(parse_sse(raw))
    assert [(f.event, f.data, f.id) for f in frames] == [("a", "line1\nline2", "7"), ("message", "x", "7")]
    assert frames[1].retry == 10
