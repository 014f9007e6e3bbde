"""Asynchronous rag_search executions: 202, details, stored streams, resumption, other workers, limits."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.generators import FakeGenerator
from assistant_bridge.tools.service import ToolsRuntime
from assistant_bridge.validation import validate
from tests.conftest import KEYS, headers_for, make_services, make_settings
from tests.tools.helpers import SlowGenerator, components, events_of, execute, ingest, make_app, wait_status

pytestmark = pytest.mark.unit


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return make_app(tmp_path, keys=KEYS)


@pytest.fixture
def c(app: Any) -> Any:
    with app.test_client() as client:
        ingest(client, "Remote work", "Employees may work remotely two days a week.", headers_for("alice"))
        yield client


def test_202_then_details_then_stream(c: Any) -> None:
    for how in (
        {"url": "/v1/tools/rag_search/execute?mode=async", "headers": {}},
        {"url": "/v1/tools/rag_search/execute", "headers": {"Prefer": "respond-async"}},
    ):
        resp = c.post(
            how["url"], json={"inputs": {"query": "remote work"}}, headers={**headers_for("alice"), **how["headers"]}
        )
        assert resp.status_code == 202, resp.get_json()
        accepted = validate("tool_execution_accepted", resp.get_json())
        assert resp.headers["Location"] == accepted["details_url"]
        details = wait_status(c, accepted["execution_id"], headers_for("alice"))
        validate("tool_execution", details)
        assert (details["status"], details["mode"], details["user_id"]) == ("completed", "async", "alice")
        assert details["inputs"]["query"] == "remote work" and details["outputs"]["outcome"] == "answer"
        events = events_of(c.get(accepted["stream_url"], headers=headers_for("alice")))
        assert [n for n, _ in events][:4] == ["tool_update"] * 4
        assert events[-1] == ("tool_end", details["outputs"])


def test_stream_resumes_after_last_event_id(c: Any) -> None:
    accepted = execute(c, {"query": "remote"}, headers_for("alice"), mode="async").get_json()
    wait_status(c, accepted["execution_id"], headers_for("alice"))
    full = events_of(c.get(accepted["stream_url"], headers=headers_for("alice")))
    rest = events_of(c.get(accepted["stream_url"], headers={**headers_for("alice"), "Last-Event-ID": "3"}))
    assert rest == full[3:]
    assert c.get(accepted["stream_url"], headers={**headers_for("alice"), "Last-Event-ID": "x"}).status_code == 400


def test_executions_are_visible_to_their_caller_only(c: Any) -> None:
    accepted = execute(c, {"query": "remote"}, headers_for("alice"), mode="async").get_json()
    wait_status(c, accepted["execution_id"], headers_for("alice"))
    for who, end_user in (("bob", None), ("admin", None), ("service", "alice"), ("carol", None)):
        for url in (accepted["details_url"], accepted["stream_url"]):
            resp = c.get(url, headers=headers_for(who, end_user))
            assert resp.status_code == 404, (who, url)
    assert c.get(accepted["details_url"]).status_code == 401
    assert (
        c.get("/v1/tool-executions/00000000-0000-0000-0000-000000000000", headers=headers_for("alice")).status_code
        == 404
    )


def test_a_stream_opened_before_the_end_follows_the_execution(tmp_path: Path) -> None:
    slow = SlowGenerator(delay=0.01, deltas=30)
    app = make_app(tmp_path, components(slow), tools={"poll_seconds": 0.02})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        accepted = execute(c, {"query": "remote"}, mode="async").get_json()
        assert slow.started.wait(5)
        events = events_of(c.get(accepted["stream_url"]))
        assert events[-1][0] == "tool_end" and slow.produced >= 30


def test_another_worker_streams_and_reads_the_execution(tmp_path: Path) -> None:
    """Two apps on one data directory stand for two gunicorn workers: B never ran the execution."""
    slow = SlowGenerator(delay=0.01, deltas=40)
    app_a = make_app(tmp_path, components(slow), tools={"poll_seconds": 0.02})
    settings_b = make_settings(tmp_path, tools={"poll_seconds": 0.02})
    app_b = make_app(
        tmp_path,
        components(FakeGenerator(error="worker B must not generate")),
        services=make_services(settings_b),
        tools={"poll_seconds": 0.02},
    )
    with app_a.test_client() as a, app_b.test_client() as b:
        ingest(a, "Remote work", "Employees may work remotely two days a week.")
        accepted = execute(a, {"query": "remote"}, mode="async").get_json()
        events = events_of(b.get(accepted["stream_url"]))
        assert events[-1][0] == "tool_end" and events[-1][1]["contexts"]
        assert b.get(accepted["details_url"]).get_json()["status"] == "completed"
        assert app_b.extensions["services"].registered(ToolsRuntime).runner.inflight == 0


def test_sync_executions_can_be_streamed_from_their_record(c: Any) -> None:
    body = execute(c, {"query": "remote"}, headers_for("alice")).get_json()
    events = events_of(c.get(f"/v1/tool-executions/{body['execution_id']}/stream", headers=headers_for("alice")))
    assert events == [("tool_end", body)]


def test_failed_async_execution_reports_its_error(tmp_path: Path) -> None:
    app = make_app(tmp_path, components(FakeGenerator(error="endpoint down")))
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        accepted = execute(c, {"query": "remote"}, mode="async").get_json()
        details = wait_status(c, accepted["execution_id"])
        assert (details["status"], details["error"], details["error_code"], details["outputs"]) == (
            "failed",
            "endpoint down",
            "generator_error",
            None,
        )
        events = events_of(c.get(accepted["stream_url"]))
        assert events[-1] == ("error", {"message": "endpoint down", "code": "generator_error"})


def test_too_many_waiting_executions_is_429(tmp_path: Path) -> None:
    gate = threading.Event()

    class Blocking(SlowGenerator):
        def stream(self, *args: Any, **kwargs: Any) -> Any:
            gate.wait(10)
            return super().stream(*args, **kwargs)

    app = make_app(tmp_path, components(Blocking(delay=0.0, deltas=1)), tools={"async_threads": 1, "max_queued": 1})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        first = execute(c, {"query": "remote"}, mode="async")
        second = execute(c, {"query": "remote"}, mode="async")
        third = execute(c, {"query": "remote"}, mode="async")
        assert (first.status_code, second.status_code, third.status_code) == (202, 202, 429)
        assert third.get_json()["error"]["code"] == "rate_limited"
        gate.set()
        for resp in (first, second):
            assert wait_status(c, resp.get_json()["execution_id"])["status"] == "completed"
        assert execute(c, {"query": "remote"}, mode="async").status_code == 202


def test_a_closed_stream_does_not_cancel_an_async_execution(tmp_path: Path) -> None:
    slow = SlowGenerator(delay=0.01, deltas=30)
    app = make_app(tmp_path, components(slow), tools={"poll_seconds": 0.02})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        accepted = execute(c, {"query": "remote"}, mode="async").get_json()
        resp = c.get(accepted["stream_url"], buffered=False)
        next(iter(resp.response))
        resp.close()
        assert wait_status(c, accepted["execution_id"])["status"] == "completed"
