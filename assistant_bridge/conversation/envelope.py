"""The ``/message`` request and response envelopes around a turn (watsonx Assistant v2 shape).

Request: ``{"input": {"message_type", "text", "search_results", "options"}, "context", "user_id"}``,
validated against ``schemas/message_request.schema.json`` before it gets here.
Response: ``{"output": {"generic", "intents", "entities", "actions"?, "debug"?}, "context", "user_id"}``.

A stateless client keeps the conversation in ``context``: the response's ``context.global.system.turn_count``
counts turns, and a search action handed to the client is also written to
``context.integrations.assistant_bridge.pending_search``, so a client that echoes the context back (as IBM's web chat
example does) can answer it without a session and without repeating the query in ``input.text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assistant_bridge.conversation.assistants import Assistant
from assistant_bridge.conversation.runtime import ConversationRuntime
from assistant_bridge.conversation.turn import TurnRequest, TurnResult
from assistant_bridge.core.results import SearchResult
from assistant_bridge.errors import ValidationFailed
from assistant_bridge.filters import Thresholds

CONTEXT_KEY = "assistant_bridge"


def context_pending(context: Any) -> Mapping[str, Any] | None:
    """The search action a stateless client echoed back in ``context``, if it looks like one: in
    ``context.integrations.assistant_bridge`` (where it is written) or ``context.assistant_bridge`` (where
    it was written before, for clients that still hold such a context)."""
    if not isinstance(context, Mapping):
        return None
    integrations = context.get("integrations")
    for holder in (integrations if isinstance(integrations, Mapping) else {}, context):
        ours = holder.get(CONTEXT_KEY)
        pending = ours.get("pending_search") if isinstance(ours, Mapping) else None
        if isinstance(pending, Mapping) and isinstance(pending.get("query"), str) and pending["query"]:
            return pending
    return None


def turn_request(
    body: Mapping[str, Any],
    raw_size: int,
    runtime: ConversationRuntime,
    assistant: Assistant,
    pending: Mapping[str, Any] | None,
) -> TurnRequest:
    """Build the :class:`TurnRequest` of a validated body.

    :param raw_size: the body's size in bytes; a ``search_results`` message over
        ``message.max_search_results_bytes`` (100 KB) is refused (spec §A.2).
    :raises ValidationFailed: a 400 for the caller.
    """
    inp = body["input"]
    message_type = inp.get("message_type", "text")
    limit = runtime.settings.max_search_results_bytes
    if message_type == "search_results" and raw_size > limit:
        raise ValidationFailed(
            f"a search_results message must not exceed {limit} bytes (this one has {raw_size})",
            path="$.input.search_results",
            limit=limit,
        )
    opts = inp.get("options") or {}
    level = opts.get("search_confidence_threshold")
    thresholds = None
    override = opts.get("thresholds")
    if override:
        base = runtime.thresholds(level or assistant.conversational.threshold_level)
        # a request that sets its own pre_gen has chosen the pre-generation threshold: the level's rule for
        # snippets that hold little of the question (pre_gen_low_coverage) stays only when it keeps the level's one
        thresholds = Thresholds(
            pre_gen=float(override.get("pre_gen", base.pre_gen)),
            post_gen=float(override.get("post_gen", base.post_gen)),
            pre_gen_low_coverage=None if "pre_gen" in override else base.pre_gen_low_coverage,
        )
    results = inp.get("search_results")
    return TurnRequest(
        message_type=message_type,
        text=inp.get("text"),
        search_results=tuple(SearchResult.from_json(r) for r in results) if results is not None else None,
        debug=bool(opts.get("debug", False)),
        threshold_level=level,
        thresholds=thresholds,
        response_length=opts.get("response_length"),
        pending=pending if message_type == "search_results" else None,
    )


def previous_turns(context: Any) -> int:
    try:
        count = context["global"]["system"]["turn_count"]
    except (KeyError, TypeError):
        return 0
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def response_body(
    result: TurnResult, *, user_id: str, context: Any, turn_count: int, session_id: str | None = None
) -> dict[str, Any]:
    """The ``/message`` response. ``context.skills`` from the request is echoed unchanged."""
    output: dict[str, Any] = {"generic": list(result.generic), "intents": [], "entities": []}
    if result.actions:
        output["actions"] = list(result.actions)
    if result.debug is not None:
        output["debug"] = result.debug
    glob: dict[str, Any] = {"system": {"turn_count": turn_count}}
    if session_id:
        glob["session_id"] = session_id
    out_context: dict[str, Any] = {"global": glob}
    skills = context.get("skills") if isinstance(context, Mapping) else None
    out_context["skills"] = dict(skills) if isinstance(skills, Mapping) else {}
    if session_id is None and result.pending:
        # under "integrations", a free-form object that the official SDKs' context models keep (they drop
        # keys of their own at the top level), so a context round-tripped through them still carries it
        out_context["integrations"] = {CONTEXT_KEY: {"pending_search": dict(result.pending)}}
    return {"output": output, "context": out_context, "user_id": user_id}
