"""Credentials: static kinds, the IAM API-key exchange with caching until expiry, settings tables."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.relay.auth import (
    IAM_GRANT_TYPE,
    ApiKeyHeader,
    BasicAuth,
    BearerToken,
    IAMToken,
    NoAuth,
    credentials_from_config,
)
from assistant_bridge.relay.errors import AssistantUnavailable, TokenExchangeFailed

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def iam(answers: list[Any], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers[min(len(seen) - 1, len(answers) - 1)]
        if isinstance(answer, Exception):
            raise answer
        return answer if isinstance(answer, httpx.Response) else httpx.Response(200, json=answer)

    return httpx.MockTransport(handler)


def test_static_credentials_and_their_reprs_hide_secrets() -> None:
    assert NoAuth().headers() == {}
    assert BearerToken("tok-123").headers() == {"Authorization": "Bearer tok-123"}
    assert ApiKeyHeader("k-1", "X-Key").headers() == {"X-Key": "k-1"}
    basic = BasicAuth("apikey", "s3cret")
    assert basic.headers()["Authorization"] == "Basic " + base64.b64encode(b"apikey:s3cret").decode()
    for cred in (BearerToken("tok-123"), ApiKeyHeader("k-1"), basic, IAMToken("key-xyz")):
        assert "tok-123" not in repr(cred) and "k-1" not in repr(cred) and "s3cret" not in repr(cred)
        assert "key-xyz" not in repr(cred)


def test_iam_exchanges_the_key_once_and_caches_until_shortly_before_expiry() -> None:
    seen: list[httpx.Request] = []
    clock = Clock()
    answers = [
        {"access_token": "t1", "expires_in": 3600, "expiration": clock.now + 3600, "token_type": "Bearer"},
        {"access_token": "t2", "expires_in": 3600},
    ]
    cred = IAMToken("my-api-key", "https://iam.test/identity/token", transport=iam(answers, seen), clock=clock)
    assert cred.headers() == {"Authorization": "Bearer t1"}
    clock.now += 3000
    assert cred.headers() == {"Authorization": "Bearer t1"} and cred.exchanges == 1
    clock.now += 550  # 50 s before expiry: inside the refresh margin
    assert cred.headers() == {"Authorization": "Bearer t2"} and cred.exchanges == 2
    form = parse_qs(seen[0].content.decode())
    assert form == {"grant_type": [IAM_GRANT_TYPE], "apikey": ["my-api-key"]}
    assert seen[0].headers["content-type"] == "application/x-www-form-urlencoded"
    assert str(seen[0].url) == "https://iam.test/identity/token"


def test_iam_without_expiry_fields_uses_an_hour() -> None:
    clock = Clock()
    cred = IAMToken("k", transport=iam([{"access_token": "t"}], []), clock=clock)
    cred.token()
    clock.now += 3500
    cred.token()
    assert cred.exchanges == 1
    clock.now += 60
    cred.token()
    assert cred.exchanges == 2


def test_iam_retries_connection_errors_but_not_refusals() -> None:
    seen: list[httpx.Request] = []
    cred = IAMToken(
        "k", transport=iam([httpx.ConnectError("refused"), {"access_token": "t"}], seen), sleep=lambda s: None
    )
    assert cred.token().get() == "t" and len(seen) == 2

    seen = []
    cred = IAMToken("k", transport=iam([httpx.Response(400, json={"errorMessage": "bad key"})], seen))
    with pytest.raises(TokenExchangeFailed) as err:
        cred.token()
    assert err.value.details["status"] == 400 and len(seen) == 1

    cred = IAMToken("k", retries=1, transport=iam([httpx.ConnectError("refused")], []), sleep=lambda s: None)
    with pytest.raises(AssistantUnavailable):
        cred.token()


@pytest.mark.parametrize(
    "answer",
    [httpx.Response(200, text="<html>"), httpx.Response(200, json={"token": "x"}), httpx.Response(200, json=["x"])],
)
def test_iam_garbage_is_a_clear_error(answer: httpx.Response) -> None:
    with pytest.raises(TokenExchangeFailed):
        IAMToken("k", transport=iam([answer], [])).token()


def test_credentials_from_config() -> None:
    assert isinstance(credentials_from_config(None, "relay.auth"), NoAuth)
    assert credentials_from_config({"type": "bearer", "token": "t"}, "a").headers() == {"Authorization": "Bearer t"}
    assert credentials_from_config({"type": "apikey", "apikey": "k", "header": "X-K"}, "a").headers() == {"X-K": "k"}
    assert isinstance(credentials_from_config({"type": "iam", "apikey": "k", "token_url": "https://i"}, "a"), IAMToken)
    with pytest.raises(ConfigurationError, match="relay.auth.token is required"):
        credentials_from_config({"type": "bearer"}, "relay.auth")
    with pytest.raises(ConfigurationError, match="relay.auth.type must be"):
        credentials_from_config({"type": "oauth"}, "relay.auth")
    with pytest.raises(ConfigurationError, match="unknown setting relay.auth.tokn"):
        credentials_from_config({"type": "bearer", "tokn": "x"}, "relay.auth")
