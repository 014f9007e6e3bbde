"""Document listings that scale: the scope applied in SQL (the same rule as ``chunk_visible``), cursor pages
with a total, and filters; the same for the documents of a chat session."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_bridge.domain import Document, Ownership, Principal, Scope
from assistant_bridge.ingest.service import document_visible
from assistant_bridge.store import SQLiteStore
from assistant_bridge.validation import validate
from tests.conftest import KEYS, headers_for, make_services, make_settings

pytestmark = pytest.mark.unit


def _doc(i: int, own: Ownership, *, status: str = "ready", mime: str = "text/plain") -> Document:
    return Document(
        id=f"00000000-0000-4000-8000-{i:012d}",
        title=f"Doc {i}",
        filename="",
        content_hash=str(i),
        mime_type=mime,
        ownership=own,
        chunk_count=1,
        created_at=1000.0 + i,
        status=status,
    )


@pytest.fixture
def app(tmp_path: Path) -> Any:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, auth={"keys": KEYS})
    return create_app(s, make_services(s))


def test_other_peoples_older_documents_do_not_hide_mine(app: Any) -> None:
    store = app.extensions["services"].store
    for i in range(1100):  # older than alice's, and none hers
        store.put_document(_doc(i, Ownership(owner_user_id="bob")))
    for i in range(1100, 1350):
        store.put_document(_doc(i, Ownership(owner_user_id="alice")))
    with app.test_client() as c:
        seen: list[str] = []
        cursor = None
        for _ in range(10):
            resp = c.get(
                "/v1/documents",
                query_string={"limit": 100, **({"cursor": cursor} if cursor else {})},
                headers=headers_for("alice"),
            )
            assert resp.status_code == 200
            page = resp.get_json()
            assert page["total"] == 250
            for d in page["documents"]:
                validate("document", d)
            seen += [d["id"] for d in page["documents"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == 250
        assert seen == sorted(seen, reverse=True)  # newest first
        default = c.get("/v1/documents", headers=headers_for("alice")).get_json()
        assert len(default["documents"]) == 100 and default["next_cursor"]


def test_filters_and_bad_parameters(app: Any) -> None:
    store = app.extensions["services"].store
    store.put_document(_doc(1, Ownership(owner_user_id="alice"), mime="application/pdf"))
    store.put_document(_doc(2, Ownership(owner_user_id="alice"), status="failed"))
    store.put_document(_doc(3, Ownership(owner_user_id="alice", session_id="s-1")))
    with app.test_client() as c:

        def ids(**q: Any) -> list[str]:
            resp = c.get("/v1/documents", query_string=q, headers=headers_for("alice"))
            assert resp.status_code == 200, resp.get_json()
            return [d["id"] for d in resp.get_json()["documents"]]

        assert ids(kind="pdf") == [_doc(1, Ownership()).id]
        assert ids(status="failed") == [_doc(2, Ownership()).id]
        assert ids(session_id="s-1") == [_doc(3, Ownership()).id]
        for bad in (
            {"limit": "0"},
            {"limit": "1001"},
            {"limit": "x"},
            {"cursor": "not-a-cursor"},
            {"kind": "exe"},
            {"session_id": "bad id!"},
            {"status": "s" * 40},
        ):
            resp = c.get("/v1/documents", query_string=bad, headers=headers_for("alice"))
            assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "validation_error", bad


def test_session_documents_are_paged_too(app: Any) -> None:
    with app.test_client() as c:
        for i in range(5):
            resp = c.post(
                "/v1/documents",
                json={"title": f"t{i}", "text": f"Text {i}.", "session_id": "chat-1"},
                headers=headers_for("alice"),
            )
            assert resp.status_code == 201, resp.get_json()
        page = c.get("/v1/sessions/chat-1/documents?limit=2", headers=headers_for("alice")).get_json()
        assert page["session_id"] == "chat-1" and page["total"] == 5 and len(page["documents"]) == 2
        rest = c.get(
            f"/v1/sessions/chat-1/documents?limit=10&cursor={page['next_cursor']}", headers=headers_for("alice")
        ).get_json()
        assert len(rest["documents"]) == 3 and rest["next_cursor"] is None
        assert c.get("/v1/sessions/chat-1/documents", headers=headers_for("bob")).status_code == 404


USERS = st.sampled_from(["", "alice", "bob", "u1"])
OWNERSHIPS = st.builds(
    Ownership,
    owner_user_id=USERS,
    workspace_ids=st.lists(st.sampled_from(["w1", "w2"]), max_size=2, unique=True).map(tuple),
    tenant=st.sampled_from(["", "u1", "u2"]),
    session_id=st.sampled_from(["", "s1", "s2"]),
)
PRINCIPALS = st.builds(
    Principal,
    user_id=st.sampled_from(["alice", "bob", "u1"]),
    workspaces=st.lists(st.sampled_from(["w1", "w2"]), max_size=2, unique=True).map(tuple),
    tenant=st.sampled_from([None, "u1", "u2"]),
    admin=st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    owns=st.lists(OWNERSHIPS, min_size=1, max_size=12),
    p=PRINCIPALS,
    session=st.sampled_from([None, "s1", "s2"]),
    narrow=st.booleans(),
)
def test_the_sql_rule_is_the_python_rule(
    owns: list[Ownership], p: Principal, session: str | None, narrow: bool
) -> None:
    store = SQLiteStore(":memory:")
    docs = [_doc(i, own) for i, own in enumerate(owns)]
    for d in docs:
        store.put_document(d)
    ids = tuple(d.id for d in docs[::2]) if narrow else None
    scope = Scope(principal=p, session_id=session, document_ids=ids)
    got, total = store.documents_page(scope, limit=100)
    expected = [d.id for d in docs if document_visible(d, scope)]
    assert sorted(d.id for d in got) == sorted(expected) and total == len(expected)


def test_every_combination_once() -> None:
    """The property test above, exhaustively over one document per ownership and every principal."""
    owns = [
        Ownership(o, w, t, s)
        for o, w, t, s in itertools.product(["", "alice", "u1"], [(), ("w1",)], ["", "u1"], ["", "s1"])
    ]
    store = SQLiteStore(":memory:")
    docs = [_doc(i, own) for i, own in enumerate(owns)]
    for d in docs:
        store.put_document(d)
    for user, ws, tenant, admin, session in itertools.product(
        ["alice", "u1"], [(), ("w1",)], [None, "u1"], [False, True], [None, "s1"]
    ):
        scope = Scope(principal=Principal(user, ws, tenant, admin), session_id=session)
        got, _ = store.documents_page(scope, limit=1000)
        assert sorted(d.id for d in got) == sorted(d.id for d in docs if document_visible(d, scope)), scope
