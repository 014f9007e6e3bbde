"""One turn without HTTP: text chunking for streaming, and a turn over a fake source."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.conversation.sources import FakeSource
from assistant_bridge.conversation.turn import Turn, TurnRequest
from assistant_bridge.domain import Principal, Scope
from assistant_bridge.errors import ValidationFailed
from tests.conversation.helpers import build

pytestmark = pytest.mark.unit


def test_turn_over_a_fake_source(tmp_path: Path) -> None:
    _, _, runtime = build(tmp_path)
    source = FakeSource([{"title": "VPN", "body": "Install the VPN client. Then sign in."}])
    runtime._sources[("default", "default")] = source
    assistant = runtime.assistants.get("default")
    scope = Scope(Principal(user_id="u"))
    result = Turn(runtime, assistant, TurnRequest(text="  vpn?  ", debug=True), scope).run()
    assert source.queries == ["vpn?"] and result.outcome == "answer"
    assert result.generic[0]["text"] == "Install the VPN client."
    assert result.debug is not None and result.debug["turn_events"][0]["callout"]["search"]["engine"] == "fake"
    with pytest.raises(ValidationFailed):
        Turn(runtime, assistant, TurnRequest(text=""), scope)
    with pytest.raises(ValidationFailed):
        Turn(runtime, assistant, TurnRequest(message_type="search_results", text="q"), scope)


@pytest.mark.parametrize(
    ("question", "title", "idk"),
    [
        ("Comment réinitialiser mon mot de passe ?", "Comment le savons-nous ?", "Je ne suis pas sûr"),
        ("パスワードを再設定するにはどうすればいいですか", "回答の根拠", "ナレッジベースの情報からは"),
        ("How do I reset my password?", "How do we know?", "I'm not confident"),
    ],
)
def test_default_messages_speak_the_questions_language(tmp_path: Path, question: str, title: str, idk: str) -> None:
    from tests.conversation.helpers import ask, build, checked, ingest

    app, _, _ = build(tmp_path)
    client = app.test_client()
    ingest(client)
    item = checked(ask(client, question))["output"]["generic"][0]
    assert item["citations_title"] == title and item["disclaimer"]
    refused, _, _ = build(tmp_path / "idk", pre=0.1)
    c2 = refused.test_client()
    ingest(c2)
    assert checked(ask(c2, question))["output"]["generic"][0]["text"].startswith(idk)


def test_a_configured_message_is_used_as_written_in_any_language(tmp_path: Path) -> None:
    from tests.conversation.helpers import ask, build, checked, ingest

    custom = {
        "default": {
            "environments": ["default"],
            "search": {"type": "builtin"},
            "messages": {"idk": "Ask the help desk."},
            "conversational_search": {"citations_title": "Sources"},
        }
    }
    app, _, _ = build(tmp_path, pre=0.1, assistants=custom)
    client = app.test_client()
    ingest(client)
    assert (
        checked(ask(client, "Comment réinitialiser mon mot de passe ?"))["output"]["generic"][0]["text"]
        == "Ask the help desk."
    )


@pytest.mark.parametrize(
    ("message", "reply"),
    [
        ("Thank you!", "You're welcome!"),
        ("ok bye", "Goodbye!"),
        ("merci beaucoup", "Je vous en prie !"),
        ("ありがとうございます", "どういたしまして。"),
        ("???", "I didn't find a question"),
    ],
)
def test_social_messages_are_answered_and_not_searched(tmp_path: Path, message: str, reply: str) -> None:
    _, _, runtime = build(tmp_path)
    source = FakeSource([{"title": "VPN", "body": "Install the VPN client. Then sign in."}])
    runtime._sources[("default", "default")] = source
    assistant = runtime.assistants.get("default")
    result = Turn(runtime, assistant, TurnRequest(text=message, debug=True), Scope(Principal(user_id="u"))).run()
    assert result.outcome == "social" and source.queries == []
    assert result.generic[0]["response_type"] == "text" and result.generic[0]["text"].startswith(reply)
    assert result.memory is not None and result.memory.outcome == "social" and result.memory.answer == ""
    assert result.debug is not None and result.debug["turn_events"][0]["outcome"] == "social"


def test_a_turn_remembers_the_titles_its_answer_cites(tmp_path: Path) -> None:
    _, _, runtime = build(tmp_path)
    runtime._sources[("default", "default")] = FakeSource(
        [{"title": "git-stash(1): Stash the changes", "body": "Use git stash push to save your changes."}]
    )
    assistant = runtime.assistants.get("default")
    result = Turn(runtime, assistant, TurnRequest(text="save changes?"), Scope(Principal(user_id="u"))).run()
    assert result.outcome == "answer" and result.memory is not None
    assert result.memory.titles == ("git-stash(1): Stash the changes",)


def test_a_rewritten_turn_sends_the_message_as_asked_to_the_search(tmp_path: Path) -> None:
    conversational = {"contextual_mode": "entire_conversation", "query_rewrite": {"as_asked_weight": 0.5}}
    assistants = {"default": {"environments": ["default"], "search": {"type": "builtin"}}}
    assistants["default"]["conversational_search"] = conversational  # type: ignore[assignment]
    _, _, runtime = build(tmp_path, assistants=assistants)
    source = FakeSource([{"title": "VPN client", "body": "Install the VPN client. Then sign in."}])
    runtime._sources[("default", "default")] = source
    assistant = runtime.assistants.get("default")
    scope = Scope(Principal(user_id="u"))
    first = Turn(runtime, assistant, TurnRequest(text="How do I install the VPN client?"), scope).run()
    assert first.memory is not None
    question = "Does it run on Debian Linux?"
    Turn(runtime, assistant, TurnRequest(text=question, history=(first.memory,)), scope).run()
    assert source.blends[0] is None  # the first turn has nothing to rewrite
    assert source.queries[1] != question and source.blends[1] == (question, 0.5)


def test_a_follow_up_on_a_named_command_sends_its_topic_to_the_search(tmp_path: Path) -> None:
    conversational = {"contextual_mode": "entire_conversation"}
    assistants = {"default": {"environments": ["default"], "search": {"type": "builtin"}}}
    assistants["default"]["conversational_search"] = conversational  # type: ignore[assignment]
    _, _, runtime = build(tmp_path, assistants=assistants)
    page = {"title": "scp(1): OpenSSH secure file copy", "body": "-r: Recursively copy entire directories with scp."}
    source = FakeSource([page])
    runtime._sources[("default", "default")] = source
    assistant = runtime.assistants.get("default")
    scope = Scope(Principal(user_id="u"))
    first = Turn(runtime, assistant, TurnRequest(text="How do I copy a directory with scp?"), scope).run()
    assert first.memory is not None and first.memory.titles == (page["title"],)
    Turn(
        runtime, assistant, TurnRequest(text="Can I limit the bandwidth it uses?", history=(first.memory,)), scope
    ).run()
    assert source.topics == [None, "scp"]


@pytest.mark.parametrize("weight", [-1, 11, "high", True])
def test_a_bad_as_asked_weight_is_refused(tmp_path: Path, weight: object) -> None:
    from assistant_bridge.errors import ConfigurationError

    conversational = {"contextual_mode": "entire_conversation", "query_rewrite": {"as_asked_weight": weight}}
    assistants = {"default": {"environments": ["default"], "conversational_search": conversational}}
    with pytest.raises(ConfigurationError, match="as_asked_weight"):
        build(tmp_path, assistants=assistants)


def test_a_turn_measures_an_asked_option_only_on_results_its_own_search_found(tmp_path: Path) -> None:
    """Results a client sends back name documents by id: the turn must not open them (the caller may not be
    allowed to read them), so the option look runs only on the results of the turn's own, scoped search."""
    from assistant_bridge.core.results import SearchResult

    _, _, runtime = build(tmp_path)
    asked: list[str] = []

    class Recording(FakeSource):
        def option_words(self, message, results):  # type: ignore[no-untyped-def]
            asked.append(message)
            return None

    runtime._sources[("default", "default")] = Recording([{"title": "VPN", "body": "Install the VPN client."}])
    assistant = runtime.assistants.get("default")
    scope = Scope(Principal(user_id="u"))
    Turn(runtime, assistant, TurnRequest(text="Which vpn option installs the client?"), scope).run()
    sent = (SearchResult("VPN", "Install the VPN client.", result_metadata={"document_id": "someone-elses"}),)
    request = TurnRequest(
        message_type="search_results", text="Which vpn option installs the client?", search_results=sent
    )
    Turn(runtime, assistant, request, scope).run()
    assert asked == ["Which vpn option installs the client?"]
