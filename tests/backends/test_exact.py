"""The exact dense index beside Milvus Lite (``backends/exact.py``): its scope mask is the visibility rule,
its results are exact, and every process sees every other's writes through the change log.

The contract suite (``test_contract.py``) also runs against it (``milvus-lite-exact``)."""

from __future__ import annotations

import itertools
import random
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assistant_bridge.backends.exact import ExactDenseBackend, ExactIndex, _rows
from assistant_bridge.backends.milvus import MilvusBackend
from assistant_bridge.core.scope import chunk_visible
from assistant_bridge.domain import Chunk, Ownership, Principal, Scope, SearchQuery

DIM = 16
USERS = ["", "alice", "bob", "carol"]
TENANTS = ["", "t1", "t2"]
SESSIONS = ["", "s1", "s2"]
WORKSPACES = [(), ("w1",), ("w2",), ("w1", "w3")]


def _chunks(n: int, seed: int = 0) -> tuple[list[Chunk], np.ndarray]:
    rnd = random.Random(seed)
    chunks = [
        Chunk(
            id=f"c{i}",
            document_id=f"d{i // 3}",
            title=f"T{i}",
            text=f"text {i}",
            position=i % 3,
            ownership=Ownership(
                owner_user_id=rnd.choice(USERS),
                workspace_ids=rnd.choice(WORKSPACES),
                tenant=rnd.choice(TENANTS),
                session_id=rnd.choice(SESSIONS),
            ),
        )
        for i in range(n)
    ]
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return chunks, v / np.linalg.norm(v, axis=1, keepdims=True)


def _scopes() -> list[Scope]:
    out = []
    for user, tenant, admin, ws, session in itertools.product(
        USERS[1:] + ["dave"], [None, "t1", "t3"], [False, True], [(), ("w1",), ("w2", "w3")], [None, "s1"]
    ):
        out.append(Scope(Principal(user, workspaces=ws, tenant=tenant, admin=admin), session_id=session))
    out.append(Scope(Principal("alice"), document_ids=("d1", "d2", "nope")))
    out.append(Scope(Principal("alice"), document_ids=()))
    return out


@pytest.mark.unit
def test_the_mask_is_the_visibility_rule_for_every_scope() -> None:
    chunks, vectors = _chunks(300)
    index = ExactIndex(DIM)
    index.replace_documents((), [r[:7] for r in _rows(chunks, vectors)])
    for scope in _scopes():
        mask = index.visible(scope)
        expected = np.array([chunk_visible(c, scope) for c in chunks])
        assert np.array_equal(mask, expected), scope


@pytest.mark.unit
def test_top_is_exact_within_the_scope_and_survives_removal_and_compaction() -> None:
    chunks, vectors = _chunks(3000, seed=1)
    index = ExactIndex(DIM)
    index.replace_documents((), [r[:7] for r in _rows(chunks, vectors)])
    removed = {f"d{i}" for i in range(0, 1000, 2)}  # 1,500 rows: past the compaction threshold
    index.replace_documents(removed, [])
    assert len(index) == 1500
    keep = [i for i, c in enumerate(chunks) if c.document_id not in removed]
    q = vectors[7] + 0.05
    for scope in _scopes()[:40]:
        visible = [i for i in keep if chunk_visible(chunks[i], scope)]
        want = sorted(visible, key=lambda i: -float(vectors[i] @ q))[:10]
        got = index.top(q, scope, 10)
        assert [cid for cid, _ in got] == [chunks[i].id for i in want]
        assert all(abs(s - float(vectors[i] @ q)) < 1e-5 for (_, s), i in zip(got, want, strict=False))


@pytest.fixture
def two_processes(tmp_path: Path) -> Any:
    """Two wrappers over one Milvus Lite file and one data directory: two processes of one service."""
    inner = MilvusBackend(str(tmp_path / "m.db"), "chunks", DIM, write_lock_path=tmp_path / "w.lock")
    inner.warm_up()
    a, b = ExactDenseBackend(inner, tmp_path, DIM), ExactDenseBackend(inner, tmp_path, DIM)
    a.warm_up()
    b.warm_up()
    yield a, b
    inner.close()


def _dense(backend: Any, v: np.ndarray, scope: Scope, limit: int = 5) -> list[str]:
    return [
        h.chunk.id
        for h in backend.search(
            SearchQuery(text="x", scope=scope, mode="dense", limit=limit, vector=tuple(float(x) for x in v))
        )
    ]


