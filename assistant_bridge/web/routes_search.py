"""``POST /v1/search``: the custom search server an assistant calls (spec §A.1).

Request ``{query, filter?, metadata?}``; ``metadata`` may carry ``collection``, ``limit`` (alias ``top_k``,
``size``), ``mode`` (lexical | dense | hybrid) and ``passage_length`` (characters; alias ``passage_chars``);
other keys are ignored. The response never exceeds ``search.max_response_bytes`` (100 KB by default); when
results are dropped or shortened to fit, ``X-Results-Trimmed`` says how many.

Each search is logged (``search.done``, with the query only when ``server.log_user_text`` is on) and timed
in the metrics (route ``search``: stage ``search``, embedding included, and ``embedding`` alone when the
mode embeds the query). A failing backend is counted where its error becomes the HTTP answer
(:mod:`assistant_bridge.web.errors`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from flask import Blueprint, jsonify

from assistant_bridge import metrics
from assistant_bridge.core.custom_search import fit_within, hit_to_result
from assistant_bridge.core.filters import parse_filter
from assistant_bridge.errors import ValidationFailed
from assistant_bridge.logs import user_text
from assistant_bridge.services import SearchTimings
from assistant_bridge.web.app import json_body, scope, services, settings

log = logging.getLogger(__name__)
bp = Blueprint("search", __name__)


def _int_option(meta: dict[str, Any], names: tuple[str, ...], default: int, lo: int, hi: int) -> int:
    for name in names:
        if name in meta:
            value = meta[name]
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValidationFailed(
                    f"$.metadata.{name}: must be an integer from {lo} to {hi}", path=f"$.metadata.{name}"
                )
            return value
    return default


def search_options(meta: dict[str, Any]) -> dict[str, Any]:
    s = settings()
    collection = meta.get("collection") or meta.get("collection_name") or meta.get("index")
    if collection is not None and collection != s.backend.collection:
        raise ValidationFailed(
            f"$.metadata.collection: unknown collection {str(collection)[:64]!r}; available: {s.backend.collection}",
            path="$.metadata.collection",
        )
    mode = meta.get("mode", s.backend.default_mode)
    if mode not in ("lexical", "dense", "hybrid"):
        raise ValidationFailed("$.metadata.mode: must be lexical, dense or hybrid", path="$.metadata.mode")
    return {
        "mode": mode,
        "limit": _int_option(meta, ("limit", "top_k", "size"), s.search.default_limit, 1, s.search.max_limit),
        "passage_chars": _int_option(
            meta, ("passage_length", "passage_chars"), s.search.default_passage_chars, 0, 100_000
        ),
    }


@bp.post("/v1/search")
def search() -> Any:
    s = settings()
    body = json_body("search_request", max_bytes=s.search.max_response_bytes)
    opts = search_options(body.get("metadata") or {})
    expr = parse_filter(body.get("filter"))
    svc, timings = services(), SearchTimings()
    started = time.perf_counter()
    hits = svc.search(body["query"], scope(), mode=opts["mode"], limit=opts["limit"], filter=expr, timings=timings)
    ms = (time.perf_counter() - started) * 1000
    stages = {"search": ms, "embedding": timings.embed_ms} if opts["mode"] != "lexical" else {"search": ms}
    metrics.observe_stages("search", stages)
    results = [hit_to_result(h, body["query"], opts["passage_chars"]) for h in hits]
    out, trimmed = fit_within(results, s.search.max_response_bytes)
    log.info(
        "search.done",
        extra={
            "mode": opts["mode"],
            "limit": opts["limit"],
            "results": len(hits),
            "trimmed": trimmed,
            "embed_ms": round(timings.embed_ms, 1),
            "ms": round(ms, 1),
            **user_text(s.server.log_user_text, query=body["query"]),
        },
    )
    resp = jsonify(out)
    if trimmed:
        resp.headers["X-Results-Trimmed"] = str(trimmed)
    return resp
