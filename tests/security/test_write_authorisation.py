"""Who may change which document, as a matrix over principals × visibilities × write routes.

The expected outcome of every cell is written out below by hand (not computed with the code under test), so
the matrix checks the rule of ``docs/security-model.md`` and :mod:`assistant_bridge.core.authz`. A refused
write answers 404 when the caller cannot see the document (its existence does not leak) and 403 when it can;
either way nothing stored changes. An allowed write does what it says.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.core import authz
from assistant_bridge.domain import Ownership, Principal
from assistant_bridge.errors import Forbidden
from tests.tools.helpers import make_app

pytestmark = pytest.mark.unit

KEYS = [
    {"key": "key-alice-0001", "user_id": "alice", "workspaces": ["w-sales"]},
    {"key": "key-dave-00001", "user_id": "dave", "workspaces": ["w-sales"]},
    {"key": "key-erin-00001", "user_id": "erin", "admin_workspaces": ["w-sales"]},
    {"key": "key-bob-000001", "user_id": "bob", "workspaces": ["w-eng"]},
    {"key": "key-admin-0001", "user_id": "admin", "admin": True},
    {"key": "key-service-01", "user_id": "svc", "service": True},
]
PRINCIPALS: dict[str, dict[str, str]] = {
    "alice": {"X-API-Key": "key-alice-0001"},  # member of w-sales
    "dave": {"X-API-Key": "key-dave-00001"},  # another member of w-sales
    "erin": {"X-API-Key": "key-erin-00001"},  # administers w-sales, not a member
    "bob": {"X-API-Key": "key-bob-000001"},  # another workspace
    "admin": {"X-API-Key": "key-admin-0001"},
    "u1": {"X-API-Key": "key-service-01", "X-End-User-ID": "u1"},  # a service acting for end user u1
    "u2": {"X-API-Key": "key-service-01", "X-End-User-ID": "u2"},
    "admin-for-u1": {"X-API-Key": "key-admin-0001", "X-End-User-ID": "u1"},  # an admin acting: just u1
}
# visibility -> (creator, extra fields of the create request)
DOCUMENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "private": ("alice", {}),
    "workspace": ("alice", {"workspaces": ["w-sales"]}),
    "public": ("admin", {"visibility": "public"}),
    "tenant": ("u1", {}),
    "session": ("alice", {"session_id": "alice-chat-1"}),
}
OK, HIDDEN, DENIED = 200, 404, 403
# DELETE /v1/documents/{id}: expected status per visibility and principal
DELETE: dict[str, dict[str, int]] = {
    "private": {
        "alice": OK,
        "dave": HIDDEN,
        "erin": HIDDEN,
        "bob": HIDDEN,
        "admin": OK,
        "u1": HIDDEN,
        "u2": HIDDEN,
        "admin-for-u1": HIDDEN,
    },
    "workspace": {
        "alice": OK,
        "dave": DENIED,
        "erin": OK,
        "bob": HIDDEN,
        "admin": OK,
        "u1": HIDDEN,
        "u2": HIDDEN,
        "admin-for-u1": HIDDEN,
    },
    "public": {
        "alice": DENIED,
        "dave": DENIED,
        "erin": DENIED,
        "bob": DENIED,
        "admin": OK,
        "u1": DENIED,
        "u2": DENIED,
        "admin-for-u1": DENIED,
    },
    "tenant": {
        "alice": HIDDEN,
        "dave": HIDDEN,
        "erin": HIDDEN,
        "bob": HIDDEN,
        "admin": OK,
        "u1": OK,
        "u2": HIDDEN,
        "admin-for-u1": OK,
    },
    "session": {
        "alice": OK,
        "dave": HIDDEN,
        "erin": HIDDEN,
        "bob": HIDDEN,
        "admin": OK,
        "u1": HIDDEN,
        "u2": HIDDEN,
        "admin-for-u1": HIDDEN,
    },
}
# POST /v1/sessions/{id}/documents: the same, except that a workspace admin may not move a document of
# someone else's into a session
ATTACH = {vis: {**row, **({"erin": DENIED} if vis == "workspace" else {})} for vis, row in DELETE.items()}


def _create(c: Any, visibility: str) -> str:
    creator, extra = DOCUMENTS[visibility]
    resp = c.post(
        "/v1/documents",
        json={"title": f"{visibility} doc", "text": f"Text of the {visibility} document.", **extra},
        headers=PRINCIPALS[creator],
    )
    assert resp.status_code == 201, resp.get_json()
    doc_id: str = resp.get_json()["document"]["id"]
    return doc_id


def _state(app: Any, doc_id: str) -> tuple[Any, ...]:
    """What a refused write must leave as it was: the document's row and every chunk of it."""
    svc = app.extensions["services"]
    doc = svc.store.get_document(doc_id)
    chunks = sorted((c.id, c.ownership) for c in svc.backend._chunks.values() if c.document_id == doc_id)
    return doc, tuple(chunks)


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return make_app(tmp_path, keys=KEYS)


