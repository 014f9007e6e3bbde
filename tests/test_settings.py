from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.settings import Secret, load_settings

pytestmark = pytest.mark.unit


def test_defaults_file_and_env_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[server]\nport = 9000\nworkers = 3\n[backend]\nkind = "memory"\n')
    s = load_settings(cfg, env={"ASSISTANT_BRIDGE_SERVER__PORT": "9100"})
    assert (s.server.host, s.server.port, s.server.workers, s.backend.kind) == ("127.0.0.1", 9100, 3, "memory")


def test_yaml_and_keys_from_env(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("search:\n  default_limit: 4\n")
    env = {"ASSISTANT_BRIDGE_AUTH__KEYS": '[{"key": "abcdefghijk", "user_id": "u", "workspaces": ["w"]}]'}
    s = load_settings(cfg, env=env)
    assert s.search.default_limit == 4
    assert s.auth.keys[0].workspaces == ["w"] and isinstance(s.auth.keys[0].key, Secret)


def test_secrets_never_print(tmp_path: Path) -> None:
    s = load_settings(
        env={
            "ASSISTANT_BRIDGE_AUTH__KEYS": '[{"key": "supersecret-123", "user_id": "u"}]',
            "ASSISTANT_BRIDGE_BACKEND__ES_PASSWORD": "hunter2-pass",
        }
    )
    text = repr(s) + str(s.auth.keys) + repr(s.backend)
    assert "supersecret-123" not in text and "hunter2-pass" not in text
    assert s.auth.keys[0].key.get() == "supersecret-123"


@pytest.mark.parametrize(
    "env, fragment",
    [
        ({"ASSISTANT_BRIDGE_SERVER__PORT": "eighty"}, "server.port"),
        ({"ASSISTANT_BRIDGE_BACKEND__KIND": "oracle"}, "backend.kind"),
        ({"ASSISTANT_BRIDGE_SERVER__COLOUR": "red"}, "server.colour"),
        ({"ASSISTANT_BRIDGE_AUTH__KEYS": '[{"key": "short", "user_id": "u"}]'}, "too short"),
        ({"ASSISTANT_BRIDGE_AUTH__KEYS": "[not json"}, "invalid JSON"),
    ],
)
def test_bad_settings_are_clear(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment.replace(".", r"\.")):
        load_settings(env=env)


def test_exposure_check_refuses_public_bind_without_credentials() -> None:
    from assistant_bridge.cli import check_exposure

    with pytest.raises(ConfigurationError, match="without credentials"):
        check_exposure(load_settings(env={"ASSISTANT_BRIDGE_SERVER__HOST": "0.0.0.0"}))
    check_exposure(load_settings(env={"ASSISTANT_BRIDGE_SERVER__HOST": "::1"}))
    check_exposure(
        load_settings(
            env={
                "ASSISTANT_BRIDGE_SERVER__HOST": "0.0.0.0",
                "ASSISTANT_BRIDGE_AUTH__KEYS": '[{"key": "abcdefghij", "user_id": "u"}]',
            }
        )
    )


def test_unknown_top_level_keys_are_refused_and_feature_sections_kept(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[sever]\nport = 9000\n")
    with pytest.raises(ConfigurationError, match="unknown setting sever"):
        load_settings(cfg, env={})
    with pytest.raises(ConfigurationError, match="unknown setting server_port"):
        load_settings(env={"ASSISTANT_BRIDGE_SERVER_PORT": "9000"})  # one underscore too few
    with pytest.raises(ConfigurationError, match="unknown setting extra"):
        load_settings(env={}, overrides={"extra": {"tools": {}}})
    cfg.write_text("[tools]\nheartbeat_seconds = 5\n[relay]\nmax_rounds = 3\n")
    s = load_settings(cfg, env={"ASSISTANT_BRIDGE_AGENTIC__MAX_RESULTS": "9"})
    assert s.extra == {"tools": {"heartbeat_seconds": 5}, "relay": {"max_rounds": 3}, "agentic": {"max_results": "9"}}


def test_a_feature_section_from_one_variable_is_json() -> None:
    s = load_settings(
        env={
            "ASSISTANT_BRIDGE_RETRIEVERS": '{"hr": {"description": "HR"}}',
            "ASSISTANT_BRIDGE_TOOLS": '{"heartbeat_seconds": 5}',
        }
    )
    assert s.extra == {"retrievers": {"hr": {"description": "HR"}}, "tools": {"heartbeat_seconds": 5}}
    with pytest.raises(ConfigurationError, match="tools: invalid JSON"):
        load_settings(env={"ASSISTANT_BRIDGE_TOOLS": "heartbeat_seconds=5"})


def test_variables_that_are_not_settings_are_not_read_as_settings() -> None:
    env = {
        "ASSISTANT_BRIDGE_LOG_LEVEL": "DEBUG",
        "ASSISTANT_BRIDGE_LOG_FORMAT": "json",
        "ASSISTANT_BRIDGE_SCHEMA_DIR": "/srv/schemas",
        "ASSISTANT_BRIDGE_FILTERS_DIR": "/srv/models",
    }
    s = load_settings(env=env)
    assert s.extra == {} and s.server.log_level == "info"


def test_allow_anonymous_false_refuses_to_serve_without_credentials() -> None:
    from assistant_bridge.cli import check_exposure

    with pytest.raises(ConfigurationError, match="auth.allow_anonymous is false"):
        check_exposure(load_settings(env={"ASSISTANT_BRIDGE_AUTH__ALLOW_ANONYMOUS": "false"}))
    check_exposure(
        load_settings(
            env={
                "ASSISTANT_BRIDGE_AUTH__ALLOW_ANONYMOUS": "false",
                "ASSISTANT_BRIDGE_AUTH__KEYS": '[{"key": "abcdefghij", "user_id": "u"}]',
            }
        )
    )
    check_exposure(load_settings(env={}))  # loopback, anonymous allowed: the local default
