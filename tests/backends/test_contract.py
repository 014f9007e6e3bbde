"""One contract every search backend passes: write, update, delete, each mode, filters, scope isolation,
result shape. Runs against every backend in ``conftest.FACTORIES``."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest

from assistant_bridge.core.filters import parse_filter
from assistant_bridge.domain import BBox, Chunk, Ownership, Principal, Scope, SearchQuery
from assistant_bridge.embedders.base import HashingEmbedder

pytestmark = pytest.mark.integration

EMB = HashingEmbedder(64)
ADMIN = Scope(Principal(user_id="admin", admin=True))


def _chunk(doc: str, pos: int, title: str, text: str, own: Ownership = Ownership(), **kw: Any) -> Chunk:
    return Chunk(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc}/{pos}")),
        document_id=doc,
        title=title,
        text=text,
        position=pos,
        ownership=own,
        **kw,
    )


CORPUS = [
    _chunk(
        "d-pass",
        0,
        "Password reset",
        "Reset your password from the self-service portal; a code arrives by SMS.",
        language="en",
        page_number=1,
        bboxes=(BBox(1, 10, 20, 300, 40, 612, 792),),
    ),
    _chunk(
        "d-pass",
        1,
        "Password reset",
        "If the SMS code does not arrive, call the help desk.",
        language="en",
        page_number=2,
    ),
    _chunk("d-exp", 0, "Notes de frais", "Les notes de frais sont remboursées sous trente jours.", language="fr"),
    _chunk("d-ja", 0, "経費精算", "経費精算は月末までに提出してください。", language="ja"),
    _chunk(
        "d-vid",
        0,
        "Onboarding video",
        "Welcome to the VPN onboarding session.",
        modality="video_transcript",
        start_time=12.5,
        end_time=30.0,
    ),
    _chunk("d-t1", 0, "Tenant one plan", "secret roadmap of tenant one", Ownership(tenant="t1", owner_user_id="t1")),
    _chunk("d-t2", 0, "Tenant two plan", "secret roadmap of tenant two", Ownership(tenant="t2", owner_user_id="t2")),
    _chunk("d-alice", 0, "Alice notes", "secret roadmap of alice", Ownership(owner_user_id="alice")),
    _chunk(
        "d-sales", 0, "Sales notes", "secret roadmap of sales", Ownership(owner_user_id="x", workspace_ids=("w-sales",))
    ),
    _chunk(
        "d-sess",
        0,
        "Session upload",
        "secret roadmap attached to a chat",
        Ownership(owner_user_id="bob", session_id="s1"),
    ),
]


def _vec(texts: list[str]) -> np.ndarray:
    return EMB.embed_passages(texts)


@pytest.fixture(scope="module")
def loaded(backend: Any) -> Any:
    backend.upsert(CORPUS, _vec([f"{c.title}. {c.text}" for c in CORPUS]))
    return backend


def _search(
    b: Any, text: str, scope: Scope = ADMIN, mode: str = "dense", limit: int = 10, flt: str | None = None
) -> list[Any]:
    vec = tuple(float(x) for x in EMB.embed_queries([text])[0])
    return b.search(
        SearchQuery(
            text=text,
            scope=scope,
            mode=mode,
            limit=limit,  # type: ignore[arg-type]
            filter=parse_filter(flt),
            vector=vec,
        )
    )


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_each_mode_ranks_the_matching_chunk_first(loaded: Any, mode: str) -> None:
    hits = _search(loaded, "reset password portal", mode=mode)
    assert hits and hits[0].chunk.id == CORPUS[0].id
    assert all(isinstance(h.score, float) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_japanese_lexical_search(loaded: Any) -> None:
    hits = _search(loaded, "経費精算の方法", mode="lexical")
    assert hits and hits[0].chunk.document_id == "d-ja"


def test_round_trip_keeps_every_field(loaded: Any) -> None:
    (got,) = loaded.get_chunks([CORPUS[0].id], ADMIN)
    assert got == CORPUS[0]
    (vid,) = loaded.get_chunks([CORPUS[4].id], ADMIN)
    assert (vid.start_time, vid.end_time, vid.modality, vid.page_number) == (12.5, 30.0, "video_transcript", None)


def test_filters(loaded: Any) -> None:
    hits = _search(loaded, "password", flt='language == "fr"')
    assert {h.chunk.document_id for h in hits} == {"d-exp"}
    hits = _search(loaded, "password", flt="page_number >= 2")
    assert {h.chunk.id for h in hits} == {CORPUS[1].id}
    hits = _search(loaded, "roadmap", flt='document_id in ["d-alice", "d-sales"] and not title == "Sales notes"')
    assert {h.chunk.document_id for h in hits} == {"d-alice"}


@pytest.mark.parametrize(
    "principal, session, expected",
    [
        (Principal("alice", workspaces=("w-sales",)), None, {"d-alice", "d-sales"}),
        (Principal("bob"), None, {"d-sess"}),
        (Principal("carol"), "s1", {"d-sess"}),
        (Principal("carol"), "s2", set()),
        (Principal("t1", tenant="t1"), None, {"d-t1"}),
        (Principal("t1", workspaces=("w-sales",), tenant="t1"), None, {"d-t1", "d-sales"}),
        (Principal("t2", tenant="t2"), None, {"d-t2"}),
        (Principal("admin", admin=True), None, {"d-t1", "d-t2", "d-alice", "d-sales"}),
    ],
)
def test_scope_isolation(loaded: Any, principal: Principal, session: str | None, expected: set[str]) -> None:
    scope = Scope(principal, session_id=session)
    for mode in ("lexical", "dense", "hybrid"):
        got = {h.chunk.document_id for h in _search(loaded, "secret roadmap", scope, mode=mode, limit=50)}
        got &= {"d-t1", "d-t2", "d-alice", "d-sales", "d-sess"}
        assert got == expected, mode
    ids = [c.id for c in CORPUS]
    assert {c.document_id for c in loaded.get_chunks(ids, scope)} & {
        "d-t1",
        "d-t2",
        "d-alice",
        "d-sales",
        "d-sess",
    } == expected


def test_document_ids_narrow_and_never_widen(loaded: Any) -> None:
    scope = Scope(Principal("bob"), document_ids=("d-alice", "d-pass"))
    got = {h.chunk.document_id for h in _search(loaded, "secret roadmap password", scope, limit=50)}
    assert got == {"d-pass"}
    assert loaded.document_chunks("d-alice", scope) == []
    assert [c.position for c in loaded.document_chunks("d-pass", scope)] == [0, 1]


def test_update_and_delete(backend: Any) -> None:
    c = _chunk("d-tmp", 0, "Temp", "ephemeral zebra text")
    backend.upsert([c], _vec([c.text]))
    changed = _chunk("d-tmp", 0, "Temp", "ephemeral giraffe text")
    backend.upsert([changed], _vec([changed.text]))
    (got,) = backend.get_chunks([c.id], ADMIN)
    assert got.text == "ephemeral giraffe text"
    assert backend.delete_document("d-tmp") >= 1
    assert backend.get_chunks([c.id], ADMIN) == []
    assert not [h for h in _search(backend, "ephemeral giraffe", mode="lexical") if h.chunk.document_id == "d-tmp"]
