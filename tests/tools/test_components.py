"""rag_search borrows the generator, filters, thresholds and messages of a ``/message`` assistant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.conversation.runtime import ConversationRuntime
from assistant_bridge.errors import ConfigurationError
from assistant_bridge.filters import FakePostFilter, FakePreFilter, Thresholds
from assistant_bridge.generators import FakeGenerator
from tests.conftest import make_services, make_settings
from tests.tools.helpers import execute, ingest

pytestmark = pytest.mark.unit


def _app(tmp_path: Path, generator: Any, **extra: Any) -> Any:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, **extra)
    svc = make_services(s)

    def thresholds(level: str) -> Thresholds:
        # the pre-filter scores 0.9: only "most_often" turns that into "I don't know"
        return Thresholds(0.95, 0.95) if level == "most_often" else Thresholds(0.1, 0.1)

    svc.register(
        ConversationRuntime(
            svc,
            prefilter=FakePreFilter(0.9),
            postfilter=FakePostFilter(0.9),
            generator=generator,
            thresholds=thresholds,
        )
    )
    return create_app(s, svc)


def test_messages_and_threshold_level_come_from_the_assistant(tmp_path: Path) -> None:
    assistants = {
        "helpdesk": {
            "search": {"type": "builtin"},
            "messages": {"idk": "Ask the help desk."},
            "conversational_search": {"search_confidence": {"threshold": "most_often"}},
        }
    }
    app = _app(tmp_path, FakeGenerator(), assistants=assistants)
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        body = execute(c, {"query": "remote"}).get_json()
        assert (body["outcome"], body["idk_reason"], body["response"]) == (
            "idk",
            "retrieval_confidence",
            "Ask the help desk.",
        )


def test_the_generator_comes_from_the_assistant(tmp_path: Path) -> None:
    app = _app(tmp_path, FakeGenerator(declined=True))
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        body = execute(c, {"query": "remote"}).get_json()
        assert (body["outcome"], body["idk_reason"]) == ("idk", "generator_declined")


def test_the_default_assistant_answers(tmp_path: Path) -> None:
    app = _app(tmp_path, FakeGenerator())
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        body = execute(c, {"query": "remote"}).get_json()
        assert body["outcome"] == "answer" and body["model"] == "fake"


def test_the_threshold_level_can_be_overridden_for_rag_search(tmp_path: Path) -> None:
    app = _app(tmp_path, FakeGenerator(), tools={"rag_search": {"threshold_level": "most_often"}})
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.")
        body = execute(c, {"query": "remote"}).get_json()
        assert (body["outcome"], body["idk_reason"]) == ("idk", "retrieval_confidence")


def test_an_unknown_assistant_stops_the_app(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="tools.rag_search.assistant"):
        _app(tmp_path, FakeGenerator(), tools={"rag_search": {"assistant": "nobody"}})
