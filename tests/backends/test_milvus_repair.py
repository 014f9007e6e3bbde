"""A Milvus Lite store whose index file a crash left empty loads again: the indexes are set aside and rebuilt.

Measured before the fix: a SIGKILL right after a flush left an empty ``*.sidx`` about one time in six, and
every later start failed with ``LoadCollection failed: No data left in file``. The test stages that file
directly on a real embedded Milvus Lite store."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from assistant_bridge.backends.milvus import MilvusBackend
from assistant_bridge.domain import Chunk, Ownership, Principal, Scope, SearchQuery

pytestmark = pytest.mark.integration


def test_an_index_file_cut_by_a_crash_is_rebuilt(tmp_path: Path) -> None:
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    db = tmp_path / "milvus.db"
    first = MilvusBackend(str(db), "chunks", 8, write_lock_path=tmp_path / "w.lock")
    first.warm_up()
    chunks = [
        Chunk(
            id=f"c{i}", document_id=f"d{i}", title=f"T{i}", text=f"text number {i}", position=0, ownership=Ownership()
        )
        for i in range(6)
    ]
    first.upsert(chunks, np.eye(8, dtype=np.float32)[:6])
    first.close()
    files = sorted(p for p in db.rglob("indexes/*") if p.is_file() and p.stat().st_size > 0)
    assert files, "the store has index files"
    files[0].write_bytes(b"")  # what a process killed while writing it leaves
    again = MilvusBackend(str(db), "chunks", 8, write_lock_path=tmp_path / "w.lock")
    again.warm_up()
    try:
        assert again.count() == 6
        scope = Scope(Principal("u"))
        hit = again.search(
            SearchQuery(text="x", scope=scope, mode="dense", limit=1, vector=tuple([0.0] * 3 + [1.0] + [0.0] * 4))
        )
        assert hit[0].chunk.id == "c3"
        assert again.search(SearchQuery(text="number 5", scope=scope, mode="lexical", limit=6))
        assert list(db.rglob("indexes.set-aside-*")), "the damaged indexes are kept aside, not deleted"
    finally:
        again.close()


def test_a_collection_another_process_created_meanwhile_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``serve`` and its ingest worker warm up together: one checks for the collection, the other creates it,
    the first one's create then fails ("File exists" from the side process). It must use the collection."""
    from pymilvus.exceptions import MilvusException

    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    db = tmp_path / "milvus.db"
    other = MilvusBackend(str(db), "chunks", 8, write_lock_path=tmp_path / "w.lock")
    other.warm_up()  # the other process, done first
    other.close()
    late = MilvusBackend(str(db), "chunks", 8, write_lock_path=tmp_path / "w.lock")
    client = late._connect()
    real_has = client.has_collection
    checks: list[str] = []

    def has_collection(name: str, **kw: object) -> bool:
        checks.append(name)  # the first check ran before the other process created it
        return False if len(checks) == 1 else bool(real_has(name, **kw))

    monkeypatch.setattr(client, "has_collection", has_collection)

    def create(_client: object) -> None:
        raise MilvusException(code=1, message="[Errno 17] File exists")

    monkeypatch.setattr(late, "_create", create)
    late.warm_up()
    try:
        assert late.count() == 0
    finally:
        late.close()


def test_a_search_of_a_released_collection_loads_it_and_is_answered(tmp_path: Path) -> None:
    """Milvus answers a read of a released collection with an error (a server that restarted, another client
    that released it, a caller that never warmed up). The read that met it is answered: the collection is
    loaded again and the read run once more."""
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    backend = MilvusBackend(str(tmp_path / "milvus.db"), "chunks", 8, write_lock_path=tmp_path / "w.lock")
    backend.warm_up()
    try:
        chunks = [
            Chunk(
                id=f"c{i}",
                document_id=f"d{i}",
                title=f"T{i}",
                text=f"text number {i}",
                position=0,
                ownership=Ownership(),
            )
            for i in range(3)
        ]
        backend.upsert(chunks, np.eye(8, dtype=np.float32)[:3])
        backend.flush()
        scope = Scope(Principal("u"))
        for read in (
            lambda: backend.search(SearchQuery(text="number 2", scope=scope, mode="lexical", limit=3)),
            lambda: backend.get_chunks(["c1"], scope),
            backend.count,
        ):
            backend._connect().release_collection("chunks")
            assert read()
        # the reload runs inside a request: it waits at most backend.timeout, never pymilvus's minutes of retries
        client = backend._connect()
        seen: list[object] = []
        load = client.load_collection
        client.load_collection = lambda name, **kw: seen.append(kw.get("timeout")) or load(name, **kw)
        client.release_collection("chunks")
        assert backend.search(SearchQuery(text="number 1", scope=scope, mode="lexical", limit=3))
        assert seen == [backend._timeout]
    finally:
        backend.close()
