"""The durable ingestion queue (``assistant_bridge.ingest.queue``) and its routes: 202 with a job, progress,
cancellation, a worker that died, failures, and a restart with jobs still queued."""

from __future__ import annotations

import io
import socket
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assistant_bridge.backends.memory import MemoryBackend
from assistant_bridge.domain import Ownership, Principal, Scope
from assistant_bridge.embedders.base import HashingEmbedder
from assistant_bridge.errors import DocumentProcessing
from assistant_bridge.ingest.queue import MAX_ATTEMPTS, job_json
from assistant_bridge.text import option_entries
from assistant_bridge.validation import validate
from assistant_bridge.web.app import create_app
from tests.conftest import KEYS, headers_for, make_services, make_settings

pytestmark = pytest.mark.unit

DEAD = f"{socket.gethostname()}:999999999:1"
OWNER = Principal("alice", key_id="k1").owner_key
LONG = " ".join(f"Sentence {i} of the long handbook about travel, meals and lodging." for i in range(300))


@pytest.fixture
def svc(tmp_path: Path) -> Any:
    s = make_services(make_settings(tmp_path, ingest={"sync_max_bytes": 1000}))
    s.warm_up()
    return s


def test_a_queued_text_is_ingested_by_run_one(svc: Any) -> None:
    job = svc.queue.submit_text(OWNER, LONG, Ownership(owner_user_id="alice"), title="Handbook", fmt="text", url=None)
    assert job["state"] == "queued" and svc.backend.count() == 0
    assert (svc.queue.spool / job["payload"]).exists()
    assert svc.queue.run_one() is True and svc.queue.run_one() is False
    done = svc.queue.get(job["id"], OWNER)
    assert done["state"] == "done" and done["created"] == 1
    doc = svc.store.get_document(done["document_id"])
    assert doc is not None and doc.chunk_count == done["chunks_total"] == done["chunks_done"] == svc.backend.count()
    assert not (svc.queue.spool / job["payload"]).exists()


def test_another_caller_cannot_see_or_cancel_a_job(svc: Any) -> None:
    job = svc.queue.submit_text(OWNER, LONG, Ownership(owner_user_id="alice"), title="H", fmt="text", url=None)
    other = Principal("alice", key_id="k2", tenant="t9").owner_key
    for action in (svc.queue.get, svc.queue.cancel):
        with pytest.raises(Exception, match="not found"):
            action(job["id"], other)


def test_cancelling_a_queued_job_ends_it_and_keeps_nothing(svc: Any) -> None:
    job = svc.queue.submit_text(OWNER, LONG, Ownership(), title="H", fmt="text", url=None)
    out = svc.queue.cancel(job["id"], OWNER)
    assert out["state"] == "cancelled" and out["error_code"] == "cancelled"
    assert svc.queue.run_one() is False and svc.backend.count() == 0
    assert not (svc.queue.spool / job["payload"]).exists()


class SlowEmbedder(HashingEmbedder):
    """Blocks in its second call until released: a job stays in ``embedding`` while the test acts."""

    def __init__(self) -> None:
        super().__init__(64)
        self.calls = 0
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_passages(self, texts: Any) -> np.ndarray:
        self.calls += 1
        if self.calls == 2:
            self.entered.set()
            self.release.wait(10)
        return super().embed_passages(texts)


def test_cancelling_a_running_job_stops_it_before_anything_is_written(tmp_path: Path) -> None:
    svc = make_services(make_settings(tmp_path))
    slow = SlowEmbedder()
    svc.embedder = svc.ingestor.embedder = slow
    svc.warm_up()
    job = svc.queue.submit_text(OWNER, LONG, Ownership(), title="H", fmt="text", url=None)
    worker = threading.Thread(target=svc.queue.run_one)
    worker.start()
    assert slow.entered.wait(10)
    running = svc.queue.get(job["id"], OWNER)
    assert running["state"] == "running" and running["stage"] == "embedding" and running["chunks_total"] > 16
    svc.queue.cancel(job["id"], OWNER)
    slow.release.set()
    worker.join(10)
    out = svc.queue.get(job["id"], OWNER)
    assert out["state"] == "cancelled" and svc.backend.count() == 0 and svc.store.list_documents() == []


