"""Conversation-aware search on several domains: retrieval with the last turn alone, with the product's rewrite
and with a human rewrite, and answerability per turn, each domain reported apart.

    python bench/conversations.py --data ../shared/data [--domains fiqa,wiki,gitdocs,tools,tools2,tools3,realdocs --docs DIR]
                                  [--mode dense|lexical|hybrid]
                                  [--rewriter embedded|llm] [--no-answerability] [--work-dir DIR] [--json out.json]

Domains (the conversations of the last six were written for this benchmark, with human-style rewrites):

* ``fiqa``: MTRAG's FiQA domain (``mtrag_fiqa/``: 27 conversations, 180 retrieval tasks with qrels, a
  14,085-passage corpus, answerability labels per turn);
* ``wiki``: ``bench/data/conversations_wiki.json``, 10 conversations over the CLAPNQ mini corpus (11,282
  Wikipedia passages);
* ``gitdocs``: ``bench/data/conversations_gitdocs.json``, 14 conversations over git's manual pages (the
  ``git-man`` Debian package, rendered with ``man`` and ingested through the product's own chunking);
* ``tools``: ``bench/data/conversations_tools.json``, 8 conversations over the manual pages of 17 common
  command-line tools (:data:`TOOL_PAGES`, from their Debian packages), written as a held-out domain: it was
  not run while the rewriter was tuned on the three others;
* ``tools2``: ``bench/data/conversations_tools2.json``, 8 more conversations over the same pages on other tasks
  (sed, make, journalctl, scp, zip, ssh tunnels, xz, less), written later as a second held-out set, before the
  rewriter changes measured on it;
* ``tools3``: ``bench/data/conversations_tools3.json``, 8 more on yet other tasks, written after the rewriter
  changes made on ``tools2`` and before they were run on it: the held-out check of those changes;
* ``realdocs``: ``bench/data/conversations_realdocs.json``, 10 conversations (English, French, Japanese) over
  the documents ``bench/real_docs.py`` prepares, given with ``--docs`` (not in the default ``--domains``),
  written as a held-out domain too.

Every conversation is driven turn by turn through :class:`~assistant_bridge.conversation.turn.Turn`, as a
``/message`` session with ``contextual_mode = "entire_conversation"`` runs it: the memory holds the product's
own queries and answers. A turn's *rewrite* is the query that turn searched (``none`` for a social turn, which
is not searched). Retrieval is then measured with ``Services.search`` for the three forms of every turn that
has gold passages: FiQA's Recall@5 from its qrels; on the written domains, success@5 (a result in the top 5
is relevant when it comes from the gold page or article and holds the answer; see each file's ``about``).

Reported per domain: Recall@5 of ``lastturn`` / ``rewrite`` / ``human``, where ``rewrite`` is searched as the
turn searches it (a dense search blends the rewrite with the message as asked, ``query_rewrite.as_asked_weight``)
and ``rewrite_alone`` is the rewritten text searched alone, with its ``rewrite_alone_lost``; ``blend_added_ms``
is what the blend adds to a search (the fastest of three searches of each form, the embedder's query cache
emptied before each); ``gain_recovered`` = (rewrite - lastturn) / (human - lastturn); ``recall_lost`` = the
recall the rewrite loses on the turns it hurts, as a share of the last turn's total recall, and ``turns_hurt``;
``as_the_turn_reads``: the same recalls of the results a ``/message`` turn answers from (the built-in source's
steps after the search: a page the message names, its opening, the option entry the rewrite asks about), each form
of the question alike; the p50/p95 time the rewrite adds; and, per turn, answerability: the share of ANSWERABLE/PARTIAL turns answered (1 - false "I don't know"), of UNANSWERABLE
turns declined, their mean (balanced accuracy), the share of CONVERSATIONAL turns answered as social
turns (not searched), and, on the written domains, ``answered_from_gold``: of the answerable turns answered, the
share whose cited sentences hold the answer its gold passage holds (the gold ``match``): answered from the right
place, not only answered.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.conversation.assistants import SearchConfig  # noqa: E402
from assistant_bridge.conversation.memory import MemoryTurn  # noqa: E402
from assistant_bridge.conversation.sources import BuiltinSource  # noqa: E402
from assistant_bridge.domain import Ownership, Principal, Scope  # noqa: E402
from assistant_bridge.errors import NoContent  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from bench._common import (  # noqa: E402
    bulk_load,
    ndcg_recall,
    passages_to_chunks,
    percentiles,
    read_jsonl,
    render_man,
    settle,
)

DATA = Path(__file__).resolve().parent / "data"
DOMAINS = ("fiqa", "wiki", "gitdocs", "tools", "tools2", "tools3", "realdocs")
DOCUMENT_DOMAINS = ("gitdocs", "tools", "tools2", "tools3", "realdocs")  # ingested through the product's own chunking
ANSWER_LABELS = ("ANSWERABLE", "PARTIAL")
TIMING_REPEATS = 3  # searches of a blended turn's two forms timed, the fastest of each kept (see retrieval)
Relevance = Callable[[list[Any]], float]


# --- domains ---------------------------------------------------------------------------------------------------
def _fiqa(data: Path) -> dict[str, Any]:
    from bench.mtrag import load

    d = load(data)
    convs = []
    for cid, turns in d["conversations"].items():
        out = []
        for n, t in enumerate(turns, start=1):
            tid = f"{cid}<::>{n}"
            rel = d["qrels"].get(tid)
            out.append(
                {
                    "q": t["question"],
                    "rewrite": d["forms"]["rewrite"].get(tid, t["question"]),
                    "label": t["label"],
                    "relevant": _qrels_relevance(rel) if rel else None,
                }
            )
        convs.append({"id": cid, "turns": out})
    return {"conversations": convs, "load": lambda svc: _load_passages(svc, read_jsonl(d["corpus"]))}


def _qrels_relevance(relevant: set[str]) -> Relevance:
    def score(hits: list[Any]) -> float:
        ranked = [h.chunk.url.split(":", 1)[1] for h in hits if h.chunk.url]
        return ndcg_recall(ranked, relevant, 5)[1]

    return score


def _gold_relevance(gold: list[dict[str, str]], key: Callable[[Any], str]) -> Relevance:
    rules = [(g["doc"], re.compile(g["match"], re.IGNORECASE)) for g in gold]

    def score(hits: list[Any]) -> float:
        return float(any(key(h.chunk) == doc and rx.search(h.chunk.text) for h in hits[:5] for doc, rx in rules))

    return score


def _written(name: str, key: Callable[[Any], str], loader: Callable[[Services], None]) -> dict[str, Any]:
    spec = json.loads((DATA / f"conversations_{name}.json").read_text(encoding="utf-8"))
    convs = [
        {
            "id": c["id"],
            "turns": [{**t, "relevant": _gold_relevance(t["gold"], key) if t["gold"] else None} for t in c["turns"]],
        }
        for c in spec["conversations"]
    ]
    return {"conversations": convs, "load": loader}


def _load_passages(svc: Services, rows: Any) -> None:
    chunks = passages_to_chunks(list(rows))
    if svc.backend.count() < len(chunks):
        print(f"  loading {len(chunks)} passages", flush=True)
        bulk_load(svc, chunks)


TOOL_PAGES = (
    "tar",
    "ssh",
    "ssh-keygen",
    "scp",
    "grep",
    "find",
    "gzip",
    "xz",
    "zip",
    "unzip",
    "curl",
    "apt",
    "systemctl",
    "journalctl",
    "sed",
    "less",
    "make",
)


def _render(src: str, dest: Path) -> Path | None:
    """One manual page rendered to ``dest`` once (``src``: a page name or a file); ``None`` when missing."""
    if not dest.exists():
        text = render_man(src)
        if not text.strip():
            return None
        dest.write_text(text, encoding="utf-8")
    return dest


def render_pages(name: str, out: Path) -> list[Path]:
    """The manual pages of a domain rendered to text: ``gitdocs`` is every page of the ``git-man`` package
    (sections 1, 5 and 7), ``tools``, ``tools2`` and ``tools3`` the pages of :data:`TOOL_PAGES`."""
    out.mkdir(parents=True, exist_ok=True)
    if name == "gitdocs":
        sources = [str(p) for sec in ("1", "5", "7") for p in sorted(Path(f"/usr/share/man/man{sec}").glob("git*.gz"))]
    else:
        sources = list(TOOL_PAGES)
    pages = [_render(src, out / f"man-{Path(src).name.split('.')[0]}.txt") for src in sources]
    found = [p for p in pages if p is not None]
    if not found:
        raise SystemExit("no manual pages here: apt-get install man-db git-man (and the tools' packages)")
    return found


def _load_pages(name: str, work: Path, docs: Path | None = None) -> Callable[[Services], None]:
    """Ingest a domain's documents once: the rendered manual pages, or every file of ``docs``."""

    def load(svc: Services) -> None:
        if svc.backend.count():
            return
        if docs is not None:
            pages = sorted(p for p in docs.iterdir() if p.is_file())
            if not pages:
                raise SystemExit(f"no documents in {docs}: bench/real_docs.py --work-dir W prepares them in W/docs")
        else:
            pages = render_pages(name, work / f"{name}-pages")
        print(f"  ingesting {len(pages)} documents", flush=True)
        t0 = time.perf_counter()
        for p in pages:
            try:
                svc.ingestor.ingest_bytes(p.name, p.read_bytes(), Ownership())
            except NoContent:
                pass
        settle(svc)
        print(f"  {svc.backend.count()} chunks in {time.perf_counter() - t0:.0f} s", flush=True)

    return load


