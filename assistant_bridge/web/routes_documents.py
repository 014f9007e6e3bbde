"""Document ingestion and management: ``POST /v1/documents`` (JSON text or multipart upload),
``GET /v1/documents``, ``GET /v1/documents/{id}``, ``GET /v1/documents/{id}/content``,
``DELETE /v1/documents/{id}``, and the ingestion jobs of large uploads: ``GET``/``DELETE /v1/ingest-jobs/{id}``.

Ownership is taken from the caller: the owner is the caller's user id, the tenant its end user, and the
workspaces must be among the caller's own (admins may share with any and may publish to everyone with
``"visibility": "public"``). Anonymous local use publishes to everyone.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from flask import Blueprint, jsonify, request

from assistant_bridge.core import strict_json
from assistant_bridge.core.authz import ownership_for_create
from assistant_bridge.domain import Document, Ownership, Principal, Scope
from assistant_bridge.errors import NotFound, PayloadTooLarge, ValidationFailed
from assistant_bridge.ingest.parsers import FORMAT_MIME
from assistant_bridge.ingest.queue import job_json
from assistant_bridge.ingest.service import document_ready, document_visible
from assistant_bridge.validation import validate
from assistant_bridge.web.app import json_body, principal, scope, services, settings
from assistant_bridge.web.auth import ANONYMOUS

bp = Blueprint("documents", __name__)
MAX_PAGE = 1000


def document_json(doc: Document, *, with_text: bool = False) -> dict[str, Any]:
    o = doc.ownership
    out: dict[str, Any] = {
        "id": doc.id,
        "title": doc.title,
        "filename": doc.filename,
        "mime_type": doc.mime_type,
        "status": doc.status,
        "chunk_count": doc.chunk_count,
        "created_at": doc.created_at,
        "url": doc.url,
        "language": doc.language,
        "content_hash": doc.content_hash,
        "owner_user_id": o.owner_user_id,
        "workspace_ids": list(o.workspace_ids),
        "external_user_id": o.tenant or None,
        "session_id": o.session_id or None,
    }
    if with_text:
        out["text"] = doc.text
    return out


def ownership_for(p: Principal, workspaces: list[str], session_id: str | None, visibility: str) -> Ownership:
    if session_id:
        from assistant_bridge.tools.service import tools_for

        # a session id of another caller answers 404, as if it did not exist
        tools_for(services()).sessions.check(session_id, p)
    return ownership_for_create(
        p, workspaces, public=visibility == "public" or p is ANONYMOUS, session_id=session_id or ""
    )


@bp.post("/v1/documents")
def create_document() -> Any:
    """Small documents are ingested before the answer (201, or 200 when already there); larger ones, or any
    with ``?wait=false``, are queued (202 with the job, see :mod:`assistant_bridge.ingest.queue`)."""
    svc = services()
    wait = request.args.get("wait")
    if wait not in (None, "true", "false"):
        raise ValidationFailed("wait must be true or false", path="wait")
    limit = settings().ingest.sync_max_bytes
    caller: Principal
    if request.mimetype == "multipart/form-data":
        upload = request.files.get("file")
        if upload is None or not upload.filename:
            raise ValidationFailed("multipart upload needs a 'file' part with a filename", path="$.file")
        data = upload.read(settings().ingest.max_upload_bytes + 1)
        if len(data) > settings().ingest.max_upload_bytes:
            raise PayloadTooLarge(f"file is over the {settings().ingest.max_upload_bytes}-byte upload limit")
        form = validate("document_upload", {name: request.form.get(name) for name in request.form})
        strict_json.check(form)  # no NUL in a form field either
        workspaces = [w.strip() for w in form.get("workspaces", "").split(",") if w.strip()]
        if len(workspaces) > 64 or any(len(w) > 256 for w in workspaces):
            raise ValidationFailed(
                "workspaces: at most 64 workspace ids of at most 256 characters", path="$.workspaces"
            )
        caller = principal(form.get("external_user_id"))
        own = ownership_for(caller, workspaces, form.get("session_id"), form.get("visibility", "private"))
        title, url = form.get("title") or None, form.get("url") or None
        if wait == "false" or len(data) > limit:
            doc_id = svc.ingestor.bytes_document_id(data, own)
            if not _ingested(doc_id):
                return _queued(
                    svc.queue.submit_bytes(
                        caller.owner_key,
                        upload.filename,
                        data,
                        own,
                        title=title,
                        url=url,
                        mime_type=upload.mimetype,
                        document_id=doc_id,
                    )
                )
        result = svc.ingestor.ingest_bytes(upload.filename, data, own, title=title, url=url, mime_type=upload.mimetype)
    else:
        body = json_body("document_create")
        caller = principal(body.get("external_user_id"))
        own = ownership_for(
            caller, body.get("workspaces", []), body.get("session_id"), body.get("visibility", "private")
        )
        text, fmt, title = body["text"], body.get("format", "text"), body["title"]
        if wait == "false" or len(text.encode("utf-8")) > limit:
            doc_id = svc.ingestor.text_document_id(text, title=title, fmt=fmt, ownership=own)
            if not _ingested(doc_id):
                return _queued(
                    svc.queue.submit_text(
                        caller.owner_key, text, own, title=title, fmt=fmt, url=body.get("url"), document_id=doc_id
                    )
                )
        result = svc.ingestor.ingest_text(text, title=title, ownership=own, fmt=fmt, url=body.get("url"))
    return jsonify({"document": document_json(result.document), "created": result.created}), (
        201 if result.created else 200
    )


def _ingested(document_id: str) -> bool:
    """Already there for this owner: the synchronous path answers 200 at once, no job is queued."""
    return document_ready(services().store.get_document(document_id))


def _queued(job: dict[str, Any]) -> Any:
    svc = services()
    if settings().ingest.worker == "thread":
        svc.queue.start_thread()
    resp = jsonify({"job": job_json(job)})
    resp.status_code = 202
    resp.headers["Location"] = f"/v1/ingest-jobs/{job['id']}"
    return resp


def ingest_job_body(job: dict[str, Any]) -> dict[str, Any]:
    out = job_json(job)
    if job["state"] == "done":
        doc = services().store.get_document(job["document_id"])
        if doc is not None and document_visible(doc, scope()):
            out["document"] = document_json(doc)
    return out


@bp.get("/v1/ingest-jobs/<job_id>")
def get_ingest_job(job_id: str) -> Any:
    return jsonify(ingest_job_body(services().queue.get(job_id, principal().owner_key)))


@bp.delete("/v1/ingest-jobs/<job_id>")
def cancel_ingest_job(job_id: str) -> Any:
    return jsonify(ingest_job_body(services().queue.cancel(job_id, principal().owner_key)))


def _visible_document(document_id: str) -> Document:
    doc = services().store.get_document(document_id)
    if doc is None or not document_visible(doc, scope()):
        raise NotFound(f"document {document_id} not found")
    return doc


@bp.get("/v1/documents")
def list_documents() -> Any:
    """``?limit=`` (1-1000, default 100), ``?cursor=`` (a ``next_cursor``), ``?session_id=``, ``?status=``,
    ``?kind=`` (``text``, ``markdown``, ``html``, ``pdf``, ``vtt``, ``srt``); newest first."""
    kind = request.args.get("kind")
    return jsonify(
        document_page(
            scope(),
            session_id=request.args.get("session_id"),
            status=request.args.get("status"),
            mime_type=FORMAT_MIME.get(kind or ""),
        )
    )


def document_page(sc: Scope, **filters: str | None) -> dict[str, Any]:
    """One page of the documents ``sc`` may see, read from ``?limit=`` and ``?cursor=``:
    ``{documents, next_cursor, total}`` (``next_cursor`` null on the last page)."""
    validate("document_list_query", request.args.to_dict())
    limit = _int_arg("limit", default=100, low=1, high=MAX_PAGE)
    after = decode_cursor(request.args.get("cursor"))
    rows, total = services().store.documents_page(sc, limit=limit + 1, after=after, **filters)
    page = rows[:limit]
    next_cursor = encode_cursor(page[-1].created_at, page[-1].id) if len(rows) > limit else None
    docs = [d for d in page if document_visible(d, sc)]  # the SQL rule, checked again as every read path does
    return {"documents": [document_json(d) for d in docs], "next_cursor": next_cursor, "total": total}


def _int_arg(name: str, *, default: int, low: int, high: int) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or len(raw) > 6 or not low <= int(raw) <= high:
        raise ValidationFailed(f"{name} must be a whole number from {low} to {high}", path=name)
    return int(raw)


def encode_cursor(created_at: float, document_id: str) -> str:
    raw = json.dumps([created_at, document_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[float, str] | None:
    """:raises ValidationFailed: for anything that is not a cursor this service made."""
    if cursor is None:
        return None
    try:
        created_at, document_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if isinstance(created_at, (int, float)) and not isinstance(created_at, bool) and isinstance(document_id, str):
            return float(created_at), document_id
    except (ValueError, TypeError):
        pass
    raise ValidationFailed("cursor is not a next_cursor of this listing", path="cursor")


@bp.get("/v1/documents/<document_id>")
def get_document(document_id: str) -> Any:
    return jsonify(document_json(_visible_document(document_id)))


@bp.get("/v1/documents/<document_id>/content")
def get_document_content(document_id: str) -> Any:
    return jsonify(document_json(_visible_document(document_id), with_text=True))


@bp.delete("/v1/documents/<document_id>")
def delete_document(document_id: str) -> Any:
    doc = services().ingestor.delete(document_id, scope())
    return jsonify({"deleted": doc.id, "chunk_count": doc.chunk_count})
