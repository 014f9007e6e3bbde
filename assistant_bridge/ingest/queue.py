"""The durable ingestion queue: uploads become jobs, processed off the request path.

``POST /v1/documents`` stores the upload in the spool directory (``<data_dir>/ingest-spool``) and a row in
the ``ingest_jobs`` table, and answers ``202`` with the job; a worker claims jobs one at a time, oldest first,
and runs the ordinary ingestion (:class:`~assistant_bridge.ingest.service.Ingestor`), writing its stage and
progress (chunks embedded of the total) to the row, which ``GET /v1/ingest-jobs/{id}`` reads.

States: ``queued`` → ``running`` (stages ``parsing``, ``embedding``, ``writing``) → ``done`` / ``failed`` /
``cancelled``. A job belongs to the caller that submitted it (:attr:`Principal.owner_key`); anyone else gets
404 for it.

Durability: the spool file and the row are written before the 202, so a job survives a restart. A job whose
worker died (``running`` with a worker that is gone) goes back to the queue at the next worker start (up to
:data:`MAX_ATTEMPTS` tries); the document's own intent record (:mod:`assistant_bridge.ingest.service`)
removes whatever the dead worker had half-written, and the vector cache lets the retry skip what was already
embedded. Cancellation is checked between embedding batches: the job stops, and what it had staged for
lexical search is removed, before anything is kept.

Searchable: ``searchable`` in the wire form is ``none`` until the document can be found, ``lexical`` while its
chunks are staged and being embedded (lexical searches find them: ``ingest/service.py``), ``all`` when the job
is done (a failed or cancelled job is ``none``).

Who processes the queue: ``assistant-bridge serve`` runs one ``assistant-bridge ingest-worker`` process beside
gunicorn (its workers only enqueue), so a large upload never takes a request thread; an app built by
:func:`~assistant_bridge.web.app.create_app` elsewhere (tests, another WSGI server) runs a worker thread in the
process instead (``ingest.worker``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from assistant_bridge.domain import Ownership
from assistant_bridge.errors import BridgeError, NotFound, RequestError
from assistant_bridge.ingest.service import Ingestor, IngestResult
from assistant_bridge.store import SQLiteStore, now
from assistant_bridge.workers import worker_alive, worker_id

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
PROGRESS_EVERY = 0.5  # seconds between two progress writes of one job
FINAL = frozenset({"done", "failed", "cancelled"})


class JobCancelled(RequestError, status=409, code="cancelled"):
    """The ingestion job was cancelled before it finished."""


def job_json(job: dict[str, Any]) -> dict[str, Any]:
    """The wire form of a job (``schemas/ingest_job.schema.json``)."""
    error = {"code": job["error_code"], "message": job["error_message"]} if job.get("error_code") else None
    return {
        "id": job["id"],
        "status": job["state"],
        "stage": job["stage"] or None,
        "document_id": job["document_id"],
        "filename": job["filename"],
        "title": job["title"],
        "progress": {"chunks_done": job["chunks_done"], "chunks_total": job["chunks_total"]},
        "searchable": job.get("searchable") or "none",
        "created": None if job["created"] is None else bool(job["created"]),
        "error": error,
        "cancel_requested": bool(job["cancel"]),
        "attempts": job["attempts"],
        "created_at": job["created_at"],
        "updated_at": job["updated_at"],
    }


class IngestQueue:
    def __init__(self, store: SQLiteStore, ingestor: Ingestor, spool: Path) -> None:
        self.store = store
        self.ingestor = ingestor
        self.spool = spool
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------------ submitting

    def submit_bytes(
        self,
        owner: str,
        filename: str,
        data: bytes,
        ownership: Ownership,
        *,
        title: str | None,
        url: str | None,
        mime_type: str | None,
        document_id: str | None = None,
    ) -> dict[str, Any]:
        """Queue a file; ``document_id`` when the caller has computed it already (:meth:`Ingestor.bytes_document_id`)."""
        doc_id = document_id or self.ingestor.bytes_document_id(data, ownership)
        return self._submit(
            owner,
            "file",
            data,
            doc_id,
            ownership,
            filename=filename,
            title=title,
            url=url,
            mime_type=mime_type,
            fmt=None,
        )

    def submit_text(
        self,
        owner: str,
        text: str,
        ownership: Ownership,
        *,
        title: str,
        fmt: str,
        url: str | None,
        document_id: str | None = None,
    ) -> dict[str, Any]:
        doc_id = document_id or self.ingestor.text_document_id(text, title=title, fmt=fmt, ownership=ownership)
        return self._submit(
            owner,
            "text",
            text.encode("utf-8"),
            doc_id,
            ownership,
            filename=f"{title}.txt",
            title=title,
            url=url,
            mime_type=None,
            fmt=fmt,
        )

    def _submit(
        self, owner: str, kind: str, data: bytes, doc_id: str, ownership: Ownership, **meta: Any
    ) -> dict[str, Any]:
        job_id = uuid.uuid4().hex
        self.spool.mkdir(parents=True, exist_ok=True)
        payload = self.spool / job_id
        tmp = payload.with_suffix(".part")
        with open(tmp, "wb") as fh:  # a full disk here is an OSError before any row exists
            fh.write(data)
            fh.flush()
        tmp.replace(payload)
        t = now()
        job = {
            "id": job_id,
            "owner": owner,
            "kind": kind,
            "state": "queued",
            "stage": "",
            "document_id": doc_id,
            "ownership": json.dumps(asdict(ownership)),
            "payload": payload.name,
            "bytes": len(data),
            "created_at": t,
            "updated_at": t,
            **meta,
        }
        try:
            self.store.add_job(job)
        except BaseException:
            payload.unlink(missing_ok=True)
            raise
        log.info("ingest.job.queued", extra={"job_id": job_id, "document_id": doc_id, "bytes": len(data)})
        self._wake.set()
        got = self.store.get_job(job_id)
        assert got is not None
        return got

    # ------------------------------------------------------------------------------------------ reading

    def get(self, job_id: str, owner: str) -> dict[str, Any]:
        job = self.store.get_job(job_id)
        if job is None or job["owner"] != owner:
            raise NotFound(f"ingestion job {job_id} not found")
        return job

    def cancel(self, job_id: str, owner: str) -> dict[str, Any]:
        """Ask for a job to stop. A queued job ends at once; a running one before it keeps anything."""
        job = self.get(job_id, owner)
        if job["state"] in FINAL:
            return job
        self.store.update_job(job_id, cancel=1)
        if job["state"] == "queued":
            self._finish(job, "cancelled", error=JobCancelled("cancelled before it started"))
        return self.get(job_id, owner)

    # ------------------------------------------------------------------------------------------ working

    def requeue_orphans(self) -> int:
        """Running jobs whose worker is gone go back to the queue (or fail after :data:`MAX_ATTEMPTS`)."""
        back = 0
        for job in self.store.jobs_in_state("running"):
            worker = job["worker"]
            if worker == worker_id() or worker_alive(worker) is not False:
                continue
            if job["attempts"] >= MAX_ATTEMPTS:
                self.store.update_job(
                    job["id"],
                    state="failed",
                    searchable="",
                    error_code="worker_lost",
                    error_message=f"the worker died {job['attempts']} times on this document",
                )
                self._drop_payload(job)
                continue
            if self.store.requeue_job(job["id"], worker):
                log.warning("ingest.job.requeued", extra={"job_id": job["id"], "dead_worker": worker})
                back += 1
        return back

    def run_one(self) -> bool:
        """Claim and process the oldest queued job; False when the queue is empty."""
        job = self.store.claim_job(worker_id())
        if job is None:
            return False
        self._process(job)
        return True

    def _process(self, job: dict[str, Any]) -> None:
        job_id = job["id"]
        started = time.perf_counter()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.monotonic() - last[0] >= PROGRESS_EVERY or done == total:
                last[0] = time.monotonic()
                self.store.update_job(
                    job_id, stage="writing" if done == total else "embedding", chunks_done=done, chunks_total=total
                )
                row = self.store.get_job(job_id)
                if row is not None and row["cancel"]:
                    raise JobCancelled("cancelled while embedding; nothing was kept")

        def staged() -> None:
            self.store.update_job(job_id, searchable="lexical")

        try:
            self.store.update_job(job_id, stage="parsing")
            data = (self.spool / job["payload"]).read_bytes()
            stored = json.loads(job["ownership"])
            own = Ownership(
                owner_user_id=stored["owner_user_id"],
                workspace_ids=tuple(stored["workspace_ids"]),
                tenant=stored["tenant"],
                session_id=stored["session_id"],
            )
            result: IngestResult
            if job["kind"] == "text":
                result = self.ingestor.ingest_text(
                    data.decode("utf-8"),
                    title=job["title"] or "",
                    ownership=own,
                    fmt=job["fmt"] or "text",
                    url=job["url"],
                    progress=progress,
                    staged=staged,
                )
            else:
                result = self.ingestor.ingest_bytes(
                    job["filename"],
                    data,
                    own,
                    title=job["title"],
                    url=job["url"],
                    mime_type=job["mime_type"],
                    progress=progress,
                    staged=staged,
                )
        except JobCancelled as exc:
            self._finish(job, "cancelled", error=exc)
        except BridgeError as exc:
            self._finish(job, "failed", error=exc)
        except OSError as exc:
            self._finish(job, "failed", error=BridgeError(f"the upload could not be read back: {exc}"))
        except Exception as exc:  # a bug must fail the job, not kill the worker
            log.exception("ingest.job.crashed", extra={"job_id": job_id})
            self._finish(job, "failed", error=BridgeError(f"internal error: {type(exc).__name__}"))
        else:
            doc = result.document
            self.store.update_job(
                job_id,
                document_id=doc.id,
                chunks_total=doc.chunk_count,
                chunks_done=doc.chunk_count,
                created=int(result.created),
            )
            self._finish(job, "done")
            log.info(
                "ingest.job.done",
                extra={
                    "job_id": job_id,
                    "document_id": doc.id,
                    "chunks": doc.chunk_count,
                    "seconds": round(time.perf_counter() - started, 2),
                },
            )

    def _finish(self, job: dict[str, Any], state: str, *, error: BridgeError | None = None) -> None:
        fields: dict[str, Any] = {
            "state": state,
            "stage": "",
            "worker": "",
            "searchable": "all" if state == "done" else "",
        }
        if error is not None:
            fields.update(error_code=error.code, error_message=getattr(error, "message", None) or str(error))
        self.store.update_job(job["id"], **fields)
        if error is not None and state == "failed":
            log.warning("ingest.job.failed", extra={"job_id": job["id"], "code": error.code})
        self._drop_payload(job)

    def _drop_payload(self, job: dict[str, Any]) -> None:
        (self.spool / job["payload"]).unlink(missing_ok=True)

    # ------------------------------------------------------------------------------------------ the loop

    def work_forever(
        self,
        *,
        poll: float = 1.0,
        stop: threading.Event | None = None,
        on_idle: Callable[[], None] | None = None,
        idle_exit: float | None = None,
    ) -> None:
        """Process jobs until ``stop`` is set; between jobs wait for a submit in this process or ``poll`` s.

        :param idle_exit: return after this many seconds without a job (the in-process thread: the next
            submit starts it again), instead of polling for ever.
        """
        stop = stop or self._stop
        self.requeue_orphans()
        idle_since = time.monotonic()
        while not stop.is_set():
            try:
                worked = self.run_one()
            except BridgeError as exc:  # the store is unreachable or the disk is full: wait and try again
                log.warning("ingest.worker.error", extra={"code": exc.code})
                worked = False
            if worked:
                idle_since = time.monotonic()
                continue
            if on_idle is not None:
                on_idle()
            if idle_exit is not None and time.monotonic() - idle_since >= idle_exit:
                with self._lock:  # a submit sets the wake-up before it asks for a thread: none is lost
                    if not self._wake.is_set():
                        self._thread = None
                        return
            self._wake.wait(poll)
            self._wake.clear()

    def start_thread(self) -> None:
        """Run :meth:`work_forever` in a daemon thread of this process; it ends after 30 s without work and
        the next submit starts it again."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self.work_forever, kwargs={"idle_exit": 30.0}, name="ingest-worker", daemon=True
                )
                self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
