"""Document ingestion and management routes, and that bad input loses nothing."""

from __future__ import annotations

import gzip
import io
from typing import Any

import pytest

from assistant_bridge.validation import validate

pytestmark = pytest.mark.unit


def test_json_ingest_get_content_delete(client: Any, services: Any) -> None:
    resp = client.post("/v1/documents", json={"title": "Holidays", "text": "The office closes on 25 December."})
    assert resp.status_code == 201
    doc = resp.get_json()["document"]
    validate("document", doc)
    again = client.post("/v1/documents", json={"title": "Holidays", "text": "The office closes on 25 December."})
    assert again.status_code == 200 and again.get_json()["created"] is False
    assert again.get_json()["document"]["id"] == doc["id"]
    got = client.get(f"/v1/documents/{doc['id']}").get_json()
    assert got["chunk_count"] == doc["chunk_count"] >= 1
    content = client.get(f"/v1/documents/{doc['id']}/content").get_json()
    assert "25 December" in content["text"]
    assert client.delete(f"/v1/documents/{doc['id']}").status_code == 200
    assert client.get(f"/v1/documents/{doc['id']}").status_code == 404
    assert services.backend.count() == 0


def test_a_document_still_being_ingested_is_listed_as_processing_and_cannot_be_deleted(
    client: Any, services: Any
) -> None:
    """On the embedded default a document's row says ``processing`` while its staged chunks are embedded
    (``ingest/service.py``); deleting it then is a 409 that says what to do, and leaves it as it is."""
    from dataclasses import replace

    resp = client.post("/v1/documents", json={"title": "Holidays", "text": "The office closes on 25 December."})
    doc = services.store.get_document(resp.get_json()["document"]["id"])
    services.store.put_document(replace(doc, status="processing"))
    listed = client.get("/v1/documents?status=processing").get_json()
    assert [d["id"] for d in listed["documents"]] == [doc.id]
    refused = client.delete(f"/v1/documents/{doc.id}")
    assert refused.status_code == 409
    body = refused.get_json()
    assert body["error"]["code"] == "document_processing" and "still being ingested" in body["error"]["message"]
    assert client.get(f"/v1/documents/{doc.id}").get_json()["status"] == "processing"


def test_multipart_upload(client: Any) -> None:
    data = {"file": (io.BytesIO(b"# VPN\n\nInstall the client and connect."), "vpn.md")}
    resp = client.post("/v1/documents", data=data, content_type="multipart/form-data")
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["document"]["title"] == "VPN"


def test_a_compressed_manual_page_upload_is_searchable_by_its_option(client: Any) -> None:
    page = b".TH WC 1\n.SH NAME\nwc \\- print counts\n.SH OPTIONS\n.TP\n\\fB\\-l\\fR, \\fB\\-\\-lines\\fR\nprint the newline counts\n"
    data = {"file": (io.BytesIO(gzip.compress(page)), "wc.1.gz")}
    resp = client.post("/v1/documents", data=data, content_type="multipart/form-data")
    assert resp.status_code == 201, resp.get_json()
    document = resp.get_json()["document"]
    assert document["title"] == "wc(1): print counts"
    content = client.get(f"/v1/documents/{document['id']}/content").get_json()["text"]
    assert "-l, --lines: print the newline counts" in content
    listed = client.get("/v1/documents?kind=roff").get_json()
    assert [d["id"] for d in listed["documents"]] == [document["id"]]


@pytest.mark.parametrize(
    "filename, payload, status",
    [
        ("virus.exe", b"MZ....", 415),
        ("broken.pdf", b"%PDF-1.4 this is not a pdf", 422),
        ("bomb.txt.gz", b"\x1f\x8b\x08\x00 damaged", 422),
    ],
)
def test_bad_files_are_rejected_and_nothing_is_lost(
    client: Any, services: Any, filename: str, payload: bytes, status: int
) -> None:
    client.post("/v1/documents", json={"title": "Keep me", "text": "Existing document text."})
    before = services.backend.count()
    resp = client.post(
        "/v1/documents", data={"file": (io.BytesIO(payload), filename)}, content_type="multipart/form-data"
    )
    assert resp.status_code == status
    validate("error", resp.get_json())
    assert services.backend.count() == before
    assert len(services.store.list_documents()) == 1


def test_backend_failure_during_ingest_leaves_nothing_half_written(client: Any, services: Any) -> None:
    from assistant_bridge.errors import BackendUnavailable

    services.warm_up()
    services.backend.fail_next = BackendUnavailable("down")
    resp = client.post("/v1/documents", json={"title": "T", "text": "Some text."})
    assert resp.status_code == 503
    services.backend.fail_next = None
    assert services.store.list_documents() == [] and services.backend.count() == 0


def test_json_ingest_validation(client: Any) -> None:
    resp = client.post("/v1/documents", json={"title": "No text"})
    assert resp.status_code == 400 and "text" in resp.get_json()["error"]["message"]
    resp = client.post("/v1/documents", json={"title": "T", "text": "x", "colour": "red"})
    assert resp.status_code == 400


def test_a_document_past_the_chunk_cap_is_refused_and_nothing_is_indexed(client: Any, services: Any) -> None:
    services.ingestor.settings.max_chunks_per_document = 3
    text = " ".join(
        f"Sentence {i} of a handbook that goes on about travel and expenses for a while." for i in range(300)
    )
    resp = client.post("/v1/documents", json={"title": "Too long", "text": text})
    assert resp.status_code == 413
    err = resp.get_json()["error"]
    assert err["code"] == "too_many_chunks" and "limit is 3" in err["message"]
    assert services.backend.count() == 0 and services.store.list_documents() == []
    assert client.post("/v1/documents", json={"title": "Short", "text": "Fits in one chunk."}).status_code == 201
