"""Helpers for the /message tests: apps with fake or real conversation components, URLs, SSE parsing and
response validation."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from assistant_bridge.client.sse import parse_sse
from assistant_bridge.conversation.runtime import ConversationRuntime
from assistant_bridge.conversation.sessions import SessionStore
from assistant_bridge.filters import FakePostFilter, FakePreFilter, Thresholds
from assistant_bridge.generators import FakeGenerator, Generator
from assistant_bridge.services import Services
from assistant_bridge.validation import validate
from tests.conftest import make_services, make_settings

DOCS = [
    (
        "Reset your password",
        "To reset your password open the self-service portal and choose Forgot password. "
        "A verification code is sent to your phone by SMS.",
    ),
    ("Expense reports", "Submit expense reports within 30 days. Attach every receipt in the finance tool."),
    ("VPN setup", "Install the VPN client and sign in with your company account before connecting."),
]


class LevelThresholds:
    """``level -> Thresholds`` that records the levels asked for."""

    def __init__(self, pre: float = 0.5, post: float = 0.5, per_level: dict[str, tuple[float, float]] | None = None):
        self.default = (pre, post)
        self.per_level = per_level or {}
        self.levels: list[str] = []

    def __call__(self, level: str) -> Thresholds:
        self.levels.append(level)
        return Thresholds(*self.per_level.get(level, self.default))


def fake_runtime(
    services: Services,
    *,
    pre: float | None = 0.9,
    post: float | None = 0.9,
    generator: Generator | None = None,
    thresholds: tuple[float, float] = (0.5, 0.5),
) -> ConversationRuntime:
    """A /message runtime with fake filters (scoring ``pre`` and ``post``; ``None``: by word overlap), the
    fake generator unless one is given, and the same ``thresholds`` at every level; registered on ``services``."""
    return services.register(
        ConversationRuntime(
            services,
            prefilter=FakePreFilter(pre),
            postfilter=FakePostFilter(post),
            generator=generator or FakeGenerator(),
            thresholds=lambda _level: Thresholds(*thresholds),
        )
    )


def build(
    tmp_path: Path,
    *,
    pre: float | None = 0.9,
    post: float | None = 0.9,
    generator: Generator | None = None,
    thresholds: Callable[[str], Thresholds] | None = None,
    assistants: Any = None,
    transport: httpx.BaseTransport | None = None,
    clock: Callable[[], float] | None = None,
    real: bool = False,
    **settings_overrides: Any,
) -> tuple[Any, Services, ConversationRuntime]:
    """An app over the memory backend and hashing embedder, with fake filters and generator unless ``real``."""
    from assistant_bridge.web.app import create_app

    if assistants is not None:
        settings_overrides["assistants"] = assistants
    settings = make_settings(tmp_path, **settings_overrides)
    services = make_services(settings)
    if real:
        runtime = ConversationRuntime(services, transport=transport)
    else:
        runtime = ConversationRuntime(
            services,
            prefilter=FakePreFilter(pre),
            postfilter=FakePostFilter(post),
            generator=generator or FakeGenerator(),
            thresholds=thresholds or LevelThresholds(),
            transport=transport,
            sessions=SessionStore(services.store, clock) if clock else None,
        )
    services.register(runtime)
    app = create_app(settings, services)
    app.config["TESTING"] = True
    return app, services, runtime


def url(
    assistant: str = "default",
    environment: str | None = "default",
    session: str | None = None,
    stream: bool = False,
    version: str | None = "2024-08-25",
) -> str:
    path = f"/v2/assistants/{assistant}"
    if environment is not None:
        path += f"/environments/{environment}"
    if session is not None:
        path += f"/sessions/{session}"
    path += "/message_stream" if stream else "/message"
    return path + (f"?version={version}" if version else "")


def sessions_url(assistant: str = "default", environment: str = "default", session: str | None = None) -> str:
    path = f"/v2/assistants/{assistant}/environments/{environment}/sessions"
    return path + (f"/{session}" if session else "")


def ingest(
    client: Any, docs: Sequence[tuple[str, str]] = DOCS, headers: dict[str, str] | None = None, **extra: Any
) -> list[str]:
    ids = []
    for title, text in docs:
        resp = client.post("/v1/documents", json={"title": title, "text": text, **extra}, headers=headers or {})
        assert resp.status_code in (200, 201), resp.get_json()
        ids.append(resp.get_json()["document"]["id"])
    return ids


def ask(
    client: Any,
    text: str,
    *,
    debug: bool = True,
    headers: dict[str, str] | None = None,
    path: str | None = None,
    **options: Any,
) -> Any:
    body = {"input": {"message_type": "text", "text": text, "options": {"debug": debug, **options}}}
    return client.post(path or url(), json=body, headers=headers or {})


def checked(resp: Any, status: int = 200) -> dict[str, Any]:
    """The JSON body, after checking the status and the schema of a /message response."""
    body = resp.get_json()
    assert resp.status_code == status, body
    if status == 200:
        validate("message_response", body)
    else:
        validate("error", body)
    return dict(body)


def events(resp: Any) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed response, each validated against message_stream_event."""
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "text/event-stream"
    out = []
    for ev in parse_sse([resp.get_data()]):
        data = json.loads(ev.data)
        validate("message_stream_event", data)
        assert list(data) == [ev.event]
        out.append((ev.event, data[ev.event]))
    return out


def only_item(body: dict[str, Any]) -> dict[str, Any]:
    generic = body["output"]["generic"]
    assert len(generic) == 1, generic
    return dict(generic[0])


def turn_event(body: dict[str, Any]) -> dict[str, Any]:
    return dict(body["output"]["debug"]["turn_events"][0])


def action(query: str, **more: Any) -> dict[str, Any]:
    """A search action as the service sends it: the fields at the top and again in ``parameters`` (for the
    SDKs' action model, which also requires ``name`` and ``result_variable``)."""
    fields = {"query": query, **more}
    return {"type": "search", "name": "search", "result_variable": "search_results", **fields, "parameters": fields}
