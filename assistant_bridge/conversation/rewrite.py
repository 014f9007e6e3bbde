"""Query rewriting: turn the last message of a conversation into a standalone question before it is searched.

Two contextual modes (spec §A.3), per assistant (``conversational_search.contextual_mode``):

* ``single_turn`` (default): the query is the last message, as sent;
* ``entire_conversation``: the last message is rewritten with the remembered turns (:mod:`.memory`), by an
  OpenAI-compatible LLM when one is configured (:mod:`.rewrite_llm`), otherwise by the embedded rewriter
  (:mod:`.rewrite_embedded`), which needs no model: it leaves a self-contained message alone and appends to
  a follow-up the key terms of earlier turns it lacks (``"Which is more important? — Market Cap / NAV"``).

The rewritten query is what the turn searches, filters and answers; both it and the original message go to
``output.debug`` (:meth:`Rewrite.to_json`). Invariant: :meth:`Rewriter.rewrite` never raises for a failing
LLM; it falls back to the embedded rewriter, says why in :attr:`Rewrite.fallback_reason`, keeps the failure's
error code in :attr:`Rewrite.error_code` (the caller counts it in its metrics) and logs ``rewrite.fallback``
without the message. No I/O here (the LLM client lives in :mod:`.rewrite_llm`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.conversation.rewrite_embedded import (
    MAX_QUERY_CHARS,
    EmbeddedRewriter,
    carries_named_command,
    content_words,
    language,
    named_commands,
    topic_command,
)
from assistant_bridge.errors import ConfigurationError, DependencyError, GeneratorError
from assistant_bridge.text import option_words

log = logging.getLogger(__name__)
CONTEXTUAL_MODES = ("single_turn", "entire_conversation")
# a rewritten query's dense search adds the message as asked at this weight (``query_rewrite.as_asked_weight``),
# in full for a message of AS_ASKED_FULL_WORDS content words or more, in proportion below: the vector of "Why
# does he do it?" says nothing of the topic and would only dilute the rewrite's; a message that names a
# command-line option ("And what does --hard do?") weighs in full: the option says what it asks about on its own
AS_ASKED_WEIGHT = 1.0
AS_ASKED_FULL_WORDS = 2
# a follow-up that carries a command the user named, and whose manual page answered, weighs the message as asked at
# this share of the above: the topic is the user's and the documents agreed with it, so the message's own words
# ("Can I limit the bandwidth it uses?") need less weight to keep other pages out; not none, since the rewrite may
# also carry the previous question's details ("— line numbers / less")
SETTLED_SHARE = 0.5


@dataclass(frozen=True)
class Rewrite:
    """What was searched, and why.

    :param query: the standalone query to search, filter and answer.
    :param original: the last message as sent.
    :param mode: the contextual mode.
    :param method: ``none`` (nothing to do), ``embedded``, ``llm`` or ``fallback`` (a rewrite failed).
    :param follow_up: the embedded rewriter judged the message a follow-up (``None`` when not asked).
    :param carried: the terms taken over from earlier turns (embedded rewriter).
    :param fallback_reason: why the LLM rewrite was not used (``timeout``, ``connect_error``,
        ``http_<status>``, ``bad_response``, ``empty_rewrite``).
    :param history_turns: how many remembered turns were available.
    :param ms: time spent rewriting.
    :param error_code: the failure's code in the error tree (``generator_error``...) when the LLM rewrite
        failed; not part of :meth:`to_json`.
    :param as_asked_weight: how much the message as asked weighs in a dense search of a rewritten query
        (:attr:`blend`): the configured weight, scaled down for a message with fewer than
        :data:`AS_ASKED_FULL_WORDS` content words and no command-line option (:func:`as_asked_share`), and by
        :data:`SETTLED_SHARE` for a follow-up that carries a command the user named and its manual page answered
        (:func:`~.rewrite_embedded.carries_named_command`); 0 searches the rewrite alone.
    :param topic: the command a follow-up is about (:func:`~.rewrite_embedded.topic_command`), whose manual page
        the built-in search reads first when another page leads its results; ``None`` for any other message.
    """

    query: str
    original: str
    mode: str = "single_turn"
    method: str = "none"
    follow_up: bool | None = None
    carried: tuple[str, ...] = ()
    fallback_reason: str | None = None
    history_turns: int = 0
    ms: float = 0.0
    error_code: str | None = None
    as_asked_weight: float = 0.0
    topic: str | None = None

    @property
    def rewritten(self) -> bool:
        return self.query != self.original

    @property
    def blend(self) -> tuple[str, float] | None:
        """``(message as asked, weight)`` for :meth:`Services.search` when the query is a rewrite: a rewrite
        that carried the wrong topic cannot push away what the message alone finds (measured in
        ``docs/conversation-and-safety.md``); ``None`` when nothing was rewritten or the weight is 0."""
        if not self.rewritten or self.as_asked_weight <= 0 or not self.original.strip():
            return None
        return self.original, self.as_asked_weight

    def to_json(self) -> dict[str, object]:
        """The ``query_rewrite`` block of ``output.debug`` (contains user text: debug output only)."""
        return {
            "contextual_mode": self.mode,
            "original_query": self.original,
            "rewritten_query": self.query,
            "rewritten": self.rewritten,
            "method": self.method,
            "follow_up": self.follow_up,
            "carried_terms": list(self.carried),
            "fallback": self.method == "fallback",
            "fallback_reason": self.fallback_reason,
            "as_asked_weight": self.as_asked_weight if self.blend is not None else 0.0,
            "topic": self.topic,
            "history_turns": self.history_turns,
            "time_ms": round(self.ms, 3),
        }


class QueryRewriter(Protocol):
    """Rewrites ``question`` given the remembered turns (oldest first). May raise
    :class:`~assistant_bridge.errors.DependencyError`; :class:`Rewriter` turns that into a fallback."""

    name: str

    def rewrite(self, question: str, history: Sequence[MemoryTurn]) -> str: ...


class Rewriter:
    """Applies an assistant's contextual mode: ``single_turn`` keeps the message; ``entire_conversation``
    asks ``primary`` (an LLM rewriter, or the embedded one) and falls back to the embedded rewriter when it
    fails.

    :param clock: ``time.perf_counter`` by default (tests pass a fake).
    :param as_asked_weight: the configured weight of the message as asked (:attr:`Rewrite.blend`).
    """

    def __init__(
        self,
        mode: str = "single_turn",
        primary: QueryRewriter | None = None,
        clock: Callable[[], float] = time.perf_counter,
        fallback: EmbeddedRewriter | None = None,
        as_asked_weight: float = 0.0,
    ) -> None:
        if mode not in CONTEXTUAL_MODES:
            raise ValueError(f"contextual_mode must be one of {CONTEXTUAL_MODES}")
        self.mode = mode
        self.as_asked_weight = as_asked_weight
        self.primary: QueryRewriter = primary or EmbeddedRewriter()
        self.fallback = fallback or EmbeddedRewriter()
        self._clock = clock

    def rewrite(self, question: str, history: Sequence[MemoryTurn]) -> Rewrite:
        started = self._clock()
        base = dict(original=question, mode=self.mode, history_turns=len(history))
        if self.mode == "single_turn" or not history:
            return Rewrite(query=question, **base)  # type: ignore[arg-type]
        follow_up: bool | None = None
        carried: tuple[str, ...] = ()
        reason: str | None = None
        code: str | None = None
        try:
            if isinstance(self.primary, EmbeddedRewriter):
                query, decision, terms = self.primary.analyse(question, history)
                follow_up, carried = decision.follow_up, tuple(terms)
            else:
                query = self.primary.rewrite(question, history).strip()
                if not query:
                    reason, code = "empty_rewrite", GeneratorError.code  # the model answered nothing usable
        except DependencyError as exc:
            query, reason, code = "", str(exc.details.get("reason") or exc.code), exc.code
        if reason is not None:
            log.warning(
                "rewrite.fallback",
                extra={"mode": self.mode, "rewriter": self.primary.name, "code": code, "reason": reason},
            )
            query, decision, terms = self.fallback.analyse(question, history)  # the embedded rewrite, no model
            follow_up, carried = decision.follow_up, tuple(terms)
        # a follow-up that carries a command the user named, and whose manual page answered: the message as asked
        # ("Can I limit the bandwidth it uses?") weighs half as much (SETTLED_SHARE)
        lang = language(question)
        # a turn that is no follow-up carries no command: neither settled nor about a topic
        commands = named_commands(history, lang) if follow_up else frozenset()
        settled = carries_named_command(carried, commands)
        return Rewrite(
            query=query[:MAX_QUERY_CHARS],
            method=self.primary.name if reason is None else "fallback",
            follow_up=follow_up,
            carried=carried,
            fallback_reason=reason,
            ms=(self._clock() - started) * 1000,
            error_code=code,
            as_asked_weight=self.as_asked_weight * as_asked_share(question) * (SETTLED_SHARE if settled else 1.0),
            topic=topic_command(carried, commands),
            **base,  # type: ignore[arg-type]
        )


def as_asked_share(question: str) -> float:
    """The share of the configured as-asked weight a message gets (see :data:`AS_ASKED_FULL_WORDS`): in full for
    :data:`AS_ASKED_FULL_WORDS` content words or a command-line option, in proportion below."""
    if option_words(question):
        return 1.0
    return min(1.0, content_words(question) / AS_ASKED_FULL_WORDS)


def make_rewriter(
    mode: str, options: Mapping[str, Any], generator: Mapping[str, Any], transport: httpx.BaseTransport | None = None
) -> Rewriter:
    """The rewriter of an assistant: its ``contextual_mode``, its ``query_rewrite`` options and its generator
    table (an ``openai`` generator lends its endpoint to an ``auto`` or ``llm`` rewrite).

    :raises ConfigurationError: ``method = "llm"`` without an endpoint.
    """
    method = str(options.get("method", "auto"))
    endpoint = {k: options[k] for k in ("base_url", "model", "api_key") if options.get(k)}
    if not (endpoint.get("base_url") and endpoint.get("model")) and generator.get("kind") in (
        "openai",
        "openai-compatible",
    ):
        endpoint = {k: generator[k] for k in ("base_url", "model", "api_key") if generator.get(k)}
    embedded = EmbeddedRewriter(weak=bool(options.get("topic_for_short_questions", True)))
    weight = float(options.get("as_asked_weight", AS_ASKED_WEIGHT))
    if method == "embedded" or (method == "auto" and not endpoint):
        return Rewriter(mode, embedded, fallback=embedded, as_asked_weight=weight)
    if not (endpoint.get("base_url") and endpoint.get("model")):
        raise ConfigurationError("query_rewrite.method = 'llm' needs query_rewrite.base_url and model")
    from assistant_bridge.conversation.rewrite_llm import OpenAIRewriter

    llm = OpenAIRewriter(
        base_url=str(endpoint["base_url"]),
        model=str(endpoint["model"]),
        api_key=endpoint.get("api_key"),
        timeout=float(options.get("timeout_seconds", 5.0)),
        max_history_turns=int(options.get("max_history_turns", 6)),
        transport=transport,
    )
    return Rewriter(mode, llm, fallback=embedded, as_asked_weight=weight)
