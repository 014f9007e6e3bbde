"""Structured logs: one JSON object per line with the request id of the request that logged it.

A log call's message is the name of its event alone (``search.done``, ``message.turn``); everything the event
reports is a field of its own, passed with ``extra=`` (``log.info("search.done", extra={"mode": "dense",
"results": 5, "ms": 31.2})``). The JSON lines show the fields as keys beside ``msg``, the plain format as
``key=<JSON value>`` after the message, so a log pipeline filters on them without parsing the message. No
event carries a query or document text unless ``server.log_user_text`` is on; then the events of a turn, a
search and a relayed turn carry the texts as fields too (built by :func:`user_text`, each clipped to
:data:`USER_TEXT_CHARS`).

No line carries an API key sent in a URL (``?api_key=``, accepted by the event-stream routes for browsers):
:class:`RedactQuerySecrets` rewrites it as ``api_key=[redacted]`` in every message, field and traceback that goes
through :func:`configure`'s handler and through gunicorn's own loggers (``assistant_bridge.web.server``),
which log the raw request URI when a request fails.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

# the parameter's name as a URL may spell it (werkzeug decodes api%5Fkey to api_key), up to the next separator
_QUERY_SECRET = re.compile(r"(?i)(api(?:_|%5f)key=)[^&;#\s\"'<>]*")
REDACTED = "[redacted]"
USER_TEXT_CHARS = 500  # a logged query or answer is cut to this many characters
# the attributes every LogRecord has; any other one was passed with extra= and is a field of the event
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


def user_text(enabled: bool, **texts: str | None) -> dict[str, str]:
    """Log fields holding user text, for ``extra=``: each non-empty text clipped to :data:`USER_TEXT_CHARS`
    (with ``…`` when cut), or no field at all when ``enabled`` (``server.log_user_text``) is false."""
    if not enabled:
        return {}
    return {
        name: text if len(text) <= USER_TEXT_CHARS else text[: USER_TEXT_CHARS - 1] + "…"
        for name, text in texts.items()
        if text
    }


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The fields a log call passed with ``extra=`` (``request_id`` excluded: formatters place it)."""
    return {k: v for k, v in vars(record).items() if k not in _RECORD_ATTRS and k != "request_id"}


def redact(text: str) -> str:
    """``text`` with the value of every ``api_key=`` in it replaced by ``[redacted]``."""
    return _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)


class RedactQuerySecrets(logging.Filter):
    """Removes API keys sent in URLs from a record's message, text fields and traceback (see :func:`redact`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        for key, value in fields(record).items():
            if isinstance(value, str):
                setattr(record, key, redact(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


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
        for key, value in fields(record).items():
            out.setdefault(key, value)
        if record.exc_info:
            out["exc_type"] = record.exc_info[0].__name__ if record.exc_info[0] else None
            out["exc"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """The plain format, with the fields of the event (``extra=``) after the message as ``key=<JSON value>``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        extra = "".join(f" {k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in fields(record).items())
        return super().formatMessage(record) + extra


def _request_id() -> str | None:
    try:
        from flask import g, has_request_context

        if has_request_context():
            rid = g.get("request_id")
            return rid if isinstance(rid, str) else None
    except ImportError:  # pragma: no cover
        pass
    return None


def configure(level: str = "info", fmt: str = "json") -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(RedactQuerySecrets())
    handler.setLevel(level.upper())  # also for libraries that set their own logger to DEBUG (bm25s does)
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    logging.getLogger("httpx").setLevel(logging.WARNING)