@pytest.mark.parametrize("visibility", list(DOCUMENTS))
@pytest.mark.parametrize("who", list(PRINCIPALS))
def test_delete(app: Any, visibility: str, who: str) -> None:
    with app.test_client() as c:
        doc_id = _create(c, visibility)
        before = _state(app, doc_id)
        resp = c.delete(f"/v1/documents/{doc_id}", headers=PRINCIPALS[who])
        expected = DELETE[visibility][who]
        assert resp.status_code == expected, (who, visibility, resp.get_json())
        if expected == OK:
            assert _state(app, doc_id) == (None, ())
        else:
            assert resp.get_json()["error"]["code"] == ("forbidden" if expected == DENIED else "not_found")
            assert _state(app, doc_id) == before


@pytest.mark.parametrize("visibility", list(DOCUMENTS))
@pytest.mark.parametrize("who", list(PRINCIPALS))
def test_attach_to_a_session(app: Any, visibility: str, who: str) -> None:
    with app.test_client() as c:
        doc_id = _create(c, visibility)
        before = _state(app, doc_id)
        session = f"{who}-{uuid.uuid4().hex[:8]}"
        resp = c.post(f"/v1/sessions/{session}/documents", json={"document_id": doc_id}, headers=PRINCIPALS[who])
        expected = ATTACH[visibility][who]
        assert resp.status_code == expected, (who, visibility, resp.get_json())
        if expected == OK:
            doc, chunks = _state(app, doc_id)
            assert doc.ownership.session_id == session and {own.session_id for _, own in chunks} == {session}
        else:
            assert _state(app, doc_id) == before


@pytest.mark.parametrize(
    ("who", "extra", "expected"),
    [
        ("alice", {"workspaces": ["w-sales"]}, 201),
        ("dave", {"workspaces": ["w-sales"]}, 201),
        ("erin", {"workspaces": ["w-sales"]}, 201),  # a workspace admin may share with the workspace
        ("bob", {"workspaces": ["w-sales"]}, 403),
        ("u1", {"workspaces": ["w-sales"]}, 403),
        ("admin", {"workspaces": ["anything"]}, 201),
        ("alice", {"visibility": "public"}, 403),
        ("erin", {"visibility": "public"}, 403),
        ("u1", {"visibility": "public"}, 403),
        ("admin-for-u1", {"visibility": "public"}, 403),
        ("admin", {"visibility": "public"}, 201),
    ],
)
def test_create_share_and_publish(app: Any, who: str, extra: dict[str, Any], expected: int) -> None:
    with app.test_client() as c:
        resp = c.post("/v1/documents", json={"title": "t", "text": "Some text.", **extra}, headers=PRINCIPALS[who])
        assert resp.status_code == expected, resp.get_json()
        if expected != 201:
            assert app.extensions["services"].store.list_documents() == []
            assert app.extensions["services"].backend.count() == 0


def test_no_route_but_the_write_routes_changes_a_document(app: Any) -> None:
    """Every other route that names a document or a chunk only reads: after calling each as every principal,
    the store is as it was."""
    with app.test_client() as c:
        ids = {vis: _create(c, vis) for vis in DOCUMENTS}
        before = {vis: _state(app, doc_id) for vis, doc_id in ids.items()}
        for headers in PRINCIPALS.values():
            for doc_id in ids.values():
                for path in (f"/v1/documents/{doc_id}", f"/v1/documents/{doc_id}/content", "/v1/documents"):
                    assert c.get(path, headers=headers).status_code in (200, 404)
                for method in ("put", "patch"):
                    assert getattr(c, method)(f"/v1/documents/{doc_id}", headers=headers).status_code == 405
        assert {vis: _state(app, doc_id) for vis, doc_id in ids.items()} == before


def test_the_rule_itself() -> None:
    own = Ownership(owner_user_id="alice", workspace_ids=("w",))
    alice, erin = Principal("alice", ("w",)), Principal("erin", admin_workspaces=("w",))
    tenant_erin = Principal("erin", tenant="t1", admin_workspaces=("w",))
    assert authz.allowed("delete", alice, own) and authz.allowed("delete", erin, own)
    assert not authz.allowed("delete", tenant_erin, own)  # administers w in tenant t1 only
    assert not authz.allowed("attach", erin, own) and authz.allowed("attach", alice, own)
    assert not authz.allowed("delete", Principal("alice", tenant="t1"), own)  # another tenant's alice
    assert authz.allowed("publish", Principal("root", admin=True))
    with pytest.raises(Forbidden, match="publish"):
        authz.require("publish", Principal("root", admin=True, tenant="t1"))
    with pytest.raises(Forbidden, match="workspaces"):
        authz.ownership_for_create(alice, ["other"], public=False)
