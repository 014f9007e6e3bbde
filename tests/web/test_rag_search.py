"""``POST /v1/tools/rag_search/execute`` synchronously and streamed, and its request errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.generators import FakeGenerator
from assistant_bridge.tools.registry import RAG_SEARCH
from assistant_bridge.validation import validate
from tests.tools.helpers import SlowGenerator, components, events_of, execute, ingest, make_app, wait_status

pytestmark = pytest.mark.unit
TAG = re.compile(r'<citation id="([^"]+)">\[(\d+)\]</citation>')


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return make_app(tmp_path)


@pytest.fixture
def c(app: Any) -> Any:
    with app.test_client() as client:
        yield client


@pytest.fixture
def docs(c: Any) -> dict[str, str]:
    return {
        "remote": ingest(c, "Remote work", "Employees may work remotely two days a week. Managers approve it."),
        "probation": ingest(c, "Probation", "The probation period lasts six months. Remote work starts after it."),
        "expenses": ingest(c, "Expenses", "Expense reports are due on the fifth of each month."),
    }


def test_sync_result_matches_the_schema_and_cites_its_contexts(c: Any, docs: dict[str, str]) -> None:
    resp = execute(c, {"query": "remote work days"})
    assert resp.status_code == 200, resp.get_json()
    body = validate("rag_search_result", resp.get_json())
    assert body["outcome"] == "answer" and body["contexts"]
    ranks = {ctx["rank"]: ctx for ctx in body["contexts"]}
    assert sorted(ranks) == list(range(1, len(ranks) + 1))
    cited = TAG.findall(body["response"])
    assert cited and body["sources_used"] == sorted({int(n) for _, n in cited})
    for chunk_id, n in cited:
        assert ranks[int(n)]["chunk_id"] == chunk_id and ranks[int(n)]["used_in_response"]
    assert {ctx["document_id"] for ctx in body["contexts"]} <= set(docs.values())
    record = c.get(f"/v1/tool-executions/{body['execution_id']}").get_json()
    assert (record["status"], record["mode"], record["outputs"]) == ("completed", "sync", body)


def test_tool_id_form_and_unknown_tools(c: Any, docs: dict[str, str]) -> None:
    assert c.post(f"/v1/tools/{RAG_SEARCH.id}/execute", json={"inputs": {"query": "remote"}}).status_code == 200
    for name in ("web_search", "rag-search", "00000000-0000-0000-0000-000000000000"):
        resp = c.post(f"/v1/tools/{name}/execute", json={"inputs": {"query": "remote"}})
        assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "not_found"
    listed = c.get("/v1/tools").get_json()
    assert [t["name"] for t in listed["tools"]] == ["rag_search"]
    one = c.get("/v1/tools/rag_search").get_json()
    assert one["id"] == RAG_SEARCH.id and "query" in one["input_schema"]["properties"]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "$"),
        ({"inputs": {}}, "$.inputs"),
        ({"inputs": {"query": ""}}, "$.inputs.query"),
        ({"inputs": {"query": "   "}}, "$.inputs.query"),
        ({"inputs": {"query": 42}}, "$.inputs.query"),
        ({"inputs": {"query": "q", "document_ids": ["not-a-uuid"]}}, "$.inputs.document_ids[0]"),
        ({"inputs": {"query": "q", "document_ids": "6f1c1c1e-4a55-4d3b-9a53-0b7a3f0e2b11"}}, "$.inputs.document_ids"),
        ({"inputs": {"query": "q", "documents": []}}, "$.inputs"),
        ({"inputs": {"query": "q", "session_id": "bad id!"}}, "$.inputs.session_id"),
        (
            {
                "inputs": {"query": "q"},
                "session_id": "a",
            },
            None,
        ),
    ],
)
def test_bad_requests_are_4xx_naming_the_field(c: Any, body: dict[str, Any], path: str | None) -> None:
    resp = c.post("/v1/tools/rag_search/execute", json=body)
    if path is None:
        assert resp.status_code == 200
        return
    assert resp.status_code == 400, resp.get_json()
    error = resp.get_json()["error"]
    assert error["code"] == "validation_error" and error["details"]["path"] == path


def test_bad_filter_mode_and_body_are_rejected_before_any_work(c: Any) -> None:
    resp = execute(c, {"query": "q", "filter": 'owner == "bob"'})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "invalid_filter"
    assert c.post("/v1/tools/rag_search/execute?mode=later", json={"inputs": {"query": "q"}}).status_code == 400
    resp = c.post("/v1/tools/rag_search/execute", data="{not json", content_type="application/json")
    assert resp.status_code == 400
    resp = c.post("/v1/tools/rag_search/execute", json={"inputs": {"query": "x" * 9000}})
    assert resp.status_code == 400
    resp = c.post("/v1/tools/rag_search/execute", data="x" * 2_000_000, content_type="application/json")
    assert resp.status_code == 413


def test_stream_sends_phases_partials_and_the_final_result(c: Any, docs: dict[str, str]) -> None:
    resp = execute(c, {"query": "remote work days"}, mode="stream")
    assert resp.status_code == 200
    assert resp.headers["Cache-Control"] == "no-cache" and resp.headers["X-Accel-Buffering"] == "no"
    events = events_of(resp)
    names = [e for e, _ in events]
    assert names[:4] == ["tool_update"] * 4 and names[-1] == "tool_end"
    assert set(names[4:-1]) == {"tool_partial_update"}
    for name, data in events:
        validate_event(name, data)
    phases = [d["phase"] for n, d in events if n == "tool_update"]
    assert phases == ["SEARCH_PREPARATION", "RETRIEVAL", "RERANKING", "COMPILING_RESULTS"]
    retrieval = events[1][1]["data"]["retrieved_count"]
    rerank = events[2][1]["data"]
    final = events[-1][1]
    assert retrieval == rerank["initial_count"] == 3 and rerank["kept_count"] == len(final["contexts"])
    assert "".join(d["content"] for n, d in events if n == "tool_partial_update") == final["response"]
    raw = resp.get_data(as_text=True)
    assert [int(i) for i in re.findall(r"^id: (\d+)$", raw, re.M)] == list(range(1, len(events) + 1))
    record = c.get(f"/v1/tool-executions/{final['execution_id']}").get_json()
    assert (record["status"], record["mode"]) == ("completed", "stream")
    assert resp.headers["X-Execution-ID"] == final["execution_id"]


def validate_event(name: str, data: Any) -> None:
    from jsonschema import Draft202012Validator

    from assistant_bridge.validation import registry

    schema = {"$ref": f"rag_search_events.schema.json#/$defs/{name}"}
    Draft202012Validator(schema, registry=registry()).validate(data)


def test_accept_with_low_priority_or_wildcard_stays_json(c: Any, docs: dict[str, str]) -> None:
    for accept in ("*/*", "application/json", "text/event-stream;q=0, application/json"):
        resp = c.post("/v1/tools/rag_search/execute", json={"inputs": {"query": "remote"}}, headers={"Accept": accept})
        assert resp.mimetype == "application/json", accept
    resp = c.post("/v1/tools/rag_search/execute?mode=stream", json={"inputs": {"query": "remote"}})
    assert resp.mimetype == "text/event-stream"


def test_idk_and_no_results_are_answers_too(tmp_path: Path) -> None:
    app = make_app(tmp_path, components(pre=0.1, idk_message="I don't know that."))
    with app.test_client() as c:
        resp = execute(c, {"query": "anything"})
        body = resp.get_json()
        assert (body["outcome"], body["response"], body["sources_used"]) == ("no_results", body["response"], [])
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        events = events_of(execute(c, {"query": "remote"}, mode="stream"))
        final = events[-1][1]
        assert (final["outcome"], final["idk_reason"], final["response"]) == (
            "idk",
            "retrieval_confidence",
            "I don't know that.",
        )
        assert "".join(d["content"] for n, d in events if n == "tool_partial_update") == "I don't know that."


def test_document_ids_narrow_the_search(c: Any, docs: dict[str, str]) -> None:
    body = execute(c, {"query": "remote work", "document_ids": [docs["expenses"]]}).get_json()
    assert {ctx["document_id"] for ctx in body["contexts"]} == {docs["expenses"]}
    upper = execute(c, {"query": "remote work", "document_ids": [docs["remote"].upper()]}).get_json()
    assert {ctx["document_id"] for ctx in upper["contexts"]} == {docs["remote"]}
    unknown = execute(c, {"query": "remote", "document_ids": ["6f1c1c1e-4a55-4d3b-9a53-0b7a3f0e2b11"]}).get_json()
    assert (unknown["outcome"], unknown["contexts"]) == ("no_results", [])
    everything = execute(c, {"query": "remote work", "document_ids": []}).get_json()
    assert len(everything["contexts"]) == 3


def test_filter_narrows_the_search(c: Any, docs: dict[str, str]) -> None:
    body = execute(c, {"query": "remote work", "filter": 'title == "Probation"'}).get_json()
    assert {ctx["document_id"] for ctx in body["contexts"]} == {docs["probation"]}


def test_generator_failure_is_503_json_or_an_error_event(tmp_path: Path) -> None:
    app = make_app(tmp_path, components(FakeGenerator(error="model endpoint timed out")))
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        resp = execute(c, {"query": "remote"})
        assert resp.status_code == 503 and resp.get_json()["error"]["code"] == "generator_error"
        events = events_of(execute(c, {"query": "remote"}, mode="stream"))
        assert events[-1] == ("error", {"message": "model endpoint timed out", "code": "generator_error"})
        assert [n for n, _ in events].count("error") == 1


def test_backend_outage_is_an_error_event(tmp_path: Path) -> None:
    from assistant_bridge.errors import BackendUnavailable

    app = make_app(tmp_path)
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        app.extensions["services"].backend.fail_next = BackendUnavailable("search backend unreachable")
        events = events_of(execute(c, {"query": "remote"}, mode="stream"))
        assert [n for n, _ in events] == ["tool_update", "error"]
        assert events[-1][1]["code"] == "backend_unavailable"


def test_large_results_are_split_into_delta_events_and_reassemble(tmp_path: Path) -> None:
    long_text = " ".join(f"Remote work rule number {i} says employees décident 在家 😀." for i in range(200))
    app = make_app(tmp_path, tools={"sse_max_event_bytes": 1024})
    with app.test_client() as c:
        ingest(c, "Handbook", long_text)
        resp = execute(c, {"query": "remote work rule"}, mode="stream")
        raw = resp.get_data()
        assert b"event: tool_end_delta_sse" in raw
        for line in raw.split(b"\n"):
            if line.startswith(b"data: "):
                assert len(line) - 6 <= 1024
        events = events_of(resp)
        assert events[-1][0] == "tool_end" and events[-1][1]["contexts"][0]["title"] == "Handbook"
        assert "".join(d["content"] for n, d in events if n == "tool_partial_update") == events[-1][1]["response"]


def test_an_event_over_the_split_limit_becomes_an_error_event(tmp_path: Path) -> None:
    app = make_app(tmp_path, tools={"sse_max_event_bytes": 600, "sse_max_split_bytes": 900})
    with app.test_client() as c:
        ingest(c, "Handbook", "Remote work is allowed. " * 40)
        resp = execute(c, {"query": "remote work"}, mode="stream")
        events = events_of(resp)
        assert events[-1][0] == "error" and events[-1][1]["code"] == "event_too_large"
        assert "execution details" in events[-1][1]["message"]
        record = c.get(f"/v1/tool-executions/{resp.headers['X-Execution-ID']}").get_json()
        assert record["status"] == "completed" and record["outputs"]["contexts"]  # the result is kept


def test_heartbeats_on_a_slow_stream(tmp_path: Path) -> None:
    app = make_app(tmp_path, components(SlowGenerator(delay=0.02, deltas=15)), tools={"heartbeat_seconds": 0.05})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        resp = execute(c, {"query": "remote"}, mode="stream")
        raw = resp.get_data(as_text=True)
        assert ": keep-alive\n" in raw
        assert events_of(resp)[-1][0] == "tool_end"


def test_a_stream_over_its_time_limit_ends_with_an_error_and_cancels(tmp_path: Path) -> None:
    slow = SlowGenerator(delay=0.05, deltas=200)
    app = make_app(tmp_path, components(slow), tools={"stream_max_seconds": 0.3, "heartbeat_seconds": 0.1})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        resp = execute(c, {"query": "remote"}, mode="stream")
        events = events_of(resp)
        assert events[-1][0] == "error" and events[-1][1]["code"] == "stream_timeout"
        assert slow.closed.wait(5)
        record = wait_status(c, resp.headers["X-Execution-ID"])
        assert (record["status"], record["error"]) == ("cancelled", "the stream reached its time limit")


def test_a_client_that_disconnects_stops_the_work(tmp_path: Path) -> None:
    import threading
    import time

    slow = SlowGenerator(delay=0.02, deltas=10_000)
    app = make_app(tmp_path, components(slow), tools={"heartbeat_seconds": 0.05})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        before = {t.name for t in threading.enumerate()}
        resp = c.post(
            "/v1/tools/rag_search/execute",
            json={"inputs": {"query": "remote"}},
            headers={"Accept": "text/event-stream"},
            buffered=False,
        )
        received = b""
        for piece in resp.response:
            received += piece
            if slow.started.is_set() and b"COMPILING_RESULTS" in received:
                break
        resp.close()  # what the server does when the client goes away
        assert slow.closed.wait(5), "the generation was not stopped"
        produced = slow.produced
        deadline = time.monotonic() + 5
        while any(t.name == "tool-stream" for t in threading.enumerate()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(t.name == "tool-stream" for t in threading.enumerate()) or "tool-stream" in before
        assert produced < 10_000
        record = wait_status(c, resp.headers["X-Execution-ID"])
        assert (record["status"], record["error_code"], record["error"]) == (
            "cancelled",
            "cancelled",
            "the client disconnected",
        )
