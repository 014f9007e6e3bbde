"""Every log call of the package names its event and passes the event's data as fields (``extra=``), never
inside the message, so that a log pipeline can filter on them (``assistant_bridge.logs``)."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import pytest

import assistant_bridge

pytestmark = pytest.mark.unit

PACKAGE = Path(assistant_bridge.__file__).parent
LEVELS = {"debug", "info", "warning", "error", "exception", "critical"}
EVENT = re.compile(r"[a-z_]+(?:\.[a-z_0-9]+)*")


def _log_calls() -> list[tuple[str, int, ast.Call]]:
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in LEVELS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("log", "logger")
            ):
                calls.append((str(path.relative_to(PACKAGE)), node.lineno, node))
    return calls


def test_the_package_logs() -> None:
    assert len(_log_calls()) > 50


def _names_an_event(message: ast.expr) -> bool:
    """A constant event name, a variable holding one, or an f-string that only builds one."""
    if isinstance(message, ast.Constant):
        return isinstance(message.value, str) and EVENT.fullmatch(message.value) is not None
    if isinstance(message, ast.JoinedStr):
        return all(
            not isinstance(part, ast.Constant) or re.fullmatch(r"[a-z_.0-9]*", str(part.value))
            for part in message.values
        )
    return isinstance(message, ast.Name | ast.Attribute)


def test_a_log_message_is_an_event_name_and_its_data_are_fields() -> None:
    wrong = [
        f"{where}:{line}"
        for where, line, call in _log_calls()
        if len(call.args) != 1 or not _names_an_event(call.args[0])
    ]
    assert not wrong, f"log calls with data in the message (use extra=): {wrong}"


def test_a_library_logger_at_debug_does_not_print_below_the_configured_level(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from assistant_bridge import logs

    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    chatty = logging.getLogger("a_library_that_sets_debug")
    chatty.setLevel(logging.DEBUG)  # as bm25s does
    try:
        logs.configure("info", "text")
        chatty.debug("library.noise")
        chatty.info("library.news")
    finally:
        root.handlers[:], root.level = saved
    err = capsys.readouterr().err
    assert "library.news" in err and "library.noise" not in err
