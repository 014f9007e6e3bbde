"""Crash-safe ingestion: the intent record and the recovery pass (``Ingestor.recover``).

The unit tests stage what a crash leaves (an intent of a dead process, chunks without a document row, a
half-moved session attachment) and what a failing backend leaves (a rollback that failed too). The
integration test kills a real ingesting process with SIGKILL over a real Milvus Lite store."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.domain import Ownership, Principal, Scope
from assistant_bridge.errors import BackendUnavailable
from assistant_bridge.ingest.service import every_chunk
from assistant_bridge.workers import worker_alive, worker_id
from tests.conftest import make_services, make_settings

DEAD = f"{socket.gethostname()}:999999999:1"
LONG_TEXT = " ".join(f"Sentence number {i} of the long handbook about travel and expenses." for i in range(400))


@pytest.fixture
def svc(tmp_path: Path) -> Any:
    s = make_settings(tmp_path, ingest={"batch_size": 4})
    services = make_services(s)
    services.warm_up()
    return services


def _orphans(svc: Any) -> set[str]:
    """Documents that have chunks in the backend and no row in the store."""
    return {c.document_id for c in svc.backend._chunks.values()} - {d.id for d in svc.store.list_documents()}


class FailingAfter:
    """Upserts fail after ``n`` calls, deletes while ``down``: a side process that died mid-write."""

    def __init__(self, backend: Any, n: int) -> None:
        self.backend, self.n, self.down = backend, n, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def upsert(self, chunks: Any, vectors: Any) -> None:
        if self.n == 0:
            self.down = True
        if self.down:
            raise BackendUnavailable("Milvus upsert failed")
        self.n -= 1
        self.backend.upsert(chunks, vectors)

    def delete_document(self, document_id: str) -> int:
        if self.down:
            raise BackendUnavailable("Milvus delete failed")
        return int(self.backend.delete_document(document_id))


@pytest.mark.unit
def test_a_failed_rollback_leaves_an_intent_that_the_next_pass_settles(svc: Any) -> None:
    failing = FailingAfter(svc.backend, 2)
    svc.ingestor.backend = failing
    with pytest.raises(BackendUnavailable):
        svc.ingestor.ingest_text(LONG_TEXT, title="Handbook", ownership=Ownership())
    assert len(_orphans(svc)) == 1 and [i[2] for i in svc.store.intents()] == [""]  # abandoned, chunks left
    assert svc.ingestor.recover() == 0 and len(svc.store.intents()) == 1  # still down: kept for later
    failing.down = False
    assert svc.ingestor.recover() == 1
    assert _orphans(svc) == set() and svc.store.intents() == [] and svc.backend.count() == 0


@pytest.mark.unit
def test_chunks_of_a_dead_writer_are_removed_and_a_recorded_document_is_kept(svc: Any) -> None:
    done = svc.ingestor.ingest_text("The office closes on 25 December.", title="Holidays", ownership=Ownership())
    half = svc.ingestor.ingest_text(LONG_TEXT, title="Handbook", ownership=Ownership())
    live = svc.ingestor.ingest_text("Another text.", title="Live", ownership=Ownership())
    svc.store.begin_intent(done.document.id, "write", DEAD)  # killed after the row, before the intent went
    svc.store.delete_document(half.document.id)  # killed before the row was written
    svc.store.begin_intent(half.document.id, "write", DEAD)
    svc.store.delete_document(live.document.id)
    svc.store.begin_intent(live.document.id, "write", worker_id())  # this process: still writing it
    assert svc.ingestor.recover() == 2
    assert _orphans(svc) == {live.document.id}
    assert svc.store.get_document(done.document.id) is not None
    assert svc.backend.document_chunks(done.document.id, every_chunk(done.document))
    assert [i[0] for i in svc.store.intents()] == [live.document.id]


@pytest.mark.unit
def test_a_half_moved_session_attachment_gets_the_recorded_ownership_back(svc: Any) -> None:
    own = Ownership(owner_user_id="alice")
    doc = svc.ingestor.ingest_text(LONG_TEXT, title="Handbook", ownership=own).document
    chunks = svc.backend.document_chunks(doc.id, every_chunk(doc))
    moved = [replace(c, ownership=replace(own, session_id="s2")) for c in chunks[: len(chunks) // 2]]
    svc.backend.upsert(moved, svc.ingestor.embed_chunks(moved))
    svc.store.begin_intent(doc.id, "attach:s2", DEAD)
    assert svc.ingestor.recover() == 1
    after = {c.ownership for c in svc.backend._chunks.values() if c.document_id == doc.id}
    assert after == {own} and len(svc.backend.document_chunks(doc.id, every_chunk(doc))) == len(chunks)


@pytest.mark.unit
def test_an_attachment_whose_backend_fails_is_put_back_by_recovery(svc: Any) -> None:
    own = Ownership(owner_user_id="alice")
    doc = svc.ingestor.ingest_text(LONG_TEXT, title="Handbook", ownership=own).document
    svc.ingestor.backend = FailingAfter(svc.backend, 0)  # the chunks are read, their rewrite fails
    with pytest.raises(BackendUnavailable):
        svc.ingestor.attach_to_session(doc.id, "s9", Scope(principal=Principal("alice")))
    svc.ingestor.backend = svc.backend
    assert svc.ingestor.recover() == 1 and svc.store.get_document(doc.id).ownership == own  # type: ignore[union-attr]


@pytest.mark.unit
def test_worker_ids_tell_a_reused_pid_from_the_process_that_had_it() -> None:
    me = worker_id()
    host, pid, start = me.rsplit(":", 2)
    assert worker_alive(me) is True and int(pid) == os.getpid()
    assert worker_alive(f"{host}:{pid}:{int(start) + 1}") is False  # same pid, another process
    assert worker_alive(DEAD) is False and worker_alive("elsewhere:1:1") is None
    assert worker_alive(f"{host}:{pid}") is True  # the older host:pid form


CRASHING_INGEST = textwrap.dedent("""
    import sys
    from assistant_bridge.backends.milvus import MilvusBackend
    from assistant_bridge.domain import Ownership
    from assistant_bridge.embedders.base import HashingEmbedder
    from assistant_bridge.ingest.service import Ingestor
    from assistant_bridge.settings import IngestSettings
    from assistant_bridge.store import SQLiteStore
    data = sys.argv[1]
    backend = MilvusBackend(data + "/m.db", "chunks", 64)
    backend.warm_up()
    ingestor = Ingestor(backend, HashingEmbedder(64), SQLiteStore(data + "/meta.sqlite3"), IngestSettings(batch_size=4))
    ingestor.ingest_text(sys.argv[2], title="Handbook", ownership=Ownership())
    print("not killed")
