"""The relay's wire logic, as pure functions over JSON values (no I/O): reading search actions out of a
``/message`` response, merging the results of several searches, building the ``search_results`` message
under the request limit, and naming the outcome of a final response.

Invariants:

* :func:`search_actions` returns every ``search`` action of ``output.actions`` in order (not only the
  first); other action types are ignored and logged by type name only; a ``search`` action without a
  non-blank string ``query`` raises :class:`SearchActionInvalid` (the assistant would wait for results the
  relay cannot produce, so the turn fails loudly instead of hanging on a guess).
* :func:`merge_results` interleaves ranked lists by rank (1st of each search, then 2nd of each...) and keeps
  the first occurrence of a duplicate (see :func:`dedupe_key`).
* :func:`results_message` never returns a body larger than ``max_bytes`` once serialised compactly
  (:func:`body_bytes`); it drops results from the end first, then shortens the last one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from assistant_bridge.core.custom_search import fit_within
from assistant_bridge.relay.errors import MalformedAssistantResponse, RelayRequestTooLarge, SearchActionInvalid

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 2048
ANSWER_TYPES = ("conversational_search", "conversation_search")  # the Java SDK spells it without "al"


def body_bytes(body: Any) -> bytes:
    """The compact UTF-8 JSON the relay sends (the same serialisation :func:`fit_within` measures)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def check_response(body: Any) -> dict[str, Any]:
    """A ``/message`` response's shape, as far as the relay relies on it.

    :raises MalformedAssistantResponse: naming what is wrong (never quoting the body).
    """
    if not isinstance(body, dict):
        raise MalformedAssistantResponse("the assistant's response is not a JSON object")
    output = body.get("output")
    if not isinstance(output, dict):
        raise MalformedAssistantResponse("the assistant's response has no output object", path="$.output")
    for key in ("generic", "actions"):
        if key in output and not isinstance(output[key], list):
            raise MalformedAssistantResponse(f"the assistant's output.{key} is not an array", path=f"$.output.{key}")
    for i, action in enumerate(output.get("actions") or []):
        if not isinstance(action, dict):
            raise MalformedAssistantResponse(f"output.actions[{i}] is not an object", path=f"$.output.actions[{i}]")
    if "context" in body and not isinstance(body["context"], dict):
        raise MalformedAssistantResponse("the assistant's context is not an object", path="$.context")
    return body


