"""The feature sections of the settings (``agentic``, ``retrievers``, ``guardrails``, ``assistants``,
``message``, ``relay``, ``tools``) read environment variables as the core settings do: ``"false"`` is false,
numbers and lists are converted, a table may be one JSON variable, and a wrong value names its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.agentic.chat import OpenAIChatClient
from assistant_bridge.agentic.guardrail import load_guardrails
from assistant_bridge.agentic.runtime import AgenticRuntime, AgenticSettings, load_retrievers
from assistant_bridge.conversation.assistants import load_assistants
from assistant_bridge.conversation.runtime import MessageSettings
from assistant_bridge.generators import FakeGenerator
from assistant_bridge.relay import RelayConfig
from assistant_bridge.settings import Secret, coerce, table
from assistant_bridge.tools.config import ToolSettings
from tests.conftest import env_settings, make_services, refused

pytestmark = pytest.mark.unit


# ---------------------------------------------------------------------------------------------- the helper
@pytest.mark.parametrize(
    "text, value",
    [
        ("false", False),
        ("False", False),
        ("0", False),
        ("off", False),
        ("no", False),
        ("true", True),
        ("1", True),
        ("yes", True),
        ("on", True),
    ],
)
def test_boolean_strings(text: str, value: bool) -> None:
    assert coerce(bool, text, "x.flag") is value


@pytest.mark.parametrize(
    "tp, value",
    [
        (bool, "perhaps"),
        (bool, 2),
        (bool, [True]),
        (int, "2.5"),
        (int, True),
        (int, 2.5),
        (int, {"a": 1}),
        (float, "fast"),
        (float, False),
        (str, {"a": 1}),
        (str, ["a"]),
        (list[str], 3),
        (dict[str, Any], "[1]"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key(tp: Any, value: Any) -> None:
    with refused("x.key"):
        coerce(tp, value, "x.key")


def test_numbers_lists_and_tables_from_strings() -> None:
    assert coerce(int, "12", "k") == 12 and coerce(int, 12.0, "k") == 12 and coerce(float, "2.5", "k") == 2.5
    assert coerce(list[str], '["a, b", "c"]', "k") == ["a, b", "c"] and coerce(list[str], "a,b", "k") == ["a", "b"]
    assert coerce(dict[str, Any], '{"a": 1}', "k") == {"a": 1} and table(None, "k") == {}
    assert coerce(str | None, None, "k") is None and isinstance(coerce(Secret, "s3cret", "k"), Secret)
    with refused("k: invalid JSON"):
        table("{nope", "k")


def test_a_table_from_one_variable_and_its_keys_from_others_merge(tmp_path: Path) -> None:
    s = env_settings(tmp_path, AGENTIC__EXPANSION='{"window": 4, "enabled": true}', AGENTIC__EXPANSION__ENABLED="false")
    assert s.extra["agentic"]["expansion"] == {"window": 4, "enabled": "false"}
    exp = AgenticSettings.from_table(s.extra["agentic"]).expansion
    assert exp.window == 4 and exp.enabled is False
    with refused("agentic.expansion must be a table"):
        env_settings(tmp_path, AGENTIC__EXPANSION="[1]", AGENTIC__EXPANSION__WINDOW="3")


# ------------------------------------------------------------------------------------------------- agentic
def test_agentic_false_turns_features_off(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        AGENTIC__SPECULATIVE="false",
        AGENTIC__EXPANSION__ENABLED="false",
        AGENTIC__MAX_RESULTS="9",
        AGENTIC__HEARTBEAT_SECONDS="2.5",
    )
    a = AgenticSettings.from_table(s.extra["agentic"])
    assert a.speculative is False and a.expansion.enabled is False
    assert a.max_results == 9 and a.heartbeat_seconds == 2.5
    on = AgenticSettings.from_table(env_settings(tmp_path, AGENTIC__SPECULATIVE="1").extra["agentic"])
    assert on.speculative is True and on.expansion.enabled is True


@pytest.mark.parametrize(
    "env, key",
    [
        ({"AGENTIC__SPECULATIVE": "perhaps"}, "agentic.speculative"),
        ({"AGENTIC__EXPANSION__ENABLED": "nope"}, "agentic.expansion.enabled"),
        ({"AGENTIC__EXPANSION__WINDOW": "wide"}, "agentic.expansion.window"),
        ({"AGENTIC__EXPANSION__MAX_CHARS": "1.5"}, "agentic.expansion.max_chars"),
        ({"AGENTIC__MAX_RESULTS": "many"}, "agentic.max_results"),
        ({"AGENTIC__EXPANSION": "5"}, "agentic.expansion must be a table"),
        ({"AGENTIC__PLANNER": "not json"}, "agentic.planner: invalid JSON"),
        ({"AGENTIC__PLANNER": '["http://x"]'}, "agentic.planner must be a table"),
        ({"AGENTIC__PLANNER": '{"base_url": "http://x", "model": "m", "timeout": "soon"}'}, "agentic.planner.timeout"),
        ({"AGENTIC__PLANNER": '{"base_url": "http://x", "model": "m", "colour": 1}'}, "agentic.planner.colour"),
        ({"AGENTIC__GENERATOR": "openai"}, "agentic.generator: invalid JSON"),
        ({"AGENTIC__MAX_DOCUMENT_CHARS": "10"}, "agentic.max_document_chars"),
    ],
)
def test_agentic_bad_values_name_the_key(tmp_path: Path, env: dict[str, str], key: str) -> None:
    with refused(key):
        AgenticSettings.from_table(env_settings(tmp_path, **env).extra["agentic"])


def test_agentic_planner_from_one_json_variable(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        AGENTIC__PLANNER='{"base_url": "http://127.0.0.1:9/v1", "model": "m", '
        '"api_key": "sk-planner-1", "timeout": "2", "max_retries": "0"}',
    )
    rt = AgenticRuntime(make_services(s), generator=FakeGenerator())
    assert rt.settings.planner is not None and rt.settings.planner["timeout"] == 2.0
    assert rt.settings.planner["max_retries"] == 0 and "sk-planner-1" not in repr(rt.settings)
    assert isinstance(rt.chat, OpenAIChatClient) and rt.chat.model == "m" and rt.chat.max_retries == 0
    whole = env_settings(tmp_path, AGENTIC='{"speculative": false, "expansion": {"enabled": "false"}}')
    a = AgenticSettings.from_table(whole.extra["agentic"])
    assert a.speculative is False and a.expansion.enabled is False


# ---------------------------------------------------------------------------------------------- retrievers
def test_retrievers_from_environment_variables(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        RETRIEVERS__HR='{"description": "HR", "mode": "lexical", "max_results": "3"}',
        RETRIEVERS__SALES__MAX_RESULTS="4",
        RETRIEVERS__SALES__FILTER="title == 'x'",
    )
    found = load_retrievers(s)
    assert (found["hr"].description, found["hr"].mode, found["hr"].max_results) == ("HR", "lexical", 3)
    assert found["sales"].max_results == 4 and found["sales"].filter is not None
    with refused("retrievers.hr.max_results"):
        load_retrievers(env_settings(tmp_path, RETRIEVERS__HR__MAX_RESULTS="many"))
    with refused("retrievers.hr.max_results"):
        load_retrievers(env_settings(tmp_path, RETRIEVERS__HR__MAX_RESULTS="true"))
    with refused("retrievers.hr must be a table"):
        load_retrievers(env_settings(tmp_path, RETRIEVERS__HR='"HR"'))


# ---------------------------------------------------------------------------------------------- guardrails
def test_guardrails_from_environment_variables(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        GUARDRAILS__HR__1__DENIED_WORDS='["salary grid", "bonus"]',
        GUARDRAILS__HR__1__DENIED_TOPICS='[{"name": "Legal", "phrases": ["lawsuit"]}]',
        GUARDRAILS__HR__DRAFT='{"denied_words": ["draft"]}',
        GUARDRAILS__FIN='{"2": {"regex": [{"name": "iban", "pattern": "DE\\\\d{20}"}]}}',
    )
    found = load_guardrails(s.extra["guardrails"])
    assert set(found) == {("hr", "1"), ("hr", "DRAFT"), ("fin", "2")}
    hr = found[("hr", "1")]
    assert [r.kind for r in hr.rules] == ["word", "word", "topic"]  # a list, not one rule per character
    assert hr.check("what is the bonus?").intervened and not hr.check("a b c").intervened
    assert found[("fin", "2")].check("DE12345678901234567890").rules == ("regex:iban",)
    for env, key in (
        ({"GUARDRAILS__HR__1__DENIED_TOPICS": '{"name": "x"}'}, "guardrails.hr.1.denied_topics"),
        ({"GUARDRAILS__HR__1__REGEX": '["DE"]'}, "guardrails.hr.1.regex[0]"),
        ({"GUARDRAILS__HR__1": "[1]"}, "guardrails.hr.1 must be a table"),
    ):
        with refused(key):
            load_guardrails(env_settings(tmp_path, **env).extra["guardrails"])


# ---------------------------------------------------------------------------------------------- assistants
def test_assistants_false_turns_features_off(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        ASSISTANTS__KB__CONVERSATIONAL_SEARCH__ENABLED="false",
        ASSISTANTS__KB__CONVERSATIONAL_SEARCH__HAP_FILTERING__INPUT__ENABLED="off",
        ASSISTANTS__KB__CONVERSATIONAL_SEARCH__HAP_FILTERING__INPUT__THRESHOLD="0.4",
        ASSISTANTS__KB__SESSION_TTL_SECONDS="600",
        ASSISTANTS__KB__ENVIRONMENTS="live,draft",
    )
    kb = load_assistants(s).get("kb", "draft")
    assert kb.conversational.enabled is False and kb.session_ttl_seconds == 600
    assert kb.conversational.hap.input.enabled is False and kb.conversational.hap.input.threshold == 0.4
    for env, key in (
        ({"ASSISTANTS__KB__CONVERSATIONAL_SEARCH__ENABLED": "perhaps"}, "assistants.kb.conversational_search.enabled"),
        ({"ASSISTANTS__KB__SESSION_TTL_SECONDS": "1.5"}, "assistants.kb.session_ttl_seconds"),
        ({"ASSISTANTS__KB__SEARCH": "{broken"}, "assistants.kb.search: invalid JSON"),
    ):
        with refused(key):
            load_assistants(env_settings(tmp_path, **env))


def test_assistants_nested_table_from_one_json_variable(tmp_path: Path) -> None:
    server = (
        '{"url": "https://search.example.com/q", "auth_type": "none", "verify_tls": "false", "timeout_seconds": "2"}'
    )
    s = env_settings(tmp_path, ASSISTANTS__KB__SEARCH='{"type": "server", "server": ' + server + "}")
    kb = load_assistants(s).get("kb")
    assert kb.search.server is not None and kb.search.server.verify_tls is False
    assert kb.search.server.timeout_seconds == 2.0


# ------------------------------------------------------------------------------------------------- message
def test_message_from_environment_variables(tmp_path: Path) -> None:
    s = env_settings(tmp_path, MESSAGE__ENCODER_THREADS="2", MESSAGE__HEARTBEAT_SECONDS="2.5")
    m = MessageSettings.from_settings(s)
    assert (m.encoder_threads, m.heartbeat_seconds, m.filters_dir) == (2, 2.5, None)
    assert MessageSettings.from_settings(env_settings(tmp_path, MESSAGE='{"filters_dir": "/m"}')).filters_dir == "/m"
    for env, key in (
        ({"MESSAGE__ENCODER_THREADS": "two"}, "message.encoder_threads"),
        ({"MESSAGE__MAX_SEARCH_RESULTS_BYTES": "1e5x"}, "message.max_search_results_bytes"),
        ({"MESSAGE__COLOUR": "red"}, "message.colour"),
    ):
        with refused(key):
            MessageSettings.from_settings(env_settings(tmp_path, **env))


# --------------------------------------------------------------------------------------------------- relay
def test_relay_false_turns_features_off(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        RELAY__STREAM="false",
        RELAY__REQUEST_DEBUG="0",
        RELAY__SEARCH='{"type": "server", "url": "http://127.0.0.1:9/v1/search", "verify_tls": "off"}',
        RELAY__SEARCH__RETRIES="3",
    )
    cfg = RelayConfig.from_settings(s)
    assert cfg.stream is False and cfg.request_debug is False
    assert cfg.search.type == "server" and cfg.search.verify_tls is False and cfg.search.retries == 3
    for env, key in (
        ({"RELAY__VERIFY_TLS": "perhaps"}, "relay.verify_tls"),
        ({"RELAY__MAX_ROUNDS": "2.5"}, "relay.max_rounds"),
        ({"RELAY__SEARCH": "builtin"}, "relay.search: invalid JSON"),
    ):
        with refused(key):
            RelayConfig.from_settings(env_settings(tmp_path, **env))


# --------------------------------------------------------------------------------------------------- tools
def test_tools_from_environment_variables(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path, TOOLS__HEARTBEAT_SECONDS="5", TOOLS__RAG_SEARCH='{"retrieve_limit": "7", "mode": "dense"}'
    )
    t = ToolSettings.from_settings(s)
    assert t.heartbeat_seconds == 5.0 and t.rag_search.retrieve_limit == 7 and t.rag_search.mode == "dense"
    for env, key in (
        ({"TOOLS__ASYNC_THREADS": "true"}, "tools.async_threads"),
        ({"TOOLS__RAG_SEARCH__RETRIEVE_LIMIT": "many"}, "tools.rag_search.retrieve_limit"),
        ({"TOOLS__RAG_SEARCH": "[]"}, "tools.rag_search must be a table"),
    ):
        with refused(key):
            ToolSettings.from_settings(env_settings(tmp_path, **env))
