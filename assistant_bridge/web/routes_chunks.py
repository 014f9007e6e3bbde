"""Chunk details (UBIK ``PublicChunk``, spec §D.5): where a cited chunk sits in its source.

::

    GET /v1/chunks/{chunk_id}            {id, document_id, text, page_number, bbox, start_time, end_time, metadata}
    GET /v1/chunks/{chunk_id}/document   the chunk's document (UBIK PublicDocument fields)

``bbox`` has one box per PDF page the chunk covers, ``[x1, y1, x2, y2]`` in PDF points with the origin at
the top left of the page, plus the page's ``layout_width`` × ``layout_height``; it is ``null`` for sources
without a layout (plain text, Markdown, HTML, transcripts). Transcripts have ``start_time``/``end_time`` in
seconds. ``metadata.languages`` holds the detected language code (ISO 639-1, e.g. ``en``).

A chunk attached to a chat session is visible within it: pass ``?session_id=`` (or ``X-Session-ID``). A
chunk the caller cannot see answers 404, exactly like an unknown id.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, jsonify, request

from assistant_bridge.core.scope import chunk_visible
from assistant_bridge.domain import Chunk, Document, Scope
from assistant_bridge.errors import NotFound
from assistant_bridge.ingest.service import document_visible
from assistant_bridge.tools.service import tools_for
from assistant_bridge.web.app import principal, services

bp = Blueprint("chunks", __name__)


def chunk_json(c: Chunk) -> dict[str, Any]:
    return {
        "id": c.id,
        "document_id": c.document_id,
        "text": c.text,
        "page_number": c.page_number,
        "bbox": [b.to_json() for b in c.bboxes] or None,
        "start_time": c.start_time,
        "end_time": c.end_time,
        "metadata": {
            "filename": c.filename or None,
            "languages": [c.language] if c.language else [],
            "modality": c.modality,
            "title": c.title,
            "position": c.position,
            "url": c.url,
        },
    }


def public_document_json(doc: Document) -> dict[str, Any]:
    created = datetime.fromtimestamp(doc.created_at, tz=UTC).isoformat().replace("+00:00", "Z")
    return {
        "id": doc.id,
        "name": doc.title,
        "status": doc.status,
        "created_at": created,
        "updated_at": created,
        "file_type": doc.mime_type or None,
        "file_name": doc.filename or None,
        "processing_pipeline": None,
        "error_message": None,
        "api_metadata": None,
        "markdown_content": doc.text,
        "language": doc.language or None,
        "chunk_count": doc.chunk_count,
        "url": doc.url,
    }


def _scope() -> Scope:
    caller = principal()
    session_id = request.args.get("session_id") or request.headers.get("X-Session-ID")
    if session_id:
        tools_for(services()).sessions.check(session_id, caller, field="session_id")
    return Scope(principal=caller, session_id=session_id or None)


def _visible_chunk(chunk_id: str, scope: Scope) -> Chunk:
    found = services().backend.get_chunks([chunk_id], scope) if len(chunk_id) <= 128 else []
    for chunk in found:
        if chunk.id == chunk_id and chunk_visible(chunk, scope):
            return chunk
    raise NotFound(f"chunk {chunk_id[:64]} not found", resource="chunk")


@bp.get("/v1/chunks/<chunk_id>")
def get_chunk(chunk_id: str) -> Any:
    return jsonify(chunk_json(_visible_chunk(chunk_id, _scope())))


@bp.get("/v1/chunks/<chunk_id>/document")
def get_chunk_document(chunk_id: str) -> Any:
    scope = _scope()
    chunk = _visible_chunk(chunk_id, scope)
    doc = services().store.get_document(chunk.document_id)
    if doc is None or not document_visible(doc, scope):
        raise NotFound(f"chunk {chunk_id[:64]} not found", resource="chunk")
    return jsonify(public_document_json(doc))