@pytest.mark.integration
def test_a_write_in_one_process_is_searched_in_the_other(two_processes: Any) -> None:
    a, b = two_processes
    chunks, vectors = _chunks(30, seed=2)
    chunks = [Chunk(**{**c.__dict__, "ownership": Ownership()}) for c in chunks]  # public: everyone reads them
    admin = Scope(Principal("root", admin=True))
    assert _dense(b, vectors[0], admin) == []
    a.upsert(chunks, vectors)
    assert _dense(b, vectors[4], admin, 1) == [chunks[4].id]
    assert (
        b.inner.search(
            SearchQuery(text="x", scope=admin, mode="dense", limit=1, vector=tuple(float(x) for x in vectors[4]))
        )[0].chunk.id
        == chunks[4].id
    )
    hit = b.search(
        SearchQuery(text="x", scope=admin, mode="dense", limit=1, vector=tuple(float(x) for x in vectors[4]))
    )[0]
    assert hit.chunk.title == chunks[4].title and hit.chunk.ownership == chunks[4].ownership
    a.delete_document(chunks[4].document_id)
    assert chunks[4].id not in _dense(b, vectors[4], admin, 30)
    moved = [
        Chunk(**{**c.__dict__, "ownership": Ownership(owner_user_id="alice", session_id="s9")})
        for c in chunks
        if c.document_id == "d0"
    ]
    a.upsert(moved, vectors[: len(moved)])  # an attachment to a session changes who may read the chunks
    bob = Scope(Principal("bob"))
    assert not set(_dense(b, vectors[0], bob, 30)) & {c.id for c in moved}
    assert {c.id for c in b.document_chunks("d0", Scope(Principal("alice")))} == {c.id for c in moved}


@pytest.mark.integration
def test_an_older_store_is_copied_over_once(tmp_path: Path) -> None:
    inner = MilvusBackend(str(tmp_path / "m.db"), "chunks", DIM, write_lock_path=tmp_path / "w.lock")
    inner.warm_up()
    chunks, vectors = _chunks(40, seed=3)
    chunks = [Chunk(**{**c.__dict__, "ownership": Ownership()}) for c in chunks]
    inner.upsert(chunks, vectors)  # written before the exact index existed
    wrapped = ExactDenseBackend(inner, tmp_path / "data", DIM)
    wrapped.warm_up()
    admin = Scope(Principal("root", admin=True))
    assert _dense(wrapped, vectors[9], admin, 1) == [chunks[9].id]
    assert len(wrapped.get_chunks([c.id for c in chunks], admin)) == 40
    inner.close()