""")


@pytest.mark.integration
@pytest.mark.slow
def test_kill_9_mid_document_over_milvus_lite_leaves_nothing_after_recovery(tmp_path: Path) -> None:
    """A real process writing to a real Milvus Lite store is killed (SIGKILL) after its first batch."""
    from assistant_bridge.backends.milvus import MilvusBackend
    from assistant_bridge.embedders.base import HashingEmbedder
    from assistant_bridge.ingest.service import Ingestor
    from assistant_bridge.store import SQLiteStore

    env = {**os.environ, "ASSISTANT_BRIDGE_FAULT": "ingest.after_batch:2"}
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_INGEST, str(tmp_path), LONG_TEXT], env=env, capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    backend = MilvusBackend(str(tmp_path / "m.db"), "chunks", 64)
    try:
        store = SQLiteStore(tmp_path / "meta.sqlite3")
        assert backend.count() == 8 and store.list_documents() == [] and len(store.intents()) == 1
        ingestor = Ingestor(backend, HashingEmbedder(64), store)
        assert ingestor.recover() == 1
        assert backend.count() == 0 and store.intents() == []
    finally:
        backend.close()


CRASHING_STAGED_INGEST = CRASHING_INGEST.replace(
    'backend = MilvusBackend(data + "/m.db", "chunks", 64)',
    "from assistant_bridge.backends.exact import ExactDenseBackend\n"
    'backend = ExactDenseBackend(MilvusBackend(data + "/m.db", "chunks", 64), data, 64)',
)


@pytest.mark.integration
@pytest.mark.slow
def test_kill_9_after_staging_leaves_nothing_searchable_after_recovery(tmp_path: Path) -> None:
    """The embedded default stages a document's chunks for lexical search before it embeds them; a writer
    killed (SIGKILL) right after staging leaves them only in the exact index's file, with the document's
    ``processing`` row, and recovery removes both."""
    from assistant_bridge.backends.exact import ExactDenseBackend
    from assistant_bridge.backends.milvus import MilvusBackend
    from assistant_bridge.domain import SearchQuery
    from assistant_bridge.embedders.base import HashingEmbedder
    from assistant_bridge.ingest.service import Ingestor
    from assistant_bridge.store import SQLiteStore

    assert CRASHING_STAGED_INGEST != CRASHING_INGEST
    env = {**os.environ, "ASSISTANT_BRIDGE_FAULT": "ingest.after_stage"}
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_STAGED_INGEST, str(tmp_path), LONG_TEXT],
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    backend = ExactDenseBackend(MilvusBackend(str(tmp_path / "m.db"), "chunks", 64), tmp_path, 64)
    try:
        backend.warm_up()
        store = SQLiteStore(tmp_path / "meta.sqlite3")
        scope = Scope(Principal("u"))
        lexical = SearchQuery(text="handbook travel expenses", scope=scope, mode="lexical")
        assert backend.inner.count() == 0 and len(store.intents()) == 1
        assert [d.status for d in store.list_documents()] == ["processing"]
        assert backend.search(lexical)  # staged: found by its words
        assert Ingestor(backend, HashingEmbedder(64), store).recover() == 1
        backend._build_lexical(backend._ensure_index())
        assert backend.search(lexical) == [] and store.intents() == [] and store.list_documents() == []
    finally:
        backend.close()
