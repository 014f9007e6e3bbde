"""The header forms watsonx Assistant can be set up to send an API key in, and the ``WWW-Authenticate``
challenge of every 401."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KEYS, make_services, make_settings

pytestmark = pytest.mark.unit
ALICE = "key-alice-0001"


@pytest.fixture
def c(tmp_path: Path) -> Any:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, auth={"keys": KEYS})
    with create_app(s, make_services(s)).test_client() as client:
        yield client


def _basic(user: str, pwd: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{pwd}".encode()).decode()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-API-Key": ALICE},
        {"Authorization": f"ApiKey {ALICE}"},
        {"Authorization": f"apikey {ALICE}"},
        {"Authorization": f"Bearer {ALICE}"},
        {"Authorization": _basic("apikey", ALICE)},
    ],
)
def test_an_api_key_in_any_form_watsonx_can_send(c: Any, headers: dict[str, str]) -> None:
    resp = c.post("/v1/search", json={"query": "x"}, headers=headers)
    assert resp.status_code == 200, resp.get_json()


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-API-Key": "wrong-key-0001"},
        {"Authorization": "ApiKey wrong-key-0001"},
        {"Authorization": _basic("alice", ALICE)},  # Basic only with the apikey user name
        {"Authorization": _basic("apikey", "wrong-key-0001")},
        {"Authorization": "Basic !!!not-base64"},
    ],
)
def test_wrong_forms_are_401_with_a_challenge(c: Any, headers: dict[str, str]) -> None:
    resp = c.post("/v1/search", json={"query": "x"}, headers=headers)
    assert resp.status_code == 401
    challenge = resp.headers["WWW-Authenticate"]
    assert (
        'Basic realm="assistant-bridge"' in challenge
        and 'ApiKey realm="assistant-bridge", header="X-API-Key"' in challenge
    )
    assert 'Bearer realm="assistant-bridge"' in challenge
    agentic = c.post("/agenticRetrieveStream", json={}, headers=headers)
    assert agentic.status_code == 401 and "WWW-Authenticate" in agentic.headers