def domain(name: str, data: Path, work: Path, docs: Path | None = None) -> dict[str, Any]:
    if name == "fiqa":
        return _fiqa(data)
    if name == "wiki":
        corpus = data / "clapnq" / "derived" / "clapnq_dev_minicorpus.jsonl"
        return _written("wiki", lambda c: c.title, lambda svc: _load_passages(svc, read_jsonl(corpus)))
    if name in ("gitdocs", "tools", "tools2", "tools3"):  # tools2, tools3: later conversations, same pages
        return _written(name, lambda c: Path(c.filename).stem, _load_pages(name, work))
    if name == "realdocs":
        if docs is None:
            raise SystemExit("the realdocs domain needs --docs: the documents directory bench/real_docs.py prepares")
        return _written(name, lambda c: Path(c.filename).stem, _load_pages(name, work, docs))
    raise SystemExit(f"unknown domain {name}")


# --- the run ---------------------------------------------------------------------------------------------------
def make_services(name: str, mode: str, work: Path, rewriter: str) -> Services:
    embedder = "hashing" if mode == "lexical" else "e5-small"
    rewrite: dict[str, Any] = {"method": "embedded"}
    if rewriter == "llm":
        rewrite = {
            "method": "llm",
            "base_url": os.environ.get("LLM_BASE_URL", ""),
            "model": os.environ.get("LLM_MODEL", ""),
            "timeout_seconds": 30,
        }
        if os.environ.get("LLM_API_KEY"):
            rewrite["api_key"] = os.environ["LLM_API_KEY"]
    settings = load_settings(
        env={},
        overrides={
            "data_dir": str(work / f"{name}-{embedder}"),
            "backend": {"kind": "milvus-lite", "collection": f"conv_{name}", "default_mode": mode},
            "embedder": {"kind": embedder},
            "assistants": {
                "default": {
                    "conversational_search": {"contextual_mode": "entire_conversation", "query_rewrite": rewrite}
                }
            },
        },
    )
    if name in DOCUMENT_DOMAINS:  # ingested as documents: the data directory's own store
        return Services.from_settings(settings)
    from assistant_bridge.store import SQLiteStore

    # passages are loaded straight into the backend; their vectors are cached by content across runs
    return Services.from_settings(settings, store=SQLiteStore(work / "embedding-cache.sqlite3"))


