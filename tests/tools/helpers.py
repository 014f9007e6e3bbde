"""Shared by the rag_search, chunk and scope tests: apps with fake generator/filters, SSE reading, slow
generators for cancellation tests."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from assistant_bridge.client.sse import iter_json_events
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.filters import FakePostFilter, FakePreFilter, Thresholds
from assistant_bridge.generators import FakeGenerator, Generation, GenerationStream
from assistant_bridge.services import Services
from assistant_bridge.tools.rag_search import RagComponents
from tests.conftest import make_services, make_settings


def components(
    generator: Any = None, *, pre: float = 0.9, post: float = 0.9, threshold: float = 0.5, **messages: str
) -> RagComponents:
    return RagComponents(
        generator=generator or FakeGenerator(),
        prefilter=FakePreFilter(pre),
        postfilter=FakePostFilter(post),
        thresholds=Thresholds(threshold, threshold),
        **messages,
    )


def make_app(
    tmp_path: Path,
    comps: RagComponents | None = None,
    *,
    keys: Sequence[dict[str, Any]] | None = None,
    tools: dict[str, Any] | None = None,
    services: Services | None = None,
) -> Any:
    """A test app over the memory backend whose rag_search uses ``comps`` (fakes by default)."""
    from assistant_bridge.web.app import create_app

    overrides: dict[str, Any] = {}
    if keys is not None:
        overrides["auth"] = {"keys": list(keys)}
    if tools is not None:
        overrides["tools"] = tools
    s = make_settings(tmp_path, **overrides)
    svc = services or make_services(s)
    svc.register(comps or components())
    app = create_app(s, svc)
    app.config["TESTING"] = True
    return app


def ingest(c: Any, title: str, text: str, headers: dict[str, str] | None = None, **extra: Any) -> str:
    resp = c.post("/v1/documents", json={"title": title, "text": text, **extra}, headers=headers or {})
    assert resp.status_code in (200, 201), resp.get_json()
    doc_id: str = resp.get_json()["document"]["id"]
    return doc_id


def ingest_file(c: Any, path: Path, headers: dict[str, str] | None = None, **form: str) -> str:
    with path.open("rb") as fh:
        resp = c.post(
            "/v1/documents",
            data={"file": (fh, path.name), **form},
            headers=headers or {},
            content_type="multipart/form-data",
        )
    assert resp.status_code in (200, 201), resp.get_json()
    doc_id: str = resp.get_json()["document"]["id"]
    return doc_id


def chunk_id(document_id: str, position: int = 0) -> str:
    """The id the ingestor gives chunk ``position`` of a document."""
    return str(uuid.uuid5(uuid.UUID(document_id), str(position)))


def events_of(resp: Any) -> list[tuple[str, Any]]:
    """Decoded ``(event, data)`` pairs of an SSE response, ``_delta_sse`` groups reassembled."""
    assert resp.mimetype == "text/event-stream", resp.get_data(as_text=True)[:300]
    return list(iter_json_events([resp.get_data()]))


def execute(
    c: Any, inputs: dict[str, Any], headers: dict[str, str] | None = None, *, mode: str = "sync", **body: Any
) -> Any:
    h = dict(headers or {})
    url = "/v1/tools/rag_search/execute"
    if mode == "stream":
        h["Accept"] = "text/event-stream"
    elif mode == "async":
        url += "?mode=async"
    return c.post(url, json={"inputs": inputs, **body}, headers=h)


def wait_status(
    c: Any, execution_id: str, headers: dict[str, str] | None = None, timeout: float = 10.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = c.get(f"/v1/tool-executions/{execution_id}", headers=headers or {}).get_json()
        if body.get("status") in ("completed", "failed", "cancelled") or time.monotonic() > deadline:
            return body
        time.sleep(0.02)


class SlowGenerator:
    """A :class:`FakeGenerator` whose stream waits ``delay`` seconds before each delta and records whether its
    delta iterator was closed (to prove a cancelled execution released it)."""

    name = "slow"
    context_tokens = 100_000

    def __init__(self, delay: float = 0.05, deltas: int = 100) -> None:
        self.inner = FakeGenerator(chunk_chars=1)
        self.delay = delay
        self.deltas = deltas
        self.produced = 0
        self.closed = threading.Event()
        self.started = threading.Event()

    def warm_up(self) -> None:
        return None

    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int:
        return self.inner.prompt_tokens(query, snippets)

    def generate(self, query: str, snippets: Sequence[Snippet], response_length: str = "moderate") -> Generation:
        return self.inner.generate(query, snippets, response_length)  # type: ignore[arg-type]

    def stream(self, query: str, snippets: Sequence[Snippet], response_length: str = "moderate") -> GenerationStream:
        generation = self.inner.generate(query, snippets, response_length)  # type: ignore[arg-type]

        def deltas() -> Iterator[str]:
            try:
                self.started.set()
                for i in range(self.deltas):
                    time.sleep(self.delay)
                    self.produced += 1
                    yield generation.text[i : i + 1]
                yield generation.text[self.deltas :]
            finally:
                self.closed.set()

        return GenerationStream(deltas(), lambda _text: generation)
