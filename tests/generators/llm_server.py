"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the generator tests.

Each request pops the next step of the script. A step is a dict:
``{"status": 200, "json": {...}}``, ``{"raw": b"...", "status": 200}`` (any body), ``{"sse": [event, ...]}``
(events are dicts, sent as ``data: <json>``, or strings sent verbatim after ``data: ``), ``{"sleep": 1.0}``
before answering, ``{"break_after": n}`` to drop the connection after ``n`` SSE events (chunked encoding
left unterminated), and ``{"headers": {...}}``. Requests are recorded as ``(path, headers, json body)``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    }


class ScriptedServer:
    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                server.requests.append((self.path, dict(self.headers.items()), body))
                step = server.script.pop(0) if server.script else {"status": 500, "json": {"error": "no script"}}
                time.sleep(step.get("sleep", 0))
                status = step.get("status", 200)
                if "sse" in step:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    for k, v in step.get("headers", {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    for i, event in enumerate(step["sse"]):
                        if step.get("break_after") == i:
                            self.wfile.flush()
                            self.close_connection = True
                            return
                        data = event if isinstance(event, str) else json.dumps(event)
                        payload = (
                            f": keep-alive\n\ndata: {data}\n\n".encode() if i == 0 else f"data: {data}\n\n".encode()
                        )
                        self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                        self.wfile.flush()
                        time.sleep(step.get("gap", 0))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                payload = step["raw"] if "raw" in step else json.dumps(step.get("json", {})).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in step.get("headers", {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return None  # clients that time out or hang up on purpose are part of the script

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