@pytest.mark.integration
def test_filtered_searches_are_answered_in_process_as_milvus_answers_them(two_processes: Any, monkeypatch: Any) -> None:
    """A filter is applied to the in-process ranking's best chunks, batch by batch: the answer is Milvus's own
    (same chunks, same order), without a call to Milvus; a filter that few of the best chunks pass goes to
    Milvus; so does an ``rrf`` hybrid search."""
    from dataclasses import replace

    import assistant_bridge.backends.exact as exact
    from assistant_bridge.core.filters import matches, parse_filter, stored_record

    monkeypatch.setattr(exact, "LEXICAL_REBUILD_DELAY", 0.05)
    a, b = two_processes
    chunks, vectors = _chunks(240, seed=4)
    chunks = [
        Chunk(
            **{
                **c.__dict__,
                "text": f"parking permit rule {i}" + (" zebra" if i == 17 else ""),
                "language": ["en", "fr", "ja"][i % 3],
                "url": None if i % 4 else f"https://x/{i}",
                "page_number": i % 7 or None,
                "ownership": Ownership() if i % 5 else Ownership(owner_user_id="alice"),
            }
        )
        for i, c in enumerate(chunks)
    ]
    a.upsert(chunks, vectors)
    b.search(SearchQuery(text="parking", scope=Scope(Principal("u")), mode="lexical"))  # schedules the BM25 build
    deadline = time.monotonic() + 10
    while (b._lexical is None or b._lexical.version != b._index.version) and time.monotonic() < deadline:
        time.sleep(0.05)
    calls: list[SearchQuery] = []
    real = b.inner.search
    monkeypatch.setattr(b.inner, "search", lambda q: calls.append(q) or real(q))
    filters = [
        'language == "fr"',
        'language in ["en", "ja"] and page_number >= 3',
        'url == ""',
        'not language == "en" or position == 0',
        'title == "T17"',  # one chunk passes: past the first batch, the ranking runs out (lexical) or not
    ]
    for scope in (Scope(Principal("bob")), Scope(Principal("alice")), Scope(Principal("root", admin=True))):
        for flt, mode, limit in itertools.product(filters, ("dense", "lexical"), (3, 10)):
            query = SearchQuery(
                text="parking permit zebra",
                scope=scope,
                mode=mode,  # type: ignore[arg-type]
                limit=limit,
                filter=parse_filter(flt),
                vector=tuple(float(x) for x in vectors[5]),
            )
            calls.clear()
            hits = b.search(query)
            used_milvus = bool(calls)
            got = [h.chunk.id for h in hits]
            assert all(matches(query.filter, stored_record(h.chunk)) for h in hits)
            if used_milvus:  # only the filter one chunk passes is handed on, and Milvus's answer is returned
                assert flt == 'title == "T17"' and got == [h.chunk.id for h in real(query)], (flt, mode)
                continue
            # the whole in-process ranking, filtered here: the same scores in the same order (BM25 ties may
            # swap chunks of equal score)
            ranking = b.search(replace(query, filter=None, limit=500))
            passing = [h for h in ranking if matches(query.filter, stored_record(h.chunk))][:limit]
            assert [round(h.score, 5) for h in hits] == [round(h.score, 5) for h in passing], (flt, mode, limit)
            if mode == "dense":  # and Milvus's own answer (its BM25 scores differ from the in-process ones)
                assert got == [h.chunk.id for h in real(query)], (flt, limit, scope)
    monkeypatch.setattr(exact, "FILTER_SCAN", 8)
    calls.clear()
    rare = SearchQuery(
        text="x",
        scope=Scope(Principal("u")),
        mode="dense",
        limit=3,
        filter=parse_filter('title == "T17"'),
        vector=tuple(float(x) for x in vectors[5]),
    )
    assert [h.chunk.id for h in b.search(rare)] == ["c17"] and calls
    calls.clear()
    b.search(SearchQuery(text="parking", scope=Scope(Principal("u")), mode="hybrid", vector=rare.vector))
    assert calls and calls[0].mode == "hybrid"
    assert uuid  # noqa: B018 - imported for the chunk ids of other tests


@pytest.mark.integration
def test_lexical_search_is_answered_in_process_and_rebuilt_after_a_change(two_processes: Any, monkeypatch: Any) -> None:
    import assistant_bridge.backends.exact as exact

    monkeypatch.setattr(exact, "LEXICAL_REBUILD_DELAY", 0.05)
    a, b = two_processes
    docs = [
        ("Password reset", "Reset your password from the self-service portal."),
        ("Expenses", "Expense claims are due by the fifth working day."),
        ("経費精算", "経費精算は月末までに提出してください。"),
    ]
    chunks = [
        Chunk(id=f"x{i}", document_id=f"dx{i}", title=t, text=x, position=0, ownership=Ownership())
        for i, (t, x) in enumerate(docs)
    ]
    a.upsert(chunks, np.eye(DIM, dtype=np.float32)[:3])
    scope = Scope(Principal("u"))

    def lexical(backend: Any, text: str) -> list[str]:
        return [h.chunk.id for h in backend.search(SearchQuery(text=text, scope=scope, mode="lexical", limit=3))]

    assert lexical(b, "expense claims due") == lexical(b.inner, "expense claims due")  # stale: Milvus answers
    deadline = time.monotonic() + 10
    while (b._lexical is None or b._lexical.version != b._index.version) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert b._lexical.version == b._index.version
    assert lexical(b, "expense claims due")[0] == "x1"
    assert lexical(b, "経費精算の締め切り")[0] == "x2"
    assert lexical(b, "password portal")[0] == "x0"
    assert lexical(b, "zebra") == []
    hidden = Scope(Principal("u"), document_ids=("dx0",))
    assert [
        h.chunk.id for h in b.search(SearchQuery(text="expense claims", scope=hidden, mode="lexical", limit=3))
    ] == []


