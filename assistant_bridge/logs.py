"""Structured logs: one JSON object per line with the request id of the request that logged it.

Log calls use ``event key=value`` messages with %-style arguments (never f-strings), and carry no query or
document text unless ``server.log_user_text`` is on.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        rid = getattr(record, "request_id", None) or _request_id()
        if rid:
            out["request_id"] = rid
        if record.exc_info:
            out["exc_type"] = record.exc_info[0].__name__ if record.exc_info[0] else None
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def _request_id() -> str | None:
    try:
        from flask import g, has_request_context

        if has_request_context():
            return g.get("request_id")
    except ImportError:  # pragma: no cover
        pass
    return None


def configure(level: str = "info", fmt: str = "json") -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s %(message)s"))  # fmt: skip
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    logging.getLogger("httpx").setLevel(logging.WARNING)