def drive(svc: Services, conversations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every conversation turn by turn as a session would run it; one row per user turn."""
    from assistant_bridge.conversation.runtime import runtime_for
    from assistant_bridge.conversation.turn import Turn, TurnRequest

    runtime = runtime_for(svc)
    assistant = runtime.assistants.get("default", None)
    scope = Scope(Principal("bench", admin=True))
    rows = []
    for conv in conversations:
        memory: list[MemoryTurn] = []
        for turn in conv["turns"]:
            t0 = time.perf_counter()
            result = Turn(runtime, assistant, TurnRequest(text=turn["q"], history=tuple(memory)), scope).run()
            ms = (time.perf_counter() - t0) * 1000
            trace = result.trace
            rw = trace.rewrite if trace is not None else None
            item = result.generic[0] if result.generic else {}
            rows.append(
                {
                    **turn,
                    "conversation": conv["id"],
                    "ours": rw.query if rw is not None else turn["q"],
                    "blend": rw.blend if rw is not None else None,
                    "topic": rw.topic if rw is not None else None,
                    "rewrite_ms": rw.ms if rw is not None else 0.0,
                    "outcome": result.outcome,
                    "from_gold": _from_gold(turn.get("gold"), item) if result.outcome == "answer" else None,
                    "answer": str(item.get("text", ""))[:300],
                    "turn_ms": ms,
                }
            )
            if result.memory is not None:
                memory.append(result.memory)
    return rows


def _from_gold(gold: list[dict[str, str]] | None, item: dict[str, Any]) -> bool | None:
    """An answer's cited sentences hold a gold passage's answer (its ``match``, on a written domain): the turn was
    answered from the right place, not only answered. ``None`` without gold (FiQA's qrels name passages only)."""
    if not gold:
        return None
    cited = " ".join(str(c.get("text", "")) for c in item.get("citations") or ()) or str(item.get("text", ""))
    return any(re.search(g["match"], cited, re.IGNORECASE) for g in gold)


def retrieval(svc: Services, mode: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    scope = Scope(Principal("bench", admin=True))
    scored = [r for r in rows if r["relevant"] is not None]
    out: dict[str, Any] = {"turns": len(scored)}
    conditions = (
        ("lastturn", "q", False),
        ("rewrite", "ours", True),  # as the turn searched: the rewrite blended with the message as asked
        ("rewrite_alone", "ours", False),
        ("human", "rewrite", False),
    )
    cache = getattr(svc.embedder, "_queries", None)  # the embedder's recent query vectors, emptied per search
    per: dict[str, list[float]] = {cond: [] for cond, _, _ in conditions}
    # as the turn reads its results: the built-in source's own steps after the search (a page the message names,
    # its opening, the option entry it asks about), for each form of the question alike
    source = BuiltinSource(svc, SearchConfig(metadata={"mode": mode, "limit": 10}))
    read: dict[str, list[float]] = {cond: [] for cond, _, _ in conditions}
    for r in scored:  # interleaved: each turn searched every way before the next turn
        for cond, key, blend in conditions:
            # the blend's cost is the difference of the two forms' fastest of TIMING_REPEATS searches: a single
            # search on a shared machine is slowed now and then by other work, by more than the blend costs
            repeats = TIMING_REPEATS if r["blend"] is not None and cond in ("rewrite", "rewrite_alone") else 1
            times = []
            for _ in range(repeats):
                if cache is not None:
                    cache.clear()
                t0 = time.perf_counter()
                hits = svc.search(r[key], scope, mode=mode, limit=10, blend=r["blend"] if blend else None)
                times.append((time.perf_counter() - t0) * 1000)
            r[f"ms_{cond}"] = min(times)
            r[f"r5_{cond}"] = r["relevant"](hits)
            per[cond].append(r[f"r5_{cond}"])
            topic = r["topic"] if key == "ours" else None  # the rewrite's topic page, as the turn reads it
            r[f"read5_{cond}"] = r["relevant"](source.hits(r[key], scope, r["blend"] if blend else None, topic))
            read[cond].append(r[f"read5_{cond}"])
    out.update(_recalls(per))
    blended = [r for r in scored if r["blend"] is not None]
    extra = percentiles([r["ms_rewrite"] - r["ms_rewrite_alone"] for r in blended])
    out["blend_added_ms"] = {k: round(extra[k], 2) for k in ("p50", "p95", "n")} if blended else None
    out["turns_hurt"] = sum(b < a for a, b in zip(per["lastturn"], per["rewrite"], strict=True))
    out["turns_helped"] = sum(b > a for a, b in zip(per["lastturn"], per["rewrite"], strict=True))
    out["rewritten_turns"] = sum(r["ours"] != r["q"] for r in scored)
    out["as_the_turn_reads"] = _recalls(read)
    return out


def _recalls(per: dict[str, list[float]]) -> dict[str, Any]:
    """Mean recall of each form of the question; the share of the last turn's recall each form loses where it
    does worse (for scale: the rewrite alone, a person's); the share of the human rewrite's gain recovered."""
    out: dict[str, Any] = {cond: round(sum(v) / max(1, len(v)), 4) for cond, v in per.items()}
    for cond, name in (("rewrite", "recall_lost"), ("rewrite_alone", "rewrite_alone_lost"), ("human", "human_lost")):
        lost_by = sum(max(0.0, a - b) for a, b in zip(per["lastturn"], per[cond], strict=True))
        out[name] = round(lost_by / max(1e-9, sum(per["lastturn"])), 4)
    gain = out["human"] - out["lastturn"]
    out["gain_recovered"] = round((out["rewrite"] - out["lastturn"]) / gain, 3) if gain > 0 else None
    return out


def answerability(rows: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if r["label"] in ANSWER_LABELS]
    unanswerable = [r for r in rows if r["label"] == "UNANSWERABLE"]
    social = [r for r in rows if r["label"] == "CONVERSATIONAL"]
    out: dict[str, Any] = {"answerable": len(answerable), "unanswerable": len(unanswerable), "social": len(social)}
    answered = sum(r["outcome"] == "answer" for r in answerable) / max(1, len(answerable))
    declined = sum(r["outcome"] != "answer" for r in unanswerable) / max(1, len(unanswerable))
    out["false_idk"] = round(1 - answered, 4)
    out["unanswerable_declined"] = round(declined, 4) if unanswerable else None
    out["balanced_accuracy"] = round((answered + declined) / 2, 4) if unanswerable else None
    out["social_answered_as_social"] = (
        round(sum(r["outcome"] == "social" for r in social) / len(social), 4) if social else None
    )
    out["searched_social_turns"] = sum(r["outcome"] != "social" for r in social)
    graded = [r["from_gold"] for r in answerable if r.get("from_gold") is not None]
    # of the answerable turns answered, the share whose cited sentences hold the gold passage's answer
    out["answered_from_gold"] = round(sum(graded) / len(graded), 4) if graded else None
    out["answered_graded"] = len(graded)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--domains", default=",".join(d for d in DOMAINS if d != "realdocs"))
    ap.add_argument(
        "--docs", type=Path, help="realdocs: the documents bench/real_docs.py --work-dir W prepared (W/docs)"
    )
    ap.add_argument("--mode", choices=("lexical", "dense", "hybrid"), default="dense")
    ap.add_argument("--rewriter", choices=("embedded", "llm"), default="embedded")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-bench/conversations"))
    ap.add_argument("--show", action="store_true", help="print every turn with its rewrite")
    ap.add_argument("--turns", action="store_true", help="keep every turn in the --json report")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    report: dict[str, Any] = {"mode": args.mode, "rewriter": args.rewriter}
    for name in args.domains.split(","):
        print(f"{name}:", flush=True)
        spec = domain(name, args.data, args.work_dir, args.docs)
        svc = make_services(name, args.mode, args.work_dir, args.rewriter)
        svc.warm_up()
        spec["load"](svc)
        rows = drive(svc, spec["conversations"])
        times = [r["rewrite_ms"] for r in rows]
        part = {
            "conversations": len(spec["conversations"]),
            "user_turns": len(rows),
            "chunks": svc.backend.count(),
            "retrieval@5": retrieval(svc, args.mode, rows),
            "answerability": answerability(rows),
            "rewrite_ms": {k: round(v, 3) for k, v in percentiles(times).items() if k in ("p50", "p95", "n")},
            "turn_ms_p50": round(percentiles([r["turn_ms"] for r in rows])["p50"], 1),
        }
        report[name] = part
        if args.turns:
            part["turns"] = [{k: v for k, v in r.items() if k not in ("relevant", "gold")} for r in rows]
        print(json.dumps({k: v for k, v in part.items() if k != "turns"}, indent=1), flush=True)
        if args.show:
            for r in rows:
                flag = "" if r["ours"] == r["q"] else f"  ->  {r['ours']}"
                r5 = "/".join(f"{r.get('r5_' + c, -1):.1f}" for c in ("lastturn", "rewrite", "human"))
                print(f"  [{r['label'][:5]} {r['outcome']:>7} {r5}] {r['q']}{flag}")
        svc.backend.close()
    report["load_average"] = round(os.getloadavg()[0], 2)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