def search_actions(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every ``search`` action of a checked response, as ``{query, filter?, metadata?}``.

    :raises SearchActionInvalid: for a search action whose ``query`` is missing, blank or not a string, or
        whose ``filter``/``metadata`` has the wrong type.
    """
    out: list[dict[str, Any]] = []
    for i, action in enumerate(body.get("output", {}).get("actions") or []):
        kind = action.get("type")
        if kind != "search":
            log.info("relay.action_ignored", extra={"type": str(kind)[:40]})
            continue
        query = action.get("query")
        where = f"$.output.actions[{i}]"
        if not isinstance(query, str) or not query.strip():
            raise SearchActionInvalid(f"search action {i} has no query", path=f"{where}.query")
        filt = action.get("filter")
        if filt is not None and not isinstance(filt, str):
            raise SearchActionInvalid(f"search action {i} has a filter that is not a string", path=f"{where}.filter")
        meta = action.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise SearchActionInvalid(f"search action {i} has metadata that is not an object", path=f"{where}.metadata")
        found: dict[str, Any] = {"query": query.strip()[:MAX_QUERY_CHARS]}
        if filt:
            found["filter"] = filt
        if meta:
            found["metadata"] = meta
        out.append(found)
    return out


def dedupe_key(result: Mapping[str, Any]) -> str:
    """Two results are the same when they name the same chunk (``result_metadata.chunk_id``, else ``id``);
    without ids, when they have the same url (or title, when there is no url) and the same body."""
    meta = result.get("result_metadata")
    chunk = meta.get("chunk_id") if isinstance(meta, Mapping) else None
    ident = chunk or result.get("id")
    if isinstance(ident, (str, int)) and str(ident):
        return "id:" + str(ident)
    head = result.get("url") or result.get("title") or ""
    body = " ".join(str(result.get("body") or "").split())
    return "text:" + hashlib.sha1(f"{head}\0{body}".encode()).hexdigest()


def merge_results(lists: Sequence[Sequence[Mapping[str, Any]]], max_results: int) -> list[dict[str, Any]]:
    """Interleave ranked result lists by rank and drop duplicates, keeping at most ``max_results``.

    With one list this is that list, deduplicated and capped.
    """
    merged: list[dict[str, Any]] = []
    seen: set[str] = set()
    depth = max((len(lst) for lst in lists), default=0)
    for rank in range(depth):
        for lst in lists:
            if rank >= len(lst):
                continue
            key = dedupe_key(lst[rank])
            if key in seen:
                continue
            seen.add(key)
            merged.append(dict(lst[rank]))
            if len(merged) >= max_results:
                return merged
    return merged


def text_message(
    text: str,
    *,
    context: Mapping[str, Any] | None = None,
    user_id: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    inp: dict[str, Any] = {"message_type": "text", "text": text}
    if options:
        inp["options"] = dict(options)
    body: dict[str, Any] = {"input": inp}
    if context is not None:
        body["context"] = dict(context)
    if user_id:
        body["user_id"] = user_id
    return body


def results_message(
    previous: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    max_bytes: int,
    *,
    user_id: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], int]:
    """The ``search_results`` message answering ``previous`` (its ``context`` and ``user_id`` echoed),
    trimmed to ``max_bytes``. Returns the body and how many results were dropped or shortened.

    :raises RelayRequestTooLarge: when even an empty result list does not fit (a huge context).
    """
    inp: dict[str, Any] = {"message_type": "search_results", "search_results": []}
    if options:
        inp["options"] = dict(options)
    body: dict[str, Any] = {"input": inp}
    if isinstance(previous.get("context"), dict):
        body["context"] = previous["context"]
    echoed = previous.get("user_id")
    uid = echoed if isinstance(echoed, str) and echoed else user_id
    if uid:
        body["user_id"] = uid
    overhead = len(body_bytes(body)) - len(body_bytes({"search_results": []}))
    budget = max_bytes - overhead
    if budget < len(body_bytes({"search_results": []})):
        raise RelayRequestTooLarge(
            f"the assistant's context alone is over the {max_bytes}-byte request limit", limit=max_bytes
        )
    # the longest prefix that fits, from each result's size (linear); fit_within then only has to shorten
    # a lone first result that is too big on its own. Same outcome as fit_within alone, without its
    # re-serialising after every dropped result.
    room = budget - len(body_bytes({"search_results": []}))
    keep = 0
    for i, r in enumerate(results):
        room -= len(body_bytes(r)) + (1 if i else 0)
        if room < 0:
            break
        keep += 1
    fitted, trimmed = fit_within([dict(r) for r in results[: max(keep, 1)]], budget)
    inp["search_results"] = fitted["search_results"]
    return body, trimmed + len(results) - max(keep, 1) if results else 0


def classify(body: Mapping[str, Any]) -> str:
    """The outcome of a final response: ``answer`` (a conversational search item), ``idk``, ``no_results``,
    ``error`` (connectivity), ``search`` (a plain search item), ``text`` or ``empty``.

    "I don't know" is a plain text item on the wire; it is recognised from ``output.debug`` (watsonx's
    ``generative_ai_called`` turn event, ``generative_ai.is_idk_response``, or this service's ``outcome``),
    so callers who need it ask the assistant for ``options.debug``.
    """
    output = body.get("output") or {}
    generic = [g for g in output.get("generic") or [] if isinstance(g, Mapping)]
    types = [g.get("response_type") for g in generic]
    if any(t in ANSWER_TYPES for t in types):
        return "answer"
    debug = output.get("debug")
    events = debug.get("turn_events") if isinstance(debug, Mapping) else None
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, Mapping):
            continue
        ai = event.get("generative_ai")
        if isinstance(ai, Mapping) and ai.get("is_idk_response") is True:
            return "idk"
        outcome = event.get("outcome")
        if outcome in ("idk", "no_results"):
            return str(outcome)
        if outcome in ("connectivity", "search_failed"):
            return "error"
    if any(isinstance(g.get("errors"), list) and g["errors"] for g in generic):
        return "error"
    if "search" in types:
        return "search"
    return "text" if generic else "empty"
