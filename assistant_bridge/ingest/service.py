"""Ingestion: parse, chunk, embed (with a content-hash cache), write chunks, then record the document.

Invariants: a document id is derived from its content hash and its ownership, so ingesting the same file
twice is a no-op; a failed or cancelled write removes what it wrote, so a bad file or a backend outage never
leaves a half-written document behind.

Lexical first: on a backend that can *stage* chunks (the embedded default, ``backends/exact.py``), a
document's chunks are written without vectors before they are embedded, so lexical searches find them within
seconds while the embedding runs (half a minute for 1,000 chunks on two idle cores, more under load); dense
searches find them once they are written again with their vectors. Meanwhile the document's row says
``status: processing`` (and its ingestion job ``searchable: lexical``); it says ``ready`` when every chunk
has its vector. A processing document cannot be deleted or moved (:class:`DocumentProcessing`). Other backends
get nothing, not even the row, until every chunk is embedded.

Crash safety: before its first chunk is written, a document gets an *intent* record in the store (and so
does a session attachment, which rewrites every chunk); the record goes when the document's row is written
``ready``. A process killed in between (``kill -9`` of a worker or of the whole service, a side process that
dies so that the rollback fails too) leaves the intent behind, and :meth:`Ingestor.recover` — run when a
worker starts, before every ingestion, and by ``assistant-bridge recover`` — removes the chunks (and the
``processing`` row) of a document that was never recorded ready, and puts back the recorded ownership of a
half-moved one. Only intents whose process is gone (:func:`~assistant_bridge.workers.worker_alive`) or that
their writer gave up are touched.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeGuard

import numpy as np

from assistant_bridge import faults
from assistant_bridge.backends.base import SearchBackend
from assistant_bridge.core import authz
from assistant_bridge.core.authz import Action
from assistant_bridge.core.chunking import chunk_document
from assistant_bridge.core.scope import chunk_visible
from assistant_bridge.domain import Chunk, Document, Ownership, Principal, Scope
from assistant_bridge.embedders.base import Embedder
from assistant_bridge.errors import BridgeError, DocumentParseError, DocumentProcessing, NotFound, TooManyChunks
from assistant_bridge.ingest.parsers import ParsedDocument, parse_file, parse_text
from assistant_bridge.settings import IngestSettings
from assistant_bridge.store import SQLiteStore, now
from assistant_bridge.text import entry_head, option_entries
from assistant_bridge.workers import worker_alive, worker_id

log = logging.getLogger(__name__)
_INGESTOR = Principal(user_id="ingestor", admin=True, key_id="ingestor")


def every_chunk(doc: Document) -> Scope:
    """A scope that reads every chunk of ``doc`` (in its chat session, if any), for writes whose caller was
    checked already and for recovery."""
    return Scope(principal=_INGESTOR, session_id=doc.ownership.session_id or None, document_ids=(doc.id,))


NAMESPACE = uuid.UUID("6f1c1c1e-4a55-4d3b-9a53-0b7a3f0e2b11")


@dataclass(frozen=True)
class IngestResult:
    document: Document
    created: bool


def document_id_for(content_hash: str, ownership: Ownership) -> str:
    key = "\0".join(
        [
            content_hash,
            ownership.tenant,
            ownership.owner_user_id,
            ",".join(ownership.workspace_ids),
            ownership.session_id,
        ]
    )
    return str(uuid.uuid5(NAMESPACE, key))


def chunk_id(document_id: str, position: int) -> str:
    """The id of a document's chunk at ``position``: derived from both, so a reindex keeps it and the opening
    chunks of a document can be read by id without listing the document."""
    return str(uuid.uuid5(uuid.UUID(document_id), str(position)))


def document_ready(doc: Document | None) -> TypeGuard[Document]:
    """Whether ``doc`` is a finished document: every chunk written with its vector. A ``processing`` row is a
    staged write's, in progress (or a dead writer's, which recovery removes)."""
    return doc is not None and doc.status == "ready"


def _not_processing(doc: Document) -> None:
    if doc.status == "processing":
        raise DocumentProcessing(
            f"document {doc.id} is still being ingested: cancel its ingestion job (DELETE /v1/ingest-jobs/{{id}}) "
            "or wait until it is ready"
        )


def document_visible(doc: Document, scope: Scope) -> bool:
    probe = Chunk(id="", document_id=doc.id, title="", text="", ownership=doc.ownership)
    return chunk_visible(probe, scope)


class Ingestor:
    def __init__(
        self, backend: SearchBackend, embedder: Embedder, store: SQLiteStore, settings: IngestSettings | None = None
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.store = store
        self.settings = settings or IngestSettings()

    def ingest_bytes(
        self,
        filename: str,
        data: bytes,
        ownership: Ownership,
        *,
        title: str | None = None,
        url: str | None = None,
        mime_type: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        reindex: bool = False,
        staged: Callable[[], None] | None = None,
    ) -> IngestResult:
        """Ingest one file.

        :param reindex: parse and index the file again when it is already present (after a change of the
            parsers or the cleaning rules); the document keeps its id, its chunks are replaced.
        :param staged: called once the chunks are searchable lexically, before they are embedded (only on a
            backend that stages chunks; see the module docstring).

        :raises UnsupportedMediaType: for a file type we cannot read.
        :raises DocumentParseError: for a corrupt file of a supported type.
        :raises BackendUnavailable: when the backend fails; nothing is left half-written.
        """
        content_hash = hashlib.sha256(data).hexdigest()
        doc_id = document_id_for(content_hash, ownership)
        existing = self.store.get_document(doc_id)
        if document_ready(existing) and not reindex:
            return IngestResult(existing, created=False)
        parsed, replacing = parse_file(filename, data, mime_type=mime_type), document_ready(existing)
        return self._write(
            doc_id, content_hash, filename, parsed, ownership, title, url, progress, replacing=replacing, staged=staged
        )

    @staticmethod
    def bytes_document_id(data: bytes, ownership: Ownership) -> str:
        """The id ``ingest_bytes`` gives ``data`` for this owner (content hash and ownership)."""
        return document_id_for(hashlib.sha256(data).hexdigest(), ownership)

    @staticmethod
    def text_hash(text: str, *, title: str, fmt: str) -> str:
        return _sha256(f"{fmt}\0{title}\0{text}")

    def text_document_id(self, text: str, *, title: str, fmt: str, ownership: Ownership) -> str:
        return document_id_for(self.text_hash(text, title=title, fmt=fmt), ownership)

    def ingest_text(
        self,
        text: str,
        *,
        title: str,
        ownership: Ownership,
        fmt: str = "text",
        url: str | None = None,
        filename: str = "",
        progress: Callable[[int, int], None] | None = None,
        reindex: bool = False,
        staged: Callable[[], None] | None = None,
    ) -> IngestResult:
        content_hash = self.text_hash(text, title=title, fmt=fmt)
        doc_id = document_id_for(content_hash, ownership)
        existing = self.store.get_document(doc_id)
        if document_ready(existing) and not reindex:
            return IngestResult(existing, created=False)
        parsed, replacing = parse_text(text, title=title, fmt=fmt), document_ready(existing)  # type: ignore[arg-type]
        name = filename or f"{title}.txt"
        return self._write(
            doc_id, content_hash, name, parsed, ownership, title, url, progress, replacing=replacing, staged=staged
        )

    def _write(
        self,
        doc_id: str,
        content_hash: str,
        filename: str,
        parsed: ParsedDocument,
        ownership: Ownership,
        title: str | None,
        url: str | None,
        progress: Callable[[int, int], None] | None,
        replacing: bool = False,
        staged: Callable[[], None] | None = None,
    ) -> IngestResult:
        """Chunk, embed and write a parsed document. With ``replacing`` (a reindex), the document's row goes first
        and its old chunks next, inside the write intent: a crash part-way leaves the document absent (recovery
        removes what was written), never old and new chunks mixed; ingesting the file again restores it. On a
        backend that stages chunks, a new document's chunks are staged inside the intent and embedded after
        (module docstring); a reindex embeds before it replaces anything."""
        drafts = chunk_document(
            parsed, max_tokens=self.settings.chunk_tokens, overlap_tokens=self.settings.overlap_tokens
        )
        if not drafts:
            raise DocumentParseError(f"{filename or 'the document'} contains no text to index")
        cap = self.settings.max_chunks_per_document
        if cap and len(drafts) > cap:
            raise TooManyChunks(
                f"{filename or 'the document'} would make {len(drafts)} chunks; the limit is {cap} "
                "(ingest.max_chunks_per_document): split it or raise the limit"
            )
        doc_title = title or parsed.title or filename
        chunks = [
            Chunk(
                id=chunk_id(doc_id, d.position),
                document_id=doc_id,
                title=doc_title,
                text=d.text,
                position=d.position,
                url=url,
                start_char=d.start_char,
                end_char=d.end_char,
                language=parsed.language,
                modality=parsed.modality,
                page_number=d.page_number,
                bboxes=tuple(d.bboxes),
                start_time=d.start_time,
                end_time=d.end_time,
                filename=filename,
                ownership=ownership,
            )
            for d in drafts
        ]
        # a reindex embeds first: the old chunks stay searchable until the new ones are ready to replace them
        stage: Callable[[Sequence[Chunk]], None] | None = None if replacing else getattr(self.backend, "stage", None)
        vectors = None if stage is not None else self.embed_chunks(chunks, progress)
        # embedded into the cache for searches to read (Services.with_option_entry), after the chunks
        entries = option_entries(parsed.text) if self.settings.option_entries else []
        if stage is None:
            self.embed_entries(doc_title, parsed.text, entries)
        doc = Document(
            id=doc_id,
            title=doc_title,
            filename=filename,
            content_hash=content_hash,
            mime_type=parsed.mime_type,
            ownership=ownership,
            chunk_count=len(chunks),
            created_at=now(),
            url=url,
            language=parsed.language,
            status="ready",
            text=parsed.text,
        )
        self.recover()
        self.store.begin_intent(doc_id, "write", worker_id())
        try:
            if replacing:
                self.store.delete_document(doc_id)
                self.backend.delete_document(doc_id)
            if stage is not None:
                stage(chunks)
                self.store.put_document(replace(doc, status="processing"))
                faults.point("ingest.after_stage")
                if staged is not None:
                    staged()
                vectors = self.embed_chunks(chunks, progress)
                self.embed_entries(doc_title, parsed.text, entries)
            assert vectors is not None
            for i in range(0, len(chunks), self.settings.batch_size):
                self.backend.upsert(chunks[i : i + self.settings.batch_size], vectors[i : i + self.settings.batch_size])
                faults.point("ingest.after_batch")
            self.store.put_document(doc)  # a full disk here must not leave chunks without their document
        except BaseException:  # an outage, a cancelled job, a failed model, an interrupt: nothing stays behind
            self._rollback(doc_id)
            raise
        self.store.end_intent(doc_id)
        log.info("ingest.document", extra={"id": doc_id, "chunks": len(chunks), "mime": parsed.mime_type})
        return IngestResult(doc, created=True)

    def _rollback(self, doc_id: str) -> None:
        found = self.store.get_document(doc_id)
        if document_ready(found):
            # the same content for the same owner was finished by another writer while this one embedded (two
            # uploads of one file): its chunks are that document's now, and stay
            self.store.end_intent(doc_id)
            return
        try:
            self._discard(doc_id, found)
        except BridgeError:
            log.error("ingest.rollback_failed", extra={"id": doc_id})
            self.store.abandon_intent(doc_id)  # the next recovery pass, of any process, removes them
        else:
            self.store.end_intent(doc_id)

    def recover(self) -> int:
        """Finish what crashed writers left (see the module docstring); returns how many intents were settled.

        An intent whose repair fails (the backend still down) stays for the next pass; nothing raises.
        """
        settled = 0
        me = worker_id()
        for document_id, kind, worker, _ in self.store.intents():
            if worker == me or (worker and worker_alive(worker) is not False):
                continue  # ours and in progress, or a live (or another host's) writer's
            if not self.store.claim_intent(document_id, worker, me):
                continue  # another process took it
            try:
                self._settle(document_id, kind)
            except BridgeError as exc:
                log.warning("ingest.recovery_failed", extra={"id": document_id, "kind": kind, "code": exc.code})
                self.store.abandon_intent(document_id)
                continue
            self.store.end_intent(document_id)
            settled += 1
        return settled

    def _settle(self, document_id: str, kind: str) -> None:
        doc = self.store.get_document(document_id)
        if kind.startswith("attach:") and doc is not None:
            # half moved: some chunks are in the target session already, the row still has the old ownership
            target = replace(doc, ownership=replace(doc.ownership, session_id=kind.partition(":")[2]))
            found = {c.id: c for d in (doc, target) for c in self.backend.document_chunks(document_id, every_chunk(d))}
            chunks = list(found.values())
            moved = [replace(c, ownership=doc.ownership) for c in chunks]
            self.backend.upsert(moved, self.embed_chunks(moved))
            log.warning("ingest.recovered", extra={"id": document_id, "kind": "attach", "chunks": len(moved)})
        elif not document_ready(doc):
            removed = self._discard(document_id, doc)
            log.warning("ingest.recovered", extra={"id": document_id, "kind": kind, "removed_chunks": removed})

    def _discard(self, document_id: str, row: Document | None) -> int:
        """Remove an unfinished write: its chunks, and its ``processing`` row when it has one (a staged write's).
        Returns how many chunks went."""
        removed = self.backend.delete_document(document_id)
        if row is not None:
            self.store.delete_document(document_id)
        return removed

    def embed_chunks(self, chunks: Sequence[Chunk], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """The vectors of ``chunks`` as the index holds them: each chunk embeds its title and its text."""
        return self.embed_passages([f"{c.title}. {c.text}" for c in chunks], progress)

    def embed_entries(self, title: str, text: str, spans: Sequence[tuple[int, int]]) -> None:
        """Embed a document's option entries (:func:`~assistant_bridge.text.option_entries`) into the cache, each
        with the document's title as a chunk is, for :meth:`cached_entries` to read."""
        self.embed_passages(_entry_passages(title, text, spans))

    def cached_entries(
        self,
        title: str,
        text: str,
        spans: Sequence[tuple[int, int]],
        *,
        hashes: tuple[list[str], list[str]] | None = None,
    ) -> dict[int, np.ndarray]:
        """The cached vectors of the entries at ``spans`` (by index): those of a document ingested before entries
        were embedded are missing until it is reindexed; one ingested before their heads were embedded has its
        whole entries' vectors, which serve until then. Never embeds: a search must not pay for a long page.
        ``hashes``: :func:`entry_hashes` of the same entries, when the caller keeps them (a long page's heads take
        a sentence split of each entry)."""
        found: dict[int, np.ndarray] = {}
        for keys in hashes or entry_hashes(title, text, spans):
            cached = self.store.cached_vectors(self.embedder.name, set(keys))
            vectors = {i: cached[h] for i, h in enumerate(keys) if h in cached}
            if len(vectors) == len(spans):
                return vectors
            found = found if len(found) >= len(vectors) else vectors
        return found

    def embed_passages(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None, batch: int = 16
    ) -> np.ndarray:
        """Embed with the content-hash cache, so re-ingestion and interrupted runs resume cheaply."""
        hashes = [_sha256(t) for t in texts]
        cached = self.store.cached_vectors(self.embedder.name, set(hashes))
        todo = [i for i, h in enumerate(hashes) if h not in cached]
        done = len(texts) - len(todo)
        if progress:
            progress(done, len(texts))
        for start in range(0, len(todo), batch):
            idx = todo[start : start + batch]
            vecs = self.embedder.embed_passages([texts[i] for i in idx])
            fresh = {hashes[i]: v for i, v in zip(idx, vecs, strict=False)}
            self.store.cache_vectors(self.embedder.name, fresh)
            cached.update(fresh)
            done += len(idx)
            if progress:
                progress(done, len(texts))
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack([cached[h] for h in hashes])

    def _writable(self, document_id: str, scope: Scope, action: Action) -> Document:
        doc = self.store.get_document(document_id)
        # an admin reaches every document, those of chat sessions too, which even it cannot read outside them
        if doc is None or not (document_visible(doc, scope) or authz.is_admin(scope.principal)):
            raise NotFound(f"document {document_id} not found")
        authz.require(action, scope.principal, doc.ownership)
        return doc

    def delete(self, document_id: str, scope: Scope) -> Document:
        """Remove a document and its chunks.

        :raises NotFound: when the document does not exist or the caller cannot see it.
        :raises Forbidden: when the caller may see it but not delete it (:mod:`assistant_bridge.core.authz`).
        """
        doc = self._writable(document_id, scope, "delete")
        _not_processing(doc)
        self.backend.delete_document(document_id)
        self.store.delete_document(document_id)
        return doc

    def attach_to_session(self, document_id: str, session_id: str, scope: Scope) -> Document:
        """Move a document into a chat session (the session id already checked for the caller).

        :raises NotFound: as for :meth:`delete`.
        :raises Forbidden: when the caller is neither its owner nor an admin.
        """
        doc = self._writable(document_id, scope, "attach")
        _not_processing(doc)
        ownership = replace(doc.ownership, session_id=session_id)
        chunks = self.backend.document_chunks(document_id, every_chunk(doc))  # all of them, whoever may read them
        moved = [replace(c, ownership=ownership) for c in chunks]
        vectors = self.embed_chunks(moved)
        self.store.begin_intent(document_id, f"attach:{session_id}", worker_id())
        try:
            self.backend.upsert(moved, vectors)
            self.store.set_document_ownership(document_id, ownership)
        except BridgeError:
            self.store.abandon_intent(document_id)  # recovery puts the recorded ownership back on every chunk
            raise
        self.store.end_intent(document_id)
        return replace(doc, ownership=ownership)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def entry_hashes(title: str, text: str, spans: Sequence[tuple[int, int]]) -> tuple[list[str], list[str]]:
    """The cache keys of a document's entries: as :meth:`Ingestor.embed_entries` embeds them (their heads), and
    whole, as documents ingested before heads were embedded have them."""
    heads, whole = ([_sha256(t) for t in _entry_passages(title, text, spans, whole=w)] for w in (False, True))
    return heads, whole


def _entry_passages(title: str, text: str, spans: Sequence[tuple[int, int]], *, whole: bool = False) -> list[str]:
    """Each entry as it is embedded: the document's title, then the entry's head (:func:`~assistant_bridge.text.
    entry_head`), or the whole entry as documents ingested before heads were embedded have it cached."""
    return [f"{title}. {text[start:end] if whole else entry_head(text[start:end])}" for start, end in spans]
