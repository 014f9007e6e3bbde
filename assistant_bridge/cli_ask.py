"""``assistant-bridge ask "question"``: one conversational search turn from the command line.

It runs the same turn as ``POST .../message`` against the local data directory (through the managed Milvus
Lite side process when ``serve`` is running) and prints the answer, its citations and the confidence scores,
or the whole ``/message`` response with ``--json``. The caller is the local administrator unless ``--user``
or ``--tenant`` says whose view to take.

Exit status: 0 when the turn produced an answer or a deliberate "I don't know" / no-results message, 1 when
the search or the generator failed (the connectivity message), 2 on a usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from assistant_bridge.relay.wire import ANSWER_TYPES
from assistant_bridge.settings import Settings

LEVELS = ("rarely", "less_often", "more_often", "most_often")


def add_ask_command(
    sub: Any,
    common: Callable[[argparse.ArgumentParser], None],
    settings_fn: Callable[..., Settings],
    use_running_lite: Callable[[Settings], None],
) -> None:
    """Register ``ask`` on the ``assistant-bridge`` sub-command parser."""
    ask = sub.add_parser("ask", help="ask a question and print the answer, its citations and scores")
    common(ask)
    ask.add_argument("question")
    ask.add_argument("--assistant", default="default", help="assistant id (default: default)")
    ask.add_argument("--environment", help="environment id (default: the assistant's first)")
    ask.add_argument("--json", action="store_true", help="print the /message response body")
    ask.add_argument("--threshold", choices=LEVELS, help="search_confidence.threshold for this question")
    ask.add_argument("--response-length", choices=("concise", "moderate", "verbose"))
    ask.add_argument("--user", help="answer as this user (default: local administrator, sees everything)")
    ask.add_argument("--workspace", action="append", help="with --user: a workspace of that user (repeatable)")
    ask.add_argument("--tenant", help="answer for this end user (external user id)")
    ask.set_defaults(func=lambda args: cmd_ask(args, settings_fn, use_running_lite))


def _caller(args: argparse.Namespace) -> Any:
    from assistant_bridge.domain import Principal
    from assistant_bridge.web.auth import ANONYMOUS

    if not args.user and not args.tenant:
        return ANONYMOUS
    user = args.user or args.tenant
    return Principal(user_id=user, workspaces=tuple(args.workspace or ()), tenant=args.tenant or None, key_id="cli")


def cmd_ask(
    args: argparse.Namespace, settings_fn: Callable[..., Settings], use_running_lite: Callable[[Settings], None]
) -> int:
    from assistant_bridge.conversation.envelope import response_body
    from assistant_bridge.conversation.runtime import runtime_for
    from assistant_bridge.conversation.turn import Turn, TurnRequest
    from assistant_bridge.domain import Scope
    from assistant_bridge.services import Services

    settings = settings_fn(args)
    use_running_lite(settings)
    svc = Services.from_settings(settings)
    try:
        runtime = runtime_for(svc)
        assistant = runtime.assistants.get(args.assistant, args.environment)
        if assistant.search.type == "client":
            print(
                f"error: assistant {assistant.id!r} hands its searches to the client; ask needs an assistant "
                "with builtin or server search",
                file=sys.stderr,
            )
            return 2
        svc.warm_up()
        request = TurnRequest(
            message_type="text",
            text=args.question,
            debug=True,
            threshold_level=args.threshold,
            response_length=args.response_length,
        )
        result = Turn(runtime, assistant, request, Scope(principal=_caller(args))).run()
        body = response_body(result, user_id=args.user or "local", context=None, turn_count=1)
    finally:
        close = getattr(svc.backend, "close", None)
        if callable(close):
            close()
    if args.json:
        print(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        print(render(body))
    return 1 if result.outcome == "connectivity" else 0


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def render(body: dict[str, Any]) -> str:
    """The human-readable form of a ``/message`` response with debug output."""
    lines: list[str] = []
    for item in body["output"]["generic"]:
        lines.append(item.get("text", ""))
        if item["response_type"] in ANSWER_TYPES:
            lines += ["", item["citations_title"]]
            for n, c in enumerate(item["citations"], start=1):
                result = item["search_results"][c["search_result_index"]]
                score = result["result_metadata"].get("score")
                where = f"result {c['search_result_index'] + 1}" + (f", score {score:.3f}" if score is not None else "")
                lines.append(f"  [{n}] {c['title']} ({where})")
                quoted = " ".join(c["text"].split())
                lines.append(f'      "{quoted}"')
        for err in item.get("errors", []):
            lines.append(f"  error: {err['message']}" + (f" at {err['path']}" if err["path"] else ""))
    events = (body["output"].get("debug") or {}).get("turn_events") or []
    if events:
        ev = events[0]
        scores = ev.get("generative_ai", {}).get("confidence_scores", {})
        reason = ev.get("callout", {}).get("idk_reason_code")
        lines += ["", f"outcome: {ev['outcome']}" + (f" ({reason})" if reason else "")]
        lines.append(
            f"scores: pre_gen {_num(scores.get('pre_gen'))} (threshold {_num(scores.get('pre_gen_threshold'))})"
            f", post_gen {_num(scores.get('post_gen'))} (threshold {_num(scores.get('post_gen_threshold'))})"
            f", extractiveness {_num(scores.get('extractiveness'))}"
        )
        m = ev.get("metrics", {})
        lines.append(
            f"time: search {m.get('search_time_ms', 0):.0f} ms, generation "
            f"{m.get('answer_generation_time_ms', 0):.0f} ms, total {m.get('total_time_ms', 0):.0f} ms"
        )
    return "\n".join(lines)
