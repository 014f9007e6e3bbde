"""Failed logins are throttled per client address and per credential prefix, for every worker (the count
is in the shared store), with 429 and ``Retry-After``; a right credential from an address that is not
throttled is not slowed, and the window ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.store import SQLiteStore
from assistant_bridge.web.ratelimit import LoginThrottle
from tests.conftest import KEYS, headers_for, make_services, make_settings

pytestmark = pytest.mark.unit


def _app(tmp_path: Path, limit: int) -> Any:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, auth={"keys": KEYS, "failed_logins_per_minute": limit})
    return create_app(s, make_services(s))


def test_wrong_keys_from_one_address_are_throttled(tmp_path: Path) -> None:
    app = _app(tmp_path, 5)
    with app.test_client() as c:
        codes = [
            c.post("/v1/search", json={"query": "x"}, headers={"X-API-Key": f"guess-{i:08d}"}).status_code
            for i in range(8)
        ]
        assert codes == [401] * 5 + [429] * 3
        resp = c.post("/v1/search", json={"query": "x"}, headers=headers_for("alice"))
        assert resp.status_code == 429 and int(resp.headers["Retry-After"]) >= 1  # the address is held
        assert resp.get_json()["error"]["code"] == "rate_limited"
        other = c.post(
            "/v1/search", json={"query": "x"}, headers=headers_for("alice"), environ_base={"REMOTE_ADDR": "127.0.0.9"}
        )
        assert other.status_code == 200  # another client with the right key is served
        spread = [
            c.post(
                "/v1/search",
                json={"query": "x"},
                headers={"X-API-Key": "guess-00000000"},
                environ_base={"REMOTE_ADDR": f"127.0.1.{i}"},
            ).status_code
            for i in range(3)
        ]
        assert spread == [429] * 3  # the prefix "guess-" is held whatever the address


def test_the_throttle_is_shared_and_its_window_ends(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "meta.sqlite3")
    one, two = LoginThrottle(store, 3), LoginThrottle(SQLiteStore(tmp_path / "meta.sqlite3"), 3)  # two workers
    for _ in range(3):
        one.check("10.0.0.1", "abcdefgh", now=60.0)
        one.failed("10.0.0.1", "abcdefgh", now=60.0)
    with pytest.raises(Exception, match="too many failed logins"):
        two.check("10.0.0.1", "zzzzzz", now=61.0)
    two.check("10.0.0.1", "zzzzzz", now=121.0)  # the next minute


def test_no_throttle_without_credentials_configured(tmp_path: Path) -> None:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, auth={"failed_logins_per_minute": 1})
    with create_app(s, make_services(s)).test_client() as c:
        assert all(c.post("/v1/search", json={"query": "x"}).status_code == 200 for _ in range(3))
