"""The assistants table of the settings: defaults, forms, environment overrides, and clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from assistant_bridge.conversation.assistants import DEFAULT_ASSISTANTS, load_assistants
from assistant_bridge.errors import ConfigurationError, NotFound
from assistant_bridge.settings import load_settings

pytestmark = pytest.mark.unit


def load(table: Any = None, env: dict[str, str] | None = None) -> Any:
    overrides = {} if table is None else {"assistants": table}
    return load_assistants(load_settings(env=env or {}, overrides=overrides))


def test_embedded_default_has_default_and_client_side() -> None:
    cfg = load()
    assert cfg.ids == [("default", "default"), ("client-side", "default")]
    default = cfg.get("default", "default")
    assert default.search.type == "builtin" and default.generator["kind"] == "extractive"
    assert default.conversational.threshold_level == "less_often"
    assert default.conversational.response_length == "moderate"
    assert default.conversational.streaming == "verify_then_stream"
    assert default.messages.no_result.startswith("I searched my knowledge base")
    assert cfg.get("client-side").search.type == "client"
    assert DEFAULT_ASSISTANTS["default"]["search"] == {"type": "builtin"}  # never mutated


def test_list_form_environment_overrides_and_lookup_errors() -> None:
    cfg = load(
        [
            {
                "id": "hr",
                "environments": {
                    "draft": {},
                    "live": {
                        "conversational_search": {"search_confidence": {"threshold": "most_often"}},
                        "messages": {"idk": "Ask HR."},
                    },
                },
                "conversational_search": {"response_length": {"option": "verbose"}},
            }
        ]
    )
    draft, live = cfg.get("hr", "draft"), cfg.get("hr", "live")
    assert draft.conversational.threshold_level == "less_often" and live.conversational.threshold_level == "most_often"
    assert draft.conversational.response_length == live.conversational.response_length == "verbose"
    assert live.messages.idk == "Ask HR." and draft.messages.idk != "Ask HR."
    assert cfg.get("hr").environment_id == "draft"
    with pytest.raises(NotFound, match="unknown environment 'prod'"):
        cfg.get("hr", "prod")
    with pytest.raises(NotFound, match="unknown assistant 'default'"):
        cfg.get("default", "default")  # a configured table replaces the default


def test_server_settings_from_environment_variables_are_coerced_and_secret() -> None:
    env = {
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__TYPE": "server",
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__SERVER__URL": "https://search.example.com/q",
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__SERVER__AUTH_TYPE": "basic",
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__SERVER__USERNAME": "wa",
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__SERVER__PASSWORD": "pa55-word-xyz",
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__SERVER__TIMEOUT_SECONDS": "2.5",
        "ASSISTANT_BRIDGE_ASSISTANTS__KB__SEARCH__SERVER__VERIFY_TLS": "false",
    }
    kb = load(env=env).get("kb")
    server = kb.search.server
    assert server.timeout_seconds == 2.5 and server.verify_tls is False and server.password.get() == "pa55-word-xyz"
    assert "pa55-word-xyz" not in repr(kb)
    json_env = {
        "ASSISTANT_BRIDGE_ASSISTANTS": '{"a": {"generator": {"kind": "openai", "base_url": "http://x",'
        ' "model": "m", "api_key": "sk-very-secret"}}}'
    }
    a = load(env=json_env).get("a")
    assert "sk-very-secret" not in repr(a) and a.generator["api_key"].get() == "sk-very-secret"


@pytest.mark.parametrize(
    "table, fragment",
    [
        ({"a": {"serch": {}}}, "assistants.a: Additional properties are not allowed ('serch' was unexpected)"),
        ({"a": {"search": {"type": "elastic"}}}, "assistants.a.search.type"),
        ({"a": {"search": {"type": "server"}}}, "assistants.a.search.server is required"),
        ({"a": {"search": {"type": "server", "server": {"auth_type": "none"}}}}, "server.url is required"),
        ({"a": {"search": {"type": "server", "server": {"url": "ftp://x"}}}}, "assistants.a.search.server.url"),
        (
            {"a": {"search": {"type": "server", "server": {"url": "http://x", "auth_type": "basic", "username": "u"}}}},
            "server.password is required when auth_type is basic",
        ),
        ({"a": {"search": {"type": "server", "server": {"url": "http://x", "apikey": "k"}}}}, "auth_type must be set"),
        (
            {"a": {"search": {"type": "builtin", "server": {"url": "http://x"}}}},
            "only allowed when search.type is server",
        ),
        ({"a": {"search": {"filter": "colour == 'red'"}}}, "assistants.a.search.filter"),
        ({"a": {"search": {"metadata": {"mode": "magic"}}}}, "metadata.mode"),
        ({"a": {"search": {"metadata": {"limit": 0}}}}, "metadata.limit"),
        (
            {"a": {"conversational_search": {"search_confidence": {"threshold": "never"}}}},
            "search_confidence.threshold",
        ),
        ({"a": {"conversational_search": {"response_length": {"option": "long"}}}}, "response_length.option"),
        ({"a": {"environments": []}}, "assistants.a.environments"),
        ({"a": {"session_ttl_seconds": 1}}, "session_ttl_seconds"),
        ({"bad id!": {}}, "assistants"),
        ({}, "assistants"),
        ("[not json", "assistants: invalid JSON"),
        ([{"name": "no id"}], "assistants[0] needs an id"),
        (5, "assistants must be a table"),
    ],
)
def test_bad_tables_stop_with_a_message_naming_the_key(table: Any, fragment: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load(table)
    assert fragment in info.value.message


def test_unknown_generator_kind_stops_the_app(tmp_path: Any) -> None:
    from tests.conversation.helpers import build

    with pytest.raises(ConfigurationError, match="assistants.a.generator: unknown generator kind"):
        build(tmp_path, real=True, assistants={"a": {"generator": {"kind": "gpt"}}})
