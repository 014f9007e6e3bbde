"""Scope on every path that reads chunks: no call returns a chunk, a preview, a count or a citation from
outside its scope, whatever it passes in ``document_ids``, ``filter``, ``session_id`` or a guessed id.

Two tenants (end users ``t1``, ``t2`` of a service credential), users in two workspaces (alice and dave in
``w-sales``, bob in ``w-eng``), users in none (carol, the service credential itself), an admin, and two chat
sessions with attached documents. Every document carries a unique marker word; :func:`expected` restates
``docs/security-model.md`` and decides which markers each caller may ever see.

To cover a new path, add one ``Probe`` to :data:`PROBES`: a function that runs one query as a caller and
returns what came back, and the request options the path understands (``document_ids``, ``filter``,
``session``). Every test below then runs on it, with each option it supports.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KEYS, headers_for, make_services, make_settings
from tests.conversation.helpers import fake_runtime
from tests.tools.helpers import chunk_id, components, events_of, ingest, make_app, wait_status

pytestmark = pytest.mark.unit
QUERY = "zebra migration schedule"
TAG = re.compile(r'<citation id="([^"]+)">\[\d+\]</citation>')
DAVE = {"key": "key-dave-00001", "user_id": "dave", "workspaces": ["w-sales"]}


@dataclass(frozen=True)
class Caller:
    name: str
    headers: dict[str, str]
    user: str
    workspaces: tuple[str, ...] = ()
    tenant: str | None = None
    admin: bool = False


CALLERS = [
    Caller("alice", headers_for("alice"), "alice", ("w-sales",)),
    Caller("dave", {"X-API-Key": DAVE["key"]}, "dave", ("w-sales",)),
    Caller("bob", headers_for("bob"), "bob", ("w-eng",)),
    Caller("carol", headers_for("carol"), "carol"),
    Caller("svc", headers_for("service"), "svc"),
    Caller("t1", headers_for("service", "t1"), "t1", tenant="t1"),
    Caller("t2", headers_for("service", "t2"), "t2", tenant="t2"),
    Caller("admin", headers_for("admin"), "admin", admin=True),
]
BY_NAME = {c.name: c for c in CALLERS}


@dataclass(frozen=True)
class Doc:
    name: str
    creator: str
    owner: str
    tenant: str = ""
    workspaces: tuple[str, ...] = ()
    session: str = ""
    public: bool = False

    @property
    def marker(self) -> str:
        return f"marker{self.name.replace('_', '').lower()}"


SESSION_ALICE = f"sess-alice-{uuid.uuid4()}"
SESSION_T1 = f"sess-t1-{uuid.uuid4()}"
DOCS = [
    Doc("PUB", "admin", "", public=True),
    Doc("A_PRIV", "alice", "alice"),
    Doc("A_SALES", "alice", "alice", workspaces=("w-sales",)),
    Doc("A_SESS", "alice", "alice", workspaces=("w-sales",), session=SESSION_ALICE),
    Doc("B_PRIV", "bob", "bob"),
    Doc("B_ENG", "bob", "bob", workspaces=("w-eng",)),
    Doc("SVC", "svc", "svc"),
    Doc("T1", "t1", "t1", tenant="t1"),
    Doc("T1_SESS", "t1", "t1", tenant="t1", session=SESSION_T1),
    Doc("T2", "t2", "t2", tenant="t2"),
]


def expected(doc: Doc, who: Caller, session: str | None = None) -> bool:
    """The five rules of docs/security-model.md."""
    in_session = bool(doc.session) and doc.session == session
    if doc.session and not in_session and doc.owner != who.user:
        return False  # rule 2
    if who.tenant is not None and doc.tenant == who.tenant:
        return True  # rule 3: the end user's own documents (global ones go through rule 5)
    if who.admin and who.tenant is None:
        return True  # rule 4
    if doc.tenant:
        return False
    return (
        doc.owner == who.user
        or in_session
        or bool(set(doc.workspaces) & set(who.workspaces))
        or (doc.owner == "" and not doc.workspaces)
    )  # rule 5


@dataclass
class Seen:
    """What one call returned: ids, every text it showed, every count it reported."""

    chunk_ids: set[str] = field(default_factory=set)
    document_ids: set[str] = field(default_factory=set)
    text: str = ""
    counts: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Probe:
    run: Callable[[Any, Caller, dict[str, Any]], Seen]
    options: frozenset[str] = frozenset({"document_ids", "filter", "session"})

    def __call__(self, c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
        assert set(opts) <= self.options
        return self.run(c, who, opts)


def _rag_seen(result: dict[str, Any], seen: Seen) -> None:
    seen.chunk_ids |= {c["chunk_id"] for c in result["contexts"]} | set(TAG.findall(result["response"]))
    seen.document_ids |= {c["document_id"] for c in result["contexts"]}
    seen.counts.append(len(result["contexts"]))


def _rag_body(opts: dict[str, Any]) -> dict[str, Any]:
    inputs: dict[str, Any] = {"query": QUERY}
    if "document_ids" in opts:
        inputs["document_ids"] = opts["document_ids"]
    if "filter" in opts:
        inputs["filter"] = opts["filter"]
    body: dict[str, Any] = {"inputs": inputs}
    if opts.get("session"):
        body["session_id"] = opts["session"]
    return body


def probe_search(c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
    flt = opts.get("filter")
    if "document_ids" in opts:
        ids = ", ".join(f'"{i}"' for i in opts["document_ids"]) or '""'
        flt = f"document_id in [{ids}]" + (f" and ({flt})" if flt else "")
    resp = c.post("/v1/search", json={"query": QUERY, "filter": flt, "metadata": {"limit": 50}}, headers=who.headers)
    assert resp.status_code == 200, resp.get_json()
    results = resp.get_json()["search_results"]
    return Seen(
        {r["result_metadata"]["chunk_id"] for r in results},
        {r["result_metadata"]["document_id"] for r in results},
        resp.get_data(as_text=True),
        [len(results)],
    )


def probe_rag_sync(c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
    resp = c.post("/v1/tools/rag_search/execute", json=_rag_body(opts), headers=who.headers)
    assert resp.status_code == 200, resp.get_json()
    seen = Seen(text=resp.get_data(as_text=True))
    _rag_seen(resp.get_json(), seen)
    return seen


def _stream_seen(events: list[tuple[str, Any]], seen: Seen) -> None:
    seen.text += json.dumps(events, ensure_ascii=False)
    for name, data in events:
        if name == "tool_update" and "data" in data:
            seen.counts.extend(data["data"].values())
        if name == "tool_partial_update":
            seen.chunk_ids |= set(TAG.findall(data["content"]))
        if name == "tool_end":
            _rag_seen(data, seen)


def probe_rag_stream(c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
    resp = c.post(
        "/v1/tools/rag_search/execute", json=_rag_body(opts), headers={**who.headers, "Accept": "text/event-stream"}
    )
    seen = Seen()
    _stream_seen(events_of(resp), seen)
    return seen


def probe_rag_async(c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
    resp = c.post("/v1/tools/rag_search/execute?mode=async", json=_rag_body(opts), headers=who.headers)
    assert resp.status_code == 202, resp.get_json()
    accepted = resp.get_json()
    details = wait_status(c, accepted["execution_id"], who.headers)
    assert details["status"] == "completed", details
    seen = Seen(text=json.dumps(details, ensure_ascii=False))
    _rag_seen(details["outputs"], seen)
    _stream_seen(events_of(c.get(accepted["stream_url"], headers=who.headers)), seen)
    for other in CALLERS:  # the execution itself is private to its caller
        if other.name != who.name:
            for url in (accepted["details_url"], accepted["stream_url"]):
                assert c.get(url, headers=other.headers).status_code == 404, (other.name, url)
    return seen


def probe_message(c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
    resp = c.post("/v2/assistants/default/message", json={"input": {"text": QUERY}}, headers=who.headers)
    assert resp.status_code == 200, resp.get_json()
    seen = Seen(text=resp.get_data(as_text=True))
    for item in resp.get_json()["output"]["generic"]:
        for r in item.get("search_results", []):
            seen.chunk_ids.add(r["result_metadata"]["chunk_id"])
            seen.document_ids.add(r["result_metadata"]["document_id"])
        seen.counts.append(len(item.get("search_results", [])))
    return seen


def probe_agentic(c: Any, who: Caller, opts: dict[str, Any]) -> Seen:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"text": QUERY}}],
        "retrievers": [
            {
                "configuration": {
                    "knowledgeBase": {"knowledgeBaseId": "default", "retrievalOverrides": {"maxNumberOfResults": 50}}
                }
            }
        ],
        "agenticRetrieveConfiguration": {"maxAgentIteration": 2},
    }
    resp = c.post("/agenticRetrieveStream", json=body, headers=who.headers)
    assert resp.status_code == 200, resp.get_data(as_text=True)[:300]
    events = events_of(resp)
    seen = Seen(text=json.dumps(events, ensure_ascii=False))
    for name, data in events:
        if name == "result":
            for r in data["results"]:
                seen.document_ids.add(r["metadata"]["document_id"])
                if "chunk_id" in r["metadata"]:
                    seen.chunk_ids.add(r["metadata"]["chunk_id"])
            seen.counts.append(len(data["results"]))
    return seen


PROBES: dict[str, Probe] = {
    "search": Probe(probe_search, frozenset({"document_ids", "filter"})),  # document_ids as a filter
    "rag_search_sync": Probe(probe_rag_sync),
    "rag_search_stream": Probe(probe_rag_stream),
    "rag_search_async": Probe(probe_rag_async),
    "message": Probe(probe_message, frozenset()),  # stateless /message: the query only
    "agentic": Probe(probe_agentic, frozenset()),  # /agenticRetrieveStream: the question only
}


def probes_with(option: str) -> list[str]:
    return [name for name, p in PROBES.items() if option in p.options]


@dataclass
class World:
    client: Any
    doc_ids: dict[str, str]

    def chunk(self, name: str) -> str:
        return chunk_id(self.doc_ids[name])

    def visible(self, who: Caller, session: str | None = None) -> list[Doc]:
        return [d for d in DOCS if expected(d, who, session)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: Any) -> Iterator[World]:

    tmp: Path = tmp_path_factory.mktemp("scope")
    tools = {"rag_search": {"retrieve_limit": 50}}
    s = make_settings(tmp, auth={"keys": KEYS + [DAVE]}, tools=tools)
    svc = make_services(s)
    fake_runtime(svc, thresholds=(0.1, 0.1))
    app = make_app(tmp, components(threshold=0.1), keys=KEYS + [DAVE], tools=tools, services=svc)
    with app.test_client() as c:
        ids: dict[str, str] = {}
        for d in DOCS:
            who = BY_NAME[d.creator]
            extra: dict[str, Any] = {"workspaces": list(d.workspaces)} if d.workspaces else {}
            if d.public:
                extra["visibility"] = "public"
            ids[d.name] = ingest(c, d.name.replace("_", " "), f"{QUERY} {d.marker} for {d.name}.", who.headers, **extra)
            if d.session:
                resp = c.post(
                    f"/v1/sessions/{d.session}/documents", json={"document_id": ids[d.name]}, headers=who.headers
                )
                assert resp.status_code == 200, resp.get_json()
        yield World(c, ids)


def _check(world: World, seen: Seen, allowed: list[Doc], *, exact: bool) -> None:
    allowed_names = {d.name for d in allowed}
    for d in DOCS:
        if d.name not in allowed_names:
            assert d.marker not in seen.text, f"{d.name} leaked"
            assert world.chunk(d.name) not in seen.chunk_ids and world.doc_ids[d.name] not in seen.document_ids
    assert all(n <= len(allowed) for n in seen.counts), (seen.counts, len(allowed))
    if exact:
        assert seen.document_ids <= {world.doc_ids[d.name] for d in allowed}
        assert max(seen.counts, default=0) == len(allowed) or len(allowed) > 5


def test_the_oracle_matches_the_documented_model() -> None:
    names = lambda who, s=None: {d.name for d in DOCS if expected(d, BY_NAME[who], s)}  # noqa: E731
    assert names("alice") == {"PUB", "A_PRIV", "A_SALES", "A_SESS"}
    assert names("dave") == {"PUB", "A_SALES"}
    assert names("bob") == {"PUB", "B_PRIV", "B_ENG"}
    assert names("carol") == {"PUB"} and names("svc") == {"PUB", "SVC"}
    # rule 3: an end user sees its own documents and the public global ones, never another user's private ones
    assert names("t1") == {"PUB", "T1", "T1_SESS"}
    assert "T1" not in names("t2") and "T1_SESS" not in names("t2")


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("who", [c.name for c in CALLERS])
def test_plain_query_sees_exactly_its_scope(world: World, probe: str, who: str) -> None:
    caller = BY_NAME[who]
    allowed = world.visible(caller)
    seen = PROBES[probe](world.client, caller, {})
    _check(world, seen, allowed, exact=True)
    if probe in ("search", "rag_search_stream"):
        # a complete listing / the retrieved count covers the whole scope, not only its top five
        assert max(seen.counts) == len(allowed)


@pytest.mark.parametrize("probe", probes_with("document_ids"))
@pytest.mark.parametrize("who", ["alice", "dave", "bob", "t1", "t2", "svc"])
def test_document_ids_narrow_and_never_widen(world: World, probe: str, who: str) -> None:
    caller = BY_NAME[who]
    allowed = world.visible(caller)
    hidden = [world.doc_ids[d.name] for d in DOCS if d not in allowed]
    everything = list(world.doc_ids.values())
    _check(world, PROBES[probe](world.client, caller, {"document_ids": everything}), allowed, exact=True)
    only_hidden = PROBES[probe](world.client, caller, {"document_ids": hidden})
    _check(world, only_hidden, [], exact=False)
    assert not only_hidden.chunk_ids and all(n == 0 for n in only_hidden.counts)


@pytest.mark.parametrize("probe", probes_with("filter"))
@pytest.mark.parametrize("who", ["alice", "dave", "bob", "t1", "t2", "svc"])
def test_filters_never_widen(world: World, probe: str, who: str) -> None:
    caller = BY_NAME[who]
    allowed = world.visible(caller)
    for d in DOCS:
        if d not in allowed:
            seen = PROBES[probe](world.client, caller, {"filter": f'title == "{d.name.replace("_", " ")}"'})
            _check(world, seen, [], exact=False)
            assert not seen.chunk_ids
    wide = PROBES[probe](world.client, caller, {"filter": 'title != "nothing" or position >= 0'})
    _check(world, wide, allowed, exact=True)


@pytest.mark.parametrize("probe", probes_with("session"))
def test_sessions_add_their_documents_only_for_their_owner(world: World, probe: str) -> None:
    alice, dave = BY_NAME["alice"], BY_NAME["dave"]
    seen = PROBES[probe](world.client, alice, {"session": SESSION_ALICE})
    _check(world, seen, world.visible(alice, SESSION_ALICE), exact=True)
    t1 = BY_NAME["t1"]
    _check(world, PROBES[probe](world.client, t1, {"session": SESSION_T1}), world.visible(t1, SESSION_T1), exact=True)
    # dave shares w-sales with A_SESS but is not in alice's session, and may not enter it
    assert "A_SESS" not in {d.name for d in world.visible(dave)}
    for who, session in (
        (dave, SESSION_ALICE),
        (BY_NAME["bob"], SESSION_ALICE),
        (BY_NAME["t2"], SESSION_T1),
        (BY_NAME["admin"], SESSION_T1),
    ):
        resp = world.client.post(
            "/v1/tools/rag_search/execute",
            json={"inputs": {"query": QUERY}, "session_id": session},
            headers=who.headers,
        )
        assert resp.status_code == 404, (who.name, resp.get_json())


def test_scope_fields_in_filters_are_rejected(world: World) -> None:
    for flt in ('tenant == "t2"', 'owner == "bob"', 'session_id == "x"', 'workspaces in ["w-eng"]'):
        for path, body in (
            ("/v1/search", {"query": QUERY, "filter": flt}),
            ("/v1/tools/rag_search/execute", {"inputs": {"query": QUERY, "filter": flt}}),
        ):
            resp = world.client.post(path, json=body, headers=BY_NAME["alice"].headers)
            assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "invalid_filter", (path, flt)


@pytest.mark.parametrize("who", [c.name for c in CALLERS])
def test_guessed_chunk_and_document_ids(world: World, who: str) -> None:
    caller = BY_NAME[who]
    allowed = {d.name for d in world.visible(caller)}
    for d in DOCS:
        paths = (
            f"/v1/chunks/{world.chunk(d.name)}",
            f"/v1/chunks/{world.chunk(d.name)}/document",
            f"/v1/documents/{world.doc_ids[d.name]}/content",
        )
        for path in paths:
            resp = world.client.get(path, headers=caller.headers)
            assert resp.status_code == (200 if d.name in allowed else 404), (who, d.name, path)
            if resp.status_code == 404:
                assert d.marker not in resp.get_data(as_text=True)


def test_session_chunks_through_the_session(world: World) -> None:
    c, dave, alice = world.client, BY_NAME["dave"], BY_NAME["alice"]
    path = f"/v1/chunks/{world.chunk('A_SESS')}"
    assert c.get(f"{path}?session_id={SESSION_ALICE}", headers=alice.headers).status_code == 200
    assert c.get(f"{path}?session_id={SESSION_ALICE}", headers=dave.headers).status_code == 404
    resp = c.post(
        f"/v1/sessions/{SESSION_ALICE}/documents", json={"document_id": world.doc_ids["A_SALES"]}, headers=dave.headers
    )
    assert resp.status_code == 404  # dave cannot use alice's session
    own = f"sess-dave-{uuid.uuid4()}"
    resp = c.post(f"/v1/sessions/{own}/documents", json={"document_id": world.doc_ids["A_SALES"]}, headers=dave.headers)
    assert resp.status_code == 403  # nor move alice's document into his own
    resp = c.post(f"/v1/sessions/{own}/documents", json={"document_id": world.doc_ids["B_PRIV"]}, headers=dave.headers)
    assert resp.status_code == 404 and "markerbpriv" not in resp.get_data(as_text=True)
