"""Shared fixtures: Flask-style ``app``/``client`` over the in-memory backend and the hashing embedder,
and principals/credentials for the scope tests."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.backends.memory import MemoryBackend
from assistant_bridge.embedders.base import HashingEmbedder
from assistant_bridge.errors import ConfigurationError
from assistant_bridge.services import Services
from assistant_bridge.settings import ENV_PREFIX, Settings, load_settings
from assistant_bridge.store import SQLiteStore

# background threads (Milvus Lite, executions) may log after pytest closed its capture streams
logging.raiseExceptions = False

KEYS = [
    {"key": "key-alice-0001", "user_id": "alice", "workspaces": ["w-sales"]},
    {"key": "key-bob-000001", "user_id": "bob", "workspaces": ["w-eng"]},
    {"key": "key-admin-0001", "user_id": "admin", "admin": True},
    {"key": "key-service-01", "user_id": "svc", "service": True, "kind": "bearer"},
    {"key": "key-basic-0001", "user_id": "carol", "kind": "basic", "username": "carol"},
]


def _local(tmp_path: Path) -> dict[str, Any]:
    """The settings every test starts from: data under ``tmp_path``, the in-memory backend, the hashing
    embedder; failed logins are not throttled (tests send many wrong credentials on purpose; the throttle has
    its own tests)."""
    return {
        "data_dir": str(tmp_path / "data"),
        "backend": {"kind": "memory"},
        "embedder": {"kind": "hashing"},
        "auth": {"failed_logins_per_minute": 0},
    }


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base = _local(tmp_path)
    for k, v in overrides.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = {**base[k], **v}
        else:
            base[k] = v
    return load_settings(env={}, overrides=base)


def env_settings(tmp_path: Path, **env: str) -> Settings:
    """Settings from environment variables ``env`` (names without the ``ASSISTANT_BRIDGE_`` prefix) over the
    in-memory test backend."""
    return load_settings(env={ENV_PREFIX + k: v for k, v in env.items()}, overrides=_local(tmp_path))


def refused(key: str) -> Any:
    """``pytest.raises`` for a ConfigurationError that names ``key``."""
    return pytest.raises(ConfigurationError, match=re.escape(key))


def make_services(settings: Settings, dim: int = 64) -> Services:
    emb = HashingEmbedder(dim)
    return Services.from_settings(
        settings, embedder=emb, backend=MemoryBackend(dim), store=SQLiteStore(settings.data_path / "meta.sqlite3")
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def services(settings: Settings) -> Services:
    return make_services(settings)


@pytest.fixture
def app(settings: Settings, services: Services) -> Any:
    from assistant_bridge.web.app import create_app

    app = create_app(settings, services)
    app.config["TESTING"] = True
    return app


@pytest.fixture
def client(app: Any) -> Iterator[Any]:
    with app.test_client() as c:
        yield c


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[Any]:
    """A client for an app with the five credentials of ``KEYS``."""
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, auth={"keys": KEYS})
    app = create_app(s, make_services(s))
    with app.test_client() as c:
        yield c


def headers_for(who: str, end_user: str | None = None) -> dict[str, str]:
    h: dict[str, str] = {}
    if who == "alice":
        h["X-API-Key"] = "key-alice-0001"
    elif who == "bob":
        h["X-API-Key"] = "key-bob-000001"
    elif who == "admin":
        h["X-API-Key"] = "key-admin-0001"
    elif who == "service":
        h["Authorization"] = "Bearer key-service-01"
    elif who == "carol":
        h["Authorization"] = "Basic " + base64.b64encode(b"carol:key-basic-0001").decode()
    if end_user:
        h["X-End-User-ID"] = end_user
    return h


def post_document(client: Any, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    """``POST /v1/documents`` as a client would: a queued (202) document is followed to the end of its job.
    Returns the response of the POST, or of the job once done (its ``document`` is the record)."""
    import time

    resp = client.post("/v1/documents", json=body, headers=headers or {})
    if resp.status_code != 202:
        return resp
    location = resp.headers["Location"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(location, headers=headers or {})
        if job.get_json()["status"] not in ("queued", "running"):
            assert job.get_json()["status"] == "done", job.get_json()
            return job
        time.sleep(0.02)
    raise AssertionError(f"the ingestion job {location} did not end within 60 s")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test is ``unit`` (fakes only: no server, no model) or ``integration`` (a real server or model),
    never both and never neither, so ``-m unit`` is a fast run that starts nothing."""
    wrong = []
    for item in items:
        kinds = {m.name for m in item.iter_markers()} & {"unit", "integration"}
        if len(kinds) != 1:
            wrong.append(f"{item.nodeid}: {' and '.join(sorted(kinds)) or 'neither unit nor integration'}")
    if wrong:
        raise pytest.UsageError("tests must be marked unit or integration:\n" + "\n".join(wrong[:20]))
