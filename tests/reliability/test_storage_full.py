"""A full data directory: SQLite's "database or disk is full" (simulated with ``PRAGMA max_page_count``) and
Milvus Lite's ENOSPC are a 507 ``insufficient_storage``; ingestion leaves nothing half-written and searches go on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.errors import InsufficientStorage
from tests.conftest import make_services, make_settings

pytestmark = pytest.mark.unit


def _cap_database(services: Any) -> None:
    """From now on the metadata database cannot grow (each thread's connection; the test uses one)."""
    pages = services.store.execute("PRAGMA page_count").fetchone()[0]
    services.store.execute(f"PRAGMA max_page_count = {pages}")


@pytest.fixture
def app_services(tmp_path: Path) -> Any:
    from assistant_bridge.web.app import create_app

    settings = make_settings(tmp_path)
    services = make_services(settings)
    return create_app(settings, services), services


def test_ingestion_on_a_full_disk_is_507_and_leaves_nothing_behind(app_services: Any) -> None:
    app, services = app_services
    client = app.test_client()
    first = client.post("/v1/documents", json={"title": "Before", "text": "The heron survey starts in April."})
    assert first.status_code == 201
    chunks_before = services.backend.count()
    _cap_database(services)
    big = " ".join(f"Sentence {i} about the quarterly kumquat audit in the basement archive." for i in range(400))
    resp = client.post("/v1/documents", json={"title": "During", "text": big})
    assert resp.status_code == 507
    assert resp.get_json()["error"] == {
        "code": "insufficient_storage",
        "message": "the data directory is out of space; nothing was written",
    }
    assert services.backend.count() == chunks_before
    assert [d.title for d in services.store.list_documents()] == ["Before"]
    search = client.post("/v1/search", json={"query": "heron survey"})
    assert search.status_code == 200 and search.get_json()["search_results"][0]["title"] == "Before"
    assert client.get("/readyz").status_code == 200


def test_a_full_disk_after_the_chunks_are_written_rolls_them_back(app_services: Any, monkeypatch: Any) -> None:
    """The chunks reach the backend, then the document record cannot be written: the chunks are removed."""
    app, services = app_services

    def full(doc: Any) -> None:
        raise InsufficientStorage("the data directory is out of space; nothing was written")

    monkeypatch.setattr(services.store, "put_document", full)
    resp = app.test_client().post("/v1/documents", json={"title": "T", "text": "Orphans must not stay."})
    assert resp.status_code == 507
    assert services.backend.count() == 0


def test_sqlite_full_maps_to_insufficient_storage_and_other_errors_do_not(tmp_path: Path) -> None:
    import sqlite3

    services = make_services(make_settings(tmp_path))
    _cap_database(services)
    with pytest.raises(InsufficientStorage):
        services.store.execute("CREATE TABLE filler (x BLOB)")
        for _ in range(100):
            services.store.execute("INSERT INTO filler VALUES (?)", (b"x" * 100_000,))
    with pytest.raises(sqlite3.OperationalError):
        services.store.execute("SELECT * FROM no_such_table")


def test_milvus_out_of_space_is_insufficient_storage_other_failures_stay_503() -> None:
    from pymilvus.exceptions import MilvusException

    from assistant_bridge.backends.milvus import MilvusBackend
    from assistant_bridge.errors import BackendUnavailable

    backend = MilvusBackend("http://127.0.0.1:1", "chunks", 8)
    with pytest.raises(InsufficientStorage) as full:
        with backend._errors("upsert"):
            raise MilvusException(code=1, message="[Errno 28] No space left on device")
    assert full.value.status == 507
    with pytest.raises(BackendUnavailable) as down:
        with backend._errors("search"):
            raise MilvusException(code=2, message="Fail connecting to server on 127.0.0.1:1")
    assert down.value.status == 503 and not isinstance(down.value, InsufficientStorage)


def test_metric_files_live_off_the_data_disk_when_possible(tmp_path: Path, monkeypatch: Any) -> None:
    import tempfile

    from assistant_bridge.metrics import multiprocess_dir

    data = tmp_path / "data"
    first = multiprocess_dir(data)
    try:
        assert first.is_dir() and data not in first.parents and not list(first.iterdir())
    finally:
        first.rmdir()
    real = tempfile.mkdtemp

    def read_only_root(prefix: str = "", dir: str | None = None) -> str:
        if dir is None or dir == "/dev/shm":
            raise PermissionError(13, "read-only file system")
        return real(prefix=prefix, dir=dir)

    monkeypatch.setattr(tempfile, "mkdtemp", read_only_root)
    assert data in multiprocess_dir(data).parents  # the last resort
