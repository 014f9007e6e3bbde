"""``GET /v1/chunks/{id}`` and ``/document``: PDF boxes on each page, transcript times, plain text, scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from assistant_bridge.validation import registry, validate
from tests.conftest import KEYS, headers_for
from tests.tools.helpers import chunk_id, execute, ingest, ingest_file, make_app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def c(tmp_path: Path) -> Any:
    with make_app(tmp_path, keys=KEYS).test_client() as client:
        yield client


def _document_schema(data: Any) -> None:
    Draft202012Validator(
        {"$ref": "chunk.schema.json#/$defs/document"},
        registry=registry(),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    ).validate(data)


@pytest.mark.unit
def test_a_chunk_spanning_two_pdf_pages_has_a_box_on_each(c: Any) -> None:
    doc = ingest_file(c, FIXTURES / "two_pages.pdf", headers_for("alice"))
    resp = c.get(f"/v1/chunks/{chunk_id(doc)}", headers=headers_for("alice"))
    assert resp.status_code == 200, resp.get_json()
    body = validate("chunk", resp.get_json())
    assert body["document_id"] == doc and body["page_number"] == 1
    assert "Travel Policy" in body["text"] and "extension 4410" in body["text"]
    assert [b["page_number"] for b in body["bbox"]] == [1, 2]
    for box in body["bbox"]:
        x1, y1, x2, y2 = box["bbox"]
        assert (box["layout_width"], box["layout_height"]) == (612.0, 792.0)
        assert 0 <= x1 < x2 <= 612 and 0 <= y1 < y2 <= 792
    page1, page2 = body["bbox"]
    # page 1 runs from the title (top) to the paragraph at the bottom; page 2 holds only the top three lines
    assert page1["bbox"][1] < 100 and page1["bbox"][3] > 700
    assert page2["bbox"][1] < 100 and page2["bbox"][3] < 120
    assert body["start_time"] is None and body["end_time"] is None
    assert body["metadata"] == {
        **body["metadata"],
        "filename": "two_pages.pdf",
        "languages": ["en"],
        "modality": "text",
    }


@pytest.mark.unit
def test_transcript_chunks_have_times_and_no_boxes(c: Any) -> None:
    doc = ingest_file(c, FIXTURES / "meeting.vtt", headers_for("alice"))
    body = validate("chunk", c.get(f"/v1/chunks/{chunk_id(doc)}", headers=headers_for("alice")).get_json())
    assert (body["start_time"], body["end_time"]) == (1.0, 3602.0)
    assert body["page_number"] is None and body["bbox"] is None
    assert body["metadata"]["modality"] == "video_transcript"
    context = execute(c, {"query": "VPN gateways"}, headers_for("alice")).get_json()["contexts"][0]
    assert (context["modality"], context["start_time"], context["end_time"]) == ("video_transcript", 1.0, 3602.0)


@pytest.mark.unit
def test_plain_text_chunks_have_no_location(c: Any) -> None:
    doc = ingest(c, "Note", "Plain text without pages.", headers_for("alice"))
    body = validate("chunk", c.get(f"/v1/chunks/{chunk_id(doc)}", headers=headers_for("alice")).get_json())
    assert (body["page_number"], body["bbox"], body["start_time"], body["end_time"]) == (None, None, None, None)
    assert body["metadata"]["filename"] == "Note.txt"


@pytest.mark.unit
def test_chunk_document(c: Any) -> None:
    doc = ingest_file(c, FIXTURES / "two_pages.pdf", headers_for("alice"))
    resp = c.get(f"/v1/chunks/{chunk_id(doc)}/document", headers=headers_for("alice"))
    body = resp.get_json()
    _document_schema(body)
    assert (body["id"], body["name"], body["file_type"], body["file_name"]) == (
        doc,
        "Travel Policy",
        "application/pdf",
        "two_pages.pdf",
    )
    assert "Mileage is paid" in body["markdown_content"] and body["status"] == "ready"


@pytest.mark.unit
def test_invisible_unknown_and_odd_chunk_ids_are_404(c: Any) -> None:
    doc = ingest(c, "Bob note", "Private to bob.", headers_for("bob"))
    for path in (f"/v1/chunks/{chunk_id(doc)}", f"/v1/chunks/{chunk_id(doc)}/document"):
        assert c.get(path, headers=headers_for("bob")).status_code == 200
        for who, end_user in (("alice", None), ("carol", None), ("service", None)):
            resp = c.get(path, headers=headers_for(who, end_user))
            assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "not_found"
    for odd in ("nope", "x" * 300, chunk_id(doc, 7)):
        assert c.get(f"/v1/chunks/{odd}", headers=headers_for("bob")).status_code == 404
    nul = c.get("/v1/chunks/%00", headers=headers_for("bob"))  # refused at the edge, before any backend
    assert nul.status_code == 400 and nul.get_json()["error"]["code"] == "validation_error"
    assert c.get(f"/v1/chunks/{chunk_id(doc)}").status_code == 401


@pytest.mark.unit
def test_session_chunks_need_their_session(c: Any) -> None:
    doc = ingest(
        c, "Shared", "Shared with sales, then attached to a session.", headers_for("alice"), workspaces=["w-sales"]
    )
    session = "sess-0b7a3f0e"
    assert (
        c.post(f"/v1/sessions/{session}/documents", json={"document_id": doc}, headers=headers_for("alice")).status_code
        == 200
    )
    path = f"/v1/chunks/{chunk_id(doc)}"
    assert c.get(path, headers=headers_for("alice")).status_code == 200  # the owner sees it anywhere
    assert c.get(f"{path}?session_id={session}", headers=headers_for("alice")).status_code == 200
    assert c.get(f"{path}?session_id={session}", headers=headers_for("bob")).status_code == 404  # not bob's session
    assert c.get(path, headers={**headers_for("bob"), "X-Session-ID": session}).status_code == 404
    assert c.get(f"{path}?session_id=bad%20id", headers=headers_for("alice")).status_code == 400


@pytest.mark.integration
@pytest.mark.slow
def test_locations_survive_milvus_lite_and_scope_holds_there(tmp_path: Path) -> None:
    """The same routes over embedded Milvus Lite: boxes, pages and times round-trip through its fields, and
    invisible chunks stay 404 (the scope is applied in Milvus's filter expression)."""
    import logging

    from assistant_bridge.backends.milvus import MilvusBackend
    from assistant_bridge.embedders.base import HashingEmbedder
    from assistant_bridge.services import Services
    from assistant_bridge.store import SQLiteStore
    from tests.conftest import make_settings

    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    s = make_settings(tmp_path, auth={"keys": KEYS})
    backend = MilvusBackend(str(tmp_path / "m.db"), "chunks", 64, write_lock_path=tmp_path / "w.lock")
    svc = Services.from_settings(
        s, embedder=HashingEmbedder(64), backend=backend, store=SQLiteStore(s.data_path / "meta.sqlite3")
    )
    try:
        with make_app(tmp_path, keys=KEYS, services=svc).test_client() as c:
            pdf = ingest_file(c, FIXTURES / "two_pages.pdf", headers_for("alice"))
            vtt = ingest_file(c, FIXTURES / "meeting.vtt", headers_for("alice"))
            body = c.get(f"/v1/chunks/{chunk_id(pdf)}", headers=headers_for("alice")).get_json()
            assert [b["page_number"] for b in body["bbox"]] == [1, 2] and body["page_number"] == 1
            body = c.get(f"/v1/chunks/{chunk_id(vtt)}", headers=headers_for("alice")).get_json()
            assert (body["start_time"], body["end_time"], body["bbox"]) == (1.0, 3602.0, None)
            assert c.get(f"/v1/chunks/{chunk_id(pdf)}", headers=headers_for("bob")).status_code == 404
            result = execute(c, {"query": "travel portal flights"}, headers_for("alice")).get_json()
            assert result["outcome"] == "answer" and {x["document_id"] for x in result["contexts"]} <= {pdf, vtt}
            assert execute(c, {"query": "travel portal flights"}, headers_for("bob")).get_json()["contexts"] == []
    finally:
        backend.close()
