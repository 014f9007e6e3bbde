"""What a turn, a search, a tool execution, an agentic run and a relayed turn record at ``/metrics``: stage
durations, outcomes, IDK reasons and backend errors, with low-cardinality labels only.

The registry is shared by the whole test process, so every test compares the series before and after its
own requests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from assistant_bridge.errors import BackendUnavailable
from assistant_bridge.generators import FakeGenerator
from tests.conversation.helpers import ask, build, checked, events, ingest, url

pytestmark = pytest.mark.unit
STAGES = "assistant_bridge_stage_duration_seconds_count"
OUTCOMES = "assistant_bridge_answer_outcomes_total"
IDK = "assistant_bridge_idk_total"
ERRORS = "assistant_bridge_backend_errors_total"


def samples(client: Any) -> list[tuple[str, dict[str, str], float]]:
    resp = client.get("/metrics")
    assert resp.status_code == 200
    return [
        (s.name, s.labels, s.value)
        for fam in text_string_to_metric_families(resp.get_data(as_text=True))
        for s in fam.samples
    ]


def total(rows: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    return sum(v for n, lab, v in rows if n == name and all(lab.get(k) == w for k, w in labels.items()))


class Delta:
    """``delta(name, **labels)``: how much a series moved between construction and :meth:`take`."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.before = samples(client)
        self.after: list[tuple[str, dict[str, str], float]] = []

    def take(self) -> Delta:
        self.after = samples(self.client)
        return self

    def __call__(self, name: str, **labels: str) -> float:
        return total(self.after, name, **labels) - total(self.before, name, **labels)


def measured(client: Any, action: Callable[[], Any]) -> Delta:
    delta = Delta(client)
    action()
    return delta.take()


@pytest.fixture
def loaded(tmp_path: Path) -> Any:
    app, services, _ = build(tmp_path)
    with app.test_client() as client:
        ingest(client)
        yield client, services


def test_an_answered_turn_records_its_stages_and_outcome(loaded: Any) -> None:
    client, _ = loaded
    d = measured(client, lambda: checked(ask(client, "how do I reset my password")))
    for stage in ("search", "snippets", "pre_filter", "truncation", "generation", "post_filter", "citations"):
        assert d(STAGES, route="message", stage=stage) == 1, stage
    assert d(STAGES, route="message", stage="rewrite") == 0  # single_turn: nothing was rewritten
    assert d(OUTCOMES, route="message", outcome="answer") == 1
    assert d(OUTCOMES, route="message") == 1
    assert d(IDK) == 0 and d(ERRORS) == 0


@pytest.mark.parametrize(
    "pre, post, generator, reason",
    [
        (0.1, 0.9, None, "retrieval_confidence"),
        (0.9, 0.1, FakeGenerator(reword=True), "response_confidence"),
        (0.9, 0.9, FakeGenerator(declined=True), "generator_declined"),
    ],
)
def test_an_idk_turn_counts_its_reason(tmp_path: Path, pre: float, post: float, generator: Any, reason: str) -> None:
    app, _, _ = build(tmp_path, pre=pre, post=post, generator=generator)
    client = app.test_client()
    ingest(client)
    d = measured(client, lambda: checked(ask(client, "how do I reset my password")))
    assert d(OUTCOMES, route="message", outcome="idk") == 1
    assert d(IDK, route="message", reason=reason) == 1 and d(IDK) == 1
    assert d(STAGES, route="message", stage="pre_filter") == 1
    assert d(STAGES, route="message", stage="generation") == (0 if reason == "retrieval_confidence" else 1)
    assert d(ERRORS) == 0