def test_a_job_of_a_dead_worker_is_queued_again_then_given_up(svc: Any) -> None:
    job = svc.queue.submit_text(OWNER, LONG, Ownership(), title="H", fmt="text", url=None)
    svc.store.execute("UPDATE ingest_jobs SET state='running', worker=?, attempts=1 WHERE id=?", (DEAD, job["id"]))
    assert svc.queue.requeue_orphans() == 1
    assert svc.queue.get(job["id"], OWNER)["state"] == "queued"
    assert svc.queue.run_one() and svc.queue.get(job["id"], OWNER)["state"] == "done"
    again = svc.queue.submit_text(OWNER, LONG + " more", Ownership(), title="H2", fmt="text", url=None)
    svc.store.execute(
        "UPDATE ingest_jobs SET state='running', worker=?, attempts=? WHERE id=?", (DEAD, MAX_ATTEMPTS, again["id"])
    )
    svc.queue.requeue_orphans()
    gone = svc.queue.get(again["id"], OWNER)
    assert gone["state"] == "failed" and gone["error_code"] == "worker_lost"


def test_a_failing_document_fails_its_job_with_the_reason(svc: Any) -> None:
    svc.ingestor.settings.max_chunks_per_document = 2
    big = svc.queue.submit_text(OWNER, LONG, Ownership(), title="H", fmt="text", url=None)
    pdf = svc.queue.submit_bytes(
        OWNER, "broken.pdf", b"%PDF-1.7 not really", Ownership(), title=None, url=None, mime_type="application/pdf"
    )
    while svc.queue.run_one():
        pass
    assert svc.queue.get(big["id"], OWNER)["error_code"] == "too_many_chunks"
    assert svc.queue.get(pdf["id"], OWNER)["error_code"] == "document_unreadable"
    assert svc.backend.count() == 0


