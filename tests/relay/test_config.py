"""The ``[relay]`` settings table and ``Relay.from_settings``."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.relay import HttpSearchProvider, IAMToken, Relay, RelayConfig, ServicesProvider
from assistant_bridge.settings import load_settings
from tests.relay.helpers import build_app

pytestmark = pytest.mark.unit


def test_defaults_target_the_own_client_side_assistant() -> None:
    cfg = RelayConfig.from_mapping(None)
    assert cfg.in_process and cfg.assistant_id == "client-side" and cfg.max_rounds == 5
    assert cfg.max_request_bytes == 100_000 and cfg.search.type == "builtin"


def test_environment_strings_are_converted(tmp_path: Path) -> None:
    env = {
        "ASSISTANT_BRIDGE_RELAY__MAX_ROUNDS": "3",
        "ASSISTANT_BRIDGE_RELAY__STREAM": "false",
        "ASSISTANT_BRIDGE_RELAY__URL": "https://a.test/v2/assistants/A/environments/E/message",
        "ASSISTANT_BRIDGE_RELAY__AUTH": '{"type": "iam", "apikey": "k-123456"}',
        "ASSISTANT_BRIDGE_RELAY__SEARCH__TYPE": "server",
        "ASSISTANT_BRIDGE_RELAY__SEARCH__URL": "http://127.0.0.1:8080/v1/search",
        "ASSISTANT_BRIDGE_RELAY__SEARCH__LIMIT": "4",
    }
    settings = load_settings(env=env, overrides={"data_dir": str(tmp_path)})
    cfg = RelayConfig.from_settings(settings)
    assert cfg.max_rounds == 3 and cfg.stream is False and cfg.search.limit == 4
    assert "k-123456" not in repr(cfg)  # secrets are wrapped
    relay = Relay.from_settings(settings)
    assert isinstance(relay.client.auth, IAMToken) and isinstance(relay.provider, HttpSearchProvider)
    assert relay.max_rounds == 3 and relay.stream_supported is False


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"max_rounds": "many"}, "relay.max_rounds must be a number"),
        ({"max_request_bytes": 10}, "relay.max_request_bytes must be from"),
        ({"on_search_error": "ignore"}, "relay.on_search_error"),
        ({"stream": "perhaps"}, "relay.stream must be true or false"),
        ({"search": {"type": "elastic"}}, "relay.search.type must be builtin or server"),
        (
            {"search": {"type": "server", "url": "http://s/v1/search", "auth": {"type": "iam", "apikey": "k"}}},
            "relay.search.auth.type must be none, basic, apikey or bearer",
        ),
        ({"search": {"mode": "fuzzy"}}, "relay.search.mode"),
        ({"search": {"url": "http://s"}}, "only for type = server"),
        ("[1, 2]", "relay must be a table"),
    ],
)
def test_bad_tables_name_the_key(raw: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RelayConfig.from_mapping(raw)


def test_from_settings_in_process_answers(tmp_path: Path) -> None:
    app, services = build_app(tmp_path)
    relay = Relay.from_settings(services.settings, services=services, app=app)
    assert isinstance(relay.provider, ServicesProvider)
    result = relay.send("How do I reset my password?")
    assert result.outcome == "answer" and "reset your password" in result.text