@pytest.mark.integration
def test_settle_brings_the_lexical_index_up_to_date_at_once(two_processes: Any, monkeypatch: Any) -> None:
    """A benchmark that ingests then asks settles first: its lexical searches are the in-process index's at
    once, as a rerun's would be, not Milvus's for the few seconds before the rebuild."""
    import assistant_bridge.backends.exact as exact

    monkeypatch.setattr(exact, "LEXICAL_REBUILD_DELAY", 60.0)  # the background rebuild would come too late
    a, _ = two_processes
    chunks = [
        Chunk(id="s0", document_id="ds0", title="Expenses", text="Claims are due by the fifth.", ownership=Ownership()),
        Chunk(id="s1", document_id="ds1", title="Options", text="Use --hard to reset.", ownership=Ownership()),
    ]
    a.upsert(chunks, np.eye(DIM, dtype=np.float32)[:2])
    query = SearchQuery(text="--hard", scope=Scope(Principal("u")), mode="lexical", limit=2)
    assert a._ranking(a._ensure_index(), query, 2) is None  # stale: Milvus would answer
    a.settle()
    assert a._ranking(a._ensure_index(), query, 2) is not None
    assert [h.chunk.id for h in a.search(query)] == ["s1"]


@pytest.mark.integration
def test_staged_chunks_are_found_by_words_then_by_vector_once_written(two_processes: Any, monkeypatch: Any) -> None:
    """Lexical first (``ingest/service.py``): staged rows are read by every process's lexical index and by chunk
    reads, skipped by dense searches, and replaced by the vectored rows; a delete removes them."""
    import assistant_bridge.backends.exact as exact

    monkeypatch.setattr(exact, "LEXICAL_REBUILD_DELAY", 0.05)
    a, b = two_processes
    public = [
        Chunk(id="p0", document_id="dp", title="Expenses", text="Claims are due on Friday.", ownership=Ownership())
    ]
    a.upsert(public, np.eye(DIM, dtype=np.float32)[:1])
    staged = [
        Chunk(id=f"s{i}", document_id="ds", title="Handbook", text=f"Parking permit rule {i}.", ownership=Ownership())
        for i in range(3)
    ]
    a.stage(staged)
    scope = Scope(Principal("u"))

    def lexical(backend: Any) -> list[str]:
        return [h.chunk.id for h in backend.search(SearchQuery(text="parking permit", scope=scope, mode="lexical"))]

    lexical(b)  # the first search after a change schedules the rebuild
    deadline = time.monotonic() + 10
    while (b._lexical is None or b._lexical.version != b._index.version) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(lexical(b)) == ["s0", "s1", "s2"]
    from assistant_bridge.core.filters import parse_filter

    handbook = SearchQuery(
        text="parking permit", scope=scope, mode="lexical", filter=parse_filter('title == "Handbook"')
    )
    assert sorted(h.chunk.id for h in b.search(handbook)) == ["s0", "s1", "s2"]  # a filtered search finds them too
    assert a.inner.count() == 1  # Milvus, the store of record, has only the written chunk
    v = np.eye(DIM, dtype=np.float32)
    assert _dense(b, v[1], scope, 10) == ["p0"]  # no vector yet: no dense hit, however close
    assert {c.id for c in b.get_chunks(["s0", "s1"], scope)} == {"s0", "s1"}
    a.upsert(staged, v[1:4])
    assert _dense(b, v[1], scope, 1) == ["s0"]
    a.stage([Chunk(id="z0", document_id="dz", title="Draft", text="Parking draft.", ownership=Ownership())])
    a.delete_document("dz")
    assert b.get_chunks(["z0"], scope) == [] and "z0" not in lexical(b)


@pytest.mark.unit
def test_a_question_naming_an_option_finds_the_chunks_that_name_it() -> None:
    """The BM25 index counts "--hard" as a token besides "hard": "what does --hard do?" finds git-reset's
    option before git-clone's "hard links"; "-L" and "--location" are tokens, a hyphenated word is not, and a
    one-letter option keeps its case (rsync's -P is not its -p)."""
    from assistant_bridge.backends.exact import LexicalIndex

    assert LexicalIndex.tokens("Use -L, --location; -p; e-mail, 10-year, gzip -9") == [
        *("use", "l", "location", "p", "e", "mail", "10", "year", "gzip", "9"),
        *("-L", "--location", "-p", "-9"),
    ]
    texts = [
        "-s, --shared: hard links are hard to undo, so hard links are shared.",
        "--hard: Resets the index and the working tree; changes are discarded.",
        "Unrelated text about tags.",
    ]
    index = LexicalIndex.build(np.arange(3), texts, version=1)
    assert [row for row, _ in index.top("What does --hard do?", np.ones(3, dtype=bool), 3)][0] == 1
    assert [row for row, _ in index.top("hard links", np.ones(3, dtype=bool), 3)][0] == 0