def test_queued_jobs_survive_a_restart(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    first = make_services(settings)
    job = first.queue.submit_text(OWNER, LONG, Ownership(), title="H", fmt="text", url=None)
    second = make_services(settings)  # a new process over the same data directory
    assert second.queue.run_one() and second.queue.get(job["id"], OWNER)["state"] == "done"


# --------------------------------------------------------------------------------------------- the routes


@pytest.fixture
def web(tmp_path: Path) -> Any:
    settings = make_settings(tmp_path, auth={"keys": KEYS}, ingest={"sync_max_bytes": 1000})
    services = make_services(settings)
    return create_app(settings, services).test_client(), services


def _wait(client: Any, location: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        job: dict[str, Any] = client.get(location, headers=headers).get_json()
        if job["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def test_a_large_text_answers_202_and_the_job_ends_with_the_document(web: Any) -> None:
    client, services = web
    alice = headers_for("alice")
    resp = client.post("/v1/documents", json={"title": "Handbook", "text": LONG}, headers=alice)
    assert resp.status_code == 202
    validate("ingest_job", resp.get_json()["job"])
    job = _wait(client, resp.headers["Location"], alice)
    validate("ingest_job", job)
    assert job["status"] == "done" and job["document"]["title"] == "Handbook" and job["created"] is True
    assert client.get(resp.headers["Location"], headers=headers_for("bob")).status_code == 404
    again = client.post("/v1/documents", json={"title": "Handbook", "text": LONG}, headers=alice)
    assert again.status_code == 200 and again.get_json()["created"] is False  # already there: no new job


def test_small_texts_stay_synchronous_unless_asked(web: Any) -> None:
    client, _ = web
    alice = headers_for("alice")
    assert client.post("/v1/documents", json={"title": "S", "text": "Short."}, headers=alice).status_code == 201
    queued = client.post("/v1/documents?wait=false", json={"title": "S2", "text": "Short too."}, headers=alice)
    assert queued.status_code == 202
    assert _wait(client, queued.headers["Location"], alice)["status"] == "done"
    bad = client.post("/v1/documents?wait=maybe", json={"title": "S3", "text": "x"}, headers=alice)
    assert bad.status_code == 400 and bad.get_json()["error"]["code"] == "validation_error"


def test_a_large_upload_is_queued_and_a_cancel_of_a_finished_job_changes_nothing(web: Any) -> None:
    client, services = web
    alice = headers_for("alice")
    data = {"file": (io.BytesIO((LONG * 2).encode()), "manual.txt")}
    resp = client.post("/v1/documents", data=data, content_type="multipart/form-data", headers=alice)
    assert resp.status_code == 202
    job = _wait(client, resp.headers["Location"], alice)
    assert job["status"] == "done" and job["filename"] == "manual.txt"
    after = client.delete(resp.headers["Location"], headers=alice).get_json()
    assert after["status"] == "done"
    assert client.get("/v1/ingest-jobs/" + "0" * 32, headers=alice).status_code == 404


def test_the_in_process_worker_thread_ends_when_idle_and_starts_again(svc: Any) -> None:
    svc.queue.start_thread()
    first = svc.queue._thread
    assert first is not None
    first.join(0.1)
    svc.queue._stop.set()  # stands for 30 idle seconds: the loop ends
    svc.queue._wake.set()
    first.join(5)
    assert not first.is_alive()
    svc.queue._stop.clear()
    job = svc.queue.submit_text(OWNER, LONG, Ownership(), title="H", fmt="text", url=None)
    svc.queue.start_thread()
    deadline = time.monotonic() + 10
    while svc.queue.get(job["id"], OWNER)["state"] != "done" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert svc.queue.get(job["id"], OWNER)["state"] == "done"
    svc.queue.stop()


def test_work_forever_returns_after_its_idle_time(svc: Any) -> None:
    started = time.monotonic()
    svc.queue.work_forever(poll=0.02, idle_exit=0.2)
    assert 0.15 < time.monotonic() - started < 5 and svc.queue._thread is None


class StagingMemory(MemoryBackend):
    """A memory backend that stages chunks (``ExactDenseBackend.stage`` is the real one): staged chunks are
    stored with zero vectors, so lexical searches find them."""

    def __init__(self) -> None:
        super().__init__(64)
        self.staged: list[str] = []

    def stage(self, chunks: Any) -> None:
        self.staged += [c.id for c in chunks]
        self.upsert(chunks, np.zeros((len(chunks), 64), dtype=np.float32))


def _staging_services(tmp_path: Path) -> tuple[Any, SlowEmbedder]:
    svc = make_services(make_settings(tmp_path))
    slow = SlowEmbedder()
    svc.embedder = svc.ingestor.embedder = slow
    svc.backend = svc.ingestor.backend = StagingMemory()
    svc.warm_up()
    return svc, slow


def test_a_document_is_searchable_by_its_words_while_it_is_embedded(tmp_path: Path) -> None:
    svc, slow = _staging_services(tmp_path)
    job = svc.queue.submit_text(OWNER, LONG, Ownership(), title="Handbook", fmt="text", url=None)
    assert svc.queue.get(job["id"], OWNER)["searchable"] == ""
    worker = threading.Thread(target=svc.queue.run_one)
    worker.start()
    assert slow.entered.wait(10)
    running = svc.queue.get(job["id"], OWNER)
    wire = job_json(running)
    validate("ingest_job", wire)
    assert wire["searchable"] == "lexical" and wire["stage"] == "embedding"
    hits = svc.search("handbook lodging", Scope(principal=Principal("u")), mode="lexical")
    assert hits and hits[0].chunk.document_id == running["document_id"]
    [doc] = svc.store.list_documents()
    assert doc.id == running["document_id"] and doc.status == "processing"
    admin = Scope(principal=Principal("root", admin=True))
    for act in (lambda: svc.ingestor.delete(doc.id, admin), lambda: svc.ingestor.attach_to_session(doc.id, "s", admin)):
        with pytest.raises(DocumentProcessing, match="still being ingested"):
            act()
    slow.release.set()
    worker.join(10)
    done = job_json(svc.queue.get(job["id"], OWNER))
    assert done["status"] == "done" and done["searchable"] == "all"
    assert svc.store.get_document(doc.id).status == "ready"  # type: ignore[union-attr]
    assert len(svc.backend.staged) == done["progress"]["chunks_total"] == svc.backend.count()


def test_a_cancelled_job_removes_what_it_staged(tmp_path: Path) -> None:
    svc, slow = _staging_services(tmp_path)
    job = svc.queue.submit_text(OWNER, LONG, Ownership(), title="Handbook", fmt="text", url=None)
    worker = threading.Thread(target=svc.queue.run_one)
    worker.start()
    assert slow.entered.wait(10)
    assert svc.backend.count() > 16  # staged
    svc.queue.cancel(job["id"], OWNER)
    slow.release.set()
    worker.join(10)
    out = job_json(svc.queue.get(job["id"], OWNER))
    assert out["status"] == "cancelled" and out["searchable"] == "none"
    assert svc.backend.count() == 0 and svc.store.list_documents() == [] and svc.store.intents() == []


def test_a_reindex_embeds_before_it_replaces_anything(tmp_path: Path) -> None:
    svc, slow = _staging_services(tmp_path)
    slow.release.set()
    first = svc.ingestor.ingest_text(LONG, title="Handbook", ownership=Ownership()).document
    svc.backend.staged.clear()
    again = svc.ingestor.ingest_text(LONG, title="Handbook", ownership=Ownership(), reindex=True).document
    assert again.id == first.id and svc.backend.staged == []  # the old chunks stayed until the new ones were ready


def test_a_cancelled_duplicate_upload_leaves_the_finished_copy_alone(tmp_path: Path) -> None:
    """Two uploads of one file by one owner are one document: when the first is cancelled while it embeds and
    the second finished meanwhile, the rollback of the first must not take the second's chunks."""
    from assistant_bridge.ingest.queue import JobCancelled
    from assistant_bridge.ingest.service import Ingestor

    svc, slow = _staging_services(tmp_path)
    other = Ingestor(svc.backend, HashingEmbedder(64), svc.store, svc.ingestor.settings)
    cancel = threading.Event()

    def progress(done: int, total: int) -> None:
        if cancel.is_set():
            raise JobCancelled("cancelled while embedding; nothing was kept")

    errors: list[BaseException] = []

    def first() -> None:
        try:
            svc.ingestor.ingest_text(LONG, title="Handbook", ownership=Ownership(), progress=progress)
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    worker = threading.Thread(target=first)
    worker.start()
    assert slow.entered.wait(10)
    done = other.ingest_text(LONG, title="Handbook", ownership=Ownership()).document
    cancel.set()
    slow.release.set()
    worker.join(10)
    assert [type(e).__name__ for e in errors] == ["JobCancelled"]
    assert svc.store.get_document(done.id) is not None
    assert svc.backend.count() == done.chunk_count and svc.store.intents() == []


def test_a_staged_document_embeds_its_option_entries_after_its_chunks(tmp_path: Path) -> None:
    """A page's option entries are embedded into the cache (``Services.with_option_entry`` reads them), but not
    before its chunks are staged: the page is found by its words as soon as before."""
    svc, slow = _staging_services(tmp_path)
    slow.release.set()
    calls_at_stage: list[int] = []
    stage = svc.backend.stage
    svc.backend.stage = lambda chunks: (calls_at_stage.append(slow.calls), stage(chunks))  # type: ignore[method-assign]
    page = "\n\n".join(f"--option-{i}: sets step {i} of the job and reports it in the log." for i in range(40))
    doc = svc.ingestor.ingest_text(page, title="tool(1): a tool", ownership=Ownership()).document
    assert calls_at_stage == [0]
    spans = option_entries(doc.text)
    assert len(spans) == 40 and len(svc.ingestor.cached_entries(doc.title, doc.text, spans)) == 40
