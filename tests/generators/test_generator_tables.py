"""The generator tables of the settings (``agentic.generator``, ``assistants.<id>.generator``) are read with
the types their kind declares: numbers set one key at a time from the environment become numbers, the API key
a secret, and a wrong value, an unknown key or an unknown kind stops start-up naming the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.agentic.runtime import AgenticRuntime, AgenticSettings
from assistant_bridge.conversation.assistants import load_assistants
from assistant_bridge.conversation.runtime import ConversationRuntime
from assistant_bridge.generators import generator_table
from assistant_bridge.generators.openai_chat import OpenAIChatGenerator
from assistant_bridge.settings import Secret
from tests.conftest import env_settings, make_services, refused

pytestmark = pytest.mark.unit


def test_values_are_read_as_their_declared_types() -> None:
    got = generator_table(
        {
            "kind": "openai",
            "base_url": "http://x/v1",
            "model": "m",
            "api_key": "sk-1",
            "timeout": "5",
            "max_retries": "0",
            "temperature": "0.2",
            "headers": '{"X-Team": "hr"}',
        },
        "g",
    )
    assert got["timeout"] == 5.0 and isinstance(got["timeout"], float)
    assert got["max_retries"] == 0 and got["temperature"] == 0.2 and got["headers"] == {"X-Team": "hr"}
    assert isinstance(got["api_key"], Secret) and "sk-1" not in repr(got)
    assert generator_table(None, "g") == {"kind": "extractive"}  # only the keys given: defaults stay the generator's
    assert generator_table({"kind": "fake", "declined": "true", "chunk_chars": "4"}, "g") == {
        "kind": "fake",
        "declined": True,
        "chunk_chars": 4,
    }
    assert generator_table({"kind": "default", "w_embed": "0.25", "embedder": "none"}, "g")["w_embed"] == 0.25


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"kind": "openai", "timeout": "soon"}, "g.timeout"),
        ({"kind": "openai", "max_retries": "1.5"}, "g.max_retries"),
        ({"kind": "openai", "timeout_seconds": 5}, "g.timeout_seconds"),
        ({"kind": "extractive", "base_url": "http://x"}, "g.base_url"),
        ({"kind": "fake", "declined": "perhaps"}, "g.declined"),
        ({"kind": "gpt"}, "g: unknown generator kind 'gpt'"),
        ("not json", "g: invalid JSON"),
    ],
)
def test_a_bad_value_names_its_key(raw: Any, key: str) -> None:
    with refused(key):
        generator_table(raw, "g")


# ------------------------------------------------------------------------------------------------ agentic
def test_agentic_generator_keys_from_environment_variables(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        AGENTIC__GENERATOR__KIND="openai",
        AGENTIC__GENERATOR__BASE_URL="http://127.0.0.1:9/v1",
        AGENTIC__GENERATOR__MODEL="m",
        AGENTIC__GENERATOR__TIMEOUT="5",
        AGENTIC__GENERATOR__MAX_RETRIES="0",
        AGENTIC__GENERATOR__API_KEY="sk-agentic-1",
    )
    rt = AgenticRuntime(make_services(s))
    assert rt.settings.generator is not None and rt.settings.generator["timeout"] == 5.0
    assert "sk-agentic-1" not in repr(rt.settings)
    gen = rt.generator()
    assert isinstance(gen, OpenAIChatGenerator) and gen.max_retries == 0 and gen.chat.timeout.read == 5.0


@pytest.mark.parametrize(
    "env, key",
    [
        ({"AGENTIC__GENERATOR__KIND": "openai", "AGENTIC__GENERATOR__TIMEOUT": "soon"}, "agentic.generator.timeout"),
        (
            {"AGENTIC__GENERATOR__KIND": "openai", "AGENTIC__GENERATOR__MAX_RETRIES": "x"},
            "agentic.generator.max_retries",
        ),
        ({"AGENTIC__GENERATOR__TIMEOUT": "5"}, "agentic.generator.timeout"),  # not a key of the extractive generator
        ({"AGENTIC__GENERATOR__KIND": "gpt"}, "agentic.generator: unknown generator kind"),
    ],
)
def test_agentic_generator_bad_values_name_the_key(tmp_path: Path, env: dict[str, str], key: str) -> None:
    with refused(key):
        AgenticSettings.from_table(env_settings(tmp_path, **env).extra["agentic"])


# --------------------------------------------------------------------------------------------- assistants
def test_assistant_generator_keys_from_environment_variables(tmp_path: Path) -> None:
    s = env_settings(
        tmp_path,
        ASSISTANTS__HR__GENERATOR__KIND="openai",
        ASSISTANTS__HR__GENERATOR__BASE_URL="http://127.0.0.1:9/v1",
        ASSISTANTS__HR__GENERATOR__MODEL="m",
        ASSISTANTS__HR__GENERATOR__TIMEOUT="5",
        ASSISTANTS__HR__GENERATOR__CONNECT_TIMEOUT="1.5",
        ASSISTANTS__HR__GENERATOR__MAX_RETRIES="0",
        ASSISTANTS__HR__GENERATOR__API_KEY="sk-hr-1",
    )
    hr = load_assistants(s).get("hr")
    assert hr.generator["timeout"] == 5.0 and hr.generator["max_retries"] == 0
    assert isinstance(hr.generator["api_key"], Secret) and "sk-hr-1" not in repr(hr)
    gen = ConversationRuntime._make_generator(hr)
    assert isinstance(gen, OpenAIChatGenerator) and gen.chat.timeout.read == 5.0 and gen.chat.timeout.connect == 1.5


@pytest.mark.parametrize(
    "env, key",
    [
        (
            {"ASSISTANTS__HR__GENERATOR__KIND": "openai", "ASSISTANTS__HR__GENERATOR__TIMEOUT": "soon"},
            "assistants.hr.generator.timeout",
        ),
        (
            {"ASSISTANTS__HR__GENERATOR__KIND": "openai", "ASSISTANTS__HR__GENERATOR__COLOUR": "blue"},
            "assistants.hr.generator.colour",
        ),
        (
            {
                "ASSISTANTS__HR__ENVIRONMENTS__LIVE__GENERATOR__KIND": "fake",
                "ASSISTANTS__HR__ENVIRONMENTS__LIVE__GENERATOR__CHUNK_CHARS": "many",
            },
            "assistants.hr.environments.live.generator.chunk_chars",
        ),
    ],
)
def test_assistant_generator_bad_values_name_the_key(tmp_path: Path, env: dict[str, str], key: str) -> None:
    with refused(key):
        load_assistants(env_settings(tmp_path, **env))


def test_every_weight_and_floor_of_the_extractive_generator_is_a_setting() -> None:
    from dataclasses import fields

    from assistant_bridge.generators.extractive import Tuning
    from assistant_bridge.generators.options import OPTION_TYPES

    assert {f.name for f in fields(Tuning)} <= set(OPTION_TYPES["extractive"])
    assert generator_table({"w_name": "0.4", "w_off_page": 0}, "generator") == {
        "kind": "extractive",
        "w_name": 0.4,
        "w_off_page": 0.0,
    }
