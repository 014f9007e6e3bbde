"""Helpers for the relay tests: an app whose ``/message`` API runs with fake filters and generator, a real
HTTP server for it (werkzeug in a thread on 127.0.0.1), and a tiny scripted assistant for the response
shapes this project's assistant never produces."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from assistant_bridge.generators import Generator
from assistant_bridge.services import Services
from tests.conftest import make_services, make_settings
from tests.conversation.helpers import fake_runtime

DOCS = [
    (
        "Reset your password",
        "To reset your password open the self-service portal and choose Forgot password. "
        "A verification code is sent to your phone by SMS.",
        "https://intranet.example/password",
    ),
    ("Expense reports", "Submit expense reports within 30 days. Attach every receipt in the finance tool.", None),
    ("VPN setup", "Install the VPN client and sign in with your company account before connecting.", None),
]
MESSAGE_PATH = "/v2/assistants/client-side/environments/default/message"


def build_app(
    tmp_path: Path,
    *,
    pre: float | None = 0.9,
    post: float | None = 0.9,
    generator: Generator | None = None,
    docs: Sequence[tuple[str, str, str | None]] = DOCS,
    **settings_overrides: Any,
) -> tuple[Any, Services]:
    """An app over the memory backend with fake filters and generator, ``docs`` ingested."""
    from assistant_bridge.web.app import create_app

    settings = make_settings(tmp_path, **settings_overrides)
    services = make_services(settings)
    fake_runtime(services, pre=pre, post=post, generator=generator)
    app = create_app(settings, services)
    app.config["TESTING"] = True
    with app.test_client() as c:
        for title, text, url in docs:
            body: dict[str, Any] = {"title": title, "text": text}
            if url:
                body["url"] = url
            resp = c.post("/v1/documents", json=body, headers=_admin_headers(settings))
            assert resp.status_code in (200, 201), resp.get_json()
    return app, services


def _admin_headers(settings: Any) -> dict[str, str]:
    for key in settings.auth.keys:
        if key.admin and key.kind == "apikey":
            return {settings.auth.api_key_header: key.key.get()}
    return {}


class ServerThread:
    """A WSGI app served on 127.0.0.1 by werkzeug's threaded server, in a daemon thread."""

    def __init__(self, app: Any) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.server_port
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.thread.join(5)


def serve(app: Any) -> Iterator[ServerThread]:
    with ServerThread(app) as srv:
        yield srv


class ScriptedAssistant:
    """A fake ``/message`` API: each request gets the next reply of ``script`` (a dict is sent as JSON, a
    string or bytes as raw text, a callable is called with the request body). Records every request body.
    ``.../message_stream`` answers each reply as an event stream (``final_response`` only)."""

    def __init__(self, script: Sequence[Any] | Callable[[dict[str, Any], int], Any], status: int = 200) -> None:
        self.script = script
        self.status = status
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []

    def reply(self, body: dict[str, Any]) -> Any:
        n = len(self.requests) - 1
        if callable(self.script):
            return self.script(body, n)
        return self.script[min(n, len(self.script) - 1)]

    def __call__(self, environ: Any, start_response: Any) -> Any:
        request = Request(environ)
        body = json.loads(request.get_data() or b"{}")
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        self.paths.append(request.full_path)
        reply = self.reply(body)
        if request.path.endswith("/message_stream") and isinstance(reply, dict):
            data = json.dumps({"final_response": reply})
            resp = Response(f"event: final_response\ndata: {data}\n\n", mimetype="text/event-stream")
        elif isinstance(reply, (dict, list)):
            resp = Response(json.dumps(reply), status=self.status, mimetype="application/json")
        else:
            resp = Response(reply, status=self.status, mimetype="text/plain")
        return resp(environ, start_response)


def search_reply(*queries: Any, extra_actions: Sequence[dict[str, Any]] = (), context: Any = None) -> dict[str, Any]:
    actions = [*extra_actions, *({"type": "search", "query": q} for q in queries)]
    return {
        "output": {"generic": [], "actions": actions},
        "context": context or {"turn": len(queries)},
        "user_id": "u-echo",
    }


def answer_reply(text: str = "Done.") -> dict[str, Any]:
    return {
        "output": {"generic": [{"response_type": "text", "text": text}]},
        "context": {"done": True},
        "user_id": "u-echo",
    }