def test_a_turn_without_results_is_an_idk_with_reason_no_results(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    client = app.test_client()
    d = measured(client, lambda: checked(ask(client, "anything at all")))
    assert d(OUTCOMES, route="message", outcome="idk") == 1
    assert d(IDK, route="message", reason="no_results") == 1
    assert d(STAGES, route="message", stage="search") == 1 and d(STAGES, route="message", stage="pre_filter") == 0


def test_a_failing_backend_turn_counts_an_error_once(loaded: Any) -> None:
    client, services = loaded
    services.backend.fail_next = BackendUnavailable("Milvus search failed")
    d = measured(client, lambda: checked(ask(client, "password")))
    assert d(OUTCOMES, route="message", outcome="error") == 1
    assert d(IDK, route="message", reason="backend_error") == 1
    assert d(ERRORS, backend="memory", code="backend_unavailable") == 1 and d(ERRORS) == 1


def test_a_failing_generator_is_counted_under_its_name(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, generator=FakeGenerator(error="endpoint down"))
    client = app.test_client()
    ingest(client)
    d = measured(client, lambda: checked(ask(client, "password")))
    assert d(ERRORS, backend="fake", code="generator_error") == 1 and d(ERRORS) == 1
    assert d(OUTCOMES, route="message", outcome="error") == 1


def test_a_streamed_turn_is_counted_once(loaded: Any) -> None:
    client, _ = loaded
    body = {"input": {"message_type": "text", "text": "how do I reset my password"}}
    d = measured(client, lambda: events(client.post(url(stream=True), json=body)))
    assert d(OUTCOMES, route="message", outcome="answer") == 1 and d(OUTCOMES) == 1
    assert d(STAGES, route="message", stage="generation") == 1


def test_labels_carry_no_user_text(loaded: Any) -> None:
    client, services = loaded
    secret = "zanzibar-confidential-merger"
    checked(ask(client, f"password {secret}"))
    services.backend.fail_next = BackendUnavailable(f"Milvus search failed for {secret}")
    checked(ask(client, secret))
    client.post("/v1/search", json={"query": secret})
    assert secret not in client.get("/metrics").get_data(as_text=True)


def test_search_records_its_stages_and_a_failing_backend(loaded: Any) -> None:
    client, services = loaded
    d = measured(client, lambda: client.post("/v1/search", json={"query": "password"}))
    assert d(STAGES, route="search", stage="search") == 1 and d(STAGES, route="search", stage="embedding") == 1
    assert d(OUTCOMES) == 0  # a search is not a turn
    d = measured(client, lambda: client.post("/v1/search", json={"query": "password", "metadata": {"mode": "lexical"}}))
    assert d(STAGES, route="search", stage="search") == 1 and d(STAGES, route="search", stage="embedding") == 0
    services.backend.fail_next = BackendUnavailable("Milvus search failed")
    d = measured(client, lambda: client.post("/v1/search", json={"query": "password"}))
    assert d(ERRORS, backend="memory", code="backend_unavailable") == 1 and d(ERRORS) == 1
    assert d("assistant_bridge_http_requests_total", route="/v1/search", status="503") == 1


def test_rag_search_records_answers_and_failures_once(tmp_path: Path) -> None:
    from tests.tools.helpers import components, execute, make_app, wait_status
    from tests.tools.helpers import ingest as ingest_doc

    text = "Employees may work remotely two days a week. Managers approve it."
    app = make_app(tmp_path / "ok", components(pre=0.1))
    with app.test_client() as c:
        ingest_doc(c, "Remote work", text)
        d = measured(c, lambda: execute(c, {"query": "remote work days"}))
        assert d(OUTCOMES, route="rag_search", outcome="idk") == 1
        assert d(IDK, route="rag_search", reason="retrieval_confidence") == 1
        assert d(STAGES, route="rag_search", stage="search") == 1
        assert d(STAGES, route="rag_search", stage="generation") == 0
    app = make_app(tmp_path / "answers")
    with app.test_client() as c:
        ingest_doc(c, "Remote work", text)
        d = measured(c, lambda: execute(c, {"query": "remote work days"}))
        assert d(OUTCOMES, route="rag_search", outcome="answer") == 1 and d(IDK) == 0
        for stage in ("search", "pre_filter", "generation", "post_filter"):
            assert d(STAGES, route="rag_search", stage=stage) == 1, stage
    app = make_app(tmp_path / "down", components(FakeGenerator(error="endpoint down")))
    with app.test_client() as c:
        ingest_doc(c, "Remote work", text)
        resp: list[Any] = []
        d = measured(c, lambda: resp.append(execute(c, {"query": "remote work days"})))
        assert resp[0].status_code == 503
        # counted by the tool runtime, under the generator's name, and not again by the HTTP layer
        assert d(ERRORS, backend="fake", code="generator_error") == 1 and d(ERRORS) == 1
        assert d(OUTCOMES, route="rag_search", outcome="error") == 1
        d = Delta(c)
        accepted = execute(c, {"query": "remote work days"}, mode="async").get_json()
        assert wait_status(c, accepted["execution_id"])["status"] == "failed"
        d.take()
        assert d(ERRORS, backend="fake", code="generator_error") == 1 and d(ERRORS) == 1


def test_agentic_run_records_its_steps_and_outcome(tmp_path: Path) -> None:
    from tests.web.test_agentic import DOCS, events_of, make_client, request_body

    c, svc = make_client(tmp_path)
    for title, text in DOCS:
        assert c.post("/v1/documents", json={"title": title, "text": text}).status_code == 201
    d = measured(c, lambda: events_of(c.post("/agenticRetrieveStream", json=request_body())))
    assert d(OUTCOMES, route="agentic", outcome="answer") == 1
    for stage in ("speculative_retrieval", "planning", "generation"):
        assert d(STAGES, route="agentic", stage=stage) >= 1, stage
    svc.backend.fail_next = BackendUnavailable("Milvus search failed")
    d = measured(c, lambda: events_of(c.post("/agenticRetrieveStream", json=request_body())))
    assert d(OUTCOMES, route="agentic", outcome="error") == 1
    # the speculative search fails, the only retriever is dropped, the stream ends with an exception member
    assert d(ERRORS, backend="memory", code="backend_unavailable") == 1 and d(ERRORS) == 1


def test_relayed_turn_records_its_outcome_and_searches(tmp_path: Path) -> None:
    from tests.relay.helpers import build_app

    app, _ = build_app(tmp_path)
    c = app.test_client()
    d = measured(c, lambda: c.post("/v1/relay/message", json={"text": "How do I reset my password?"}))
    assert d(OUTCOMES, route="relay", outcome="answer") == 1
    assert d(STAGES, route="relay", stage="search") == 1
    # the relayed assistant is this service's client-side assistant: its own two turns count as /message
    assert d(OUTCOMES, route="message", outcome="client_search") == 1
    assert d(OUTCOMES, route="message", outcome="answer") == 1
