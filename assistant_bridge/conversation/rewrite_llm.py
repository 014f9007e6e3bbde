"""Query rewriting by an OpenAI-compatible LLM (``POST {base_url}/chat/completions``).

A short prompt asks for the last message as a standalone search query, as JSON ``{"query": "..."}``; a plain
text answer is accepted too. One attempt, a short timeout (5 s by default), no retry: a rewrite that is late
is worth less than the last message itself. Every failure raises
:class:`~assistant_bridge.errors.GeneratorError` with ``details["reason"]`` (``timeout``, ``connect_error``,
``http_<status>``, ``bad_response``), which :class:`~assistant_bridge.conversation.rewrite.Rewriter` turns
into a fallback to the last message, reported in ``output.debug``. The API key never appears in an error
or a log; queries are never logged.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Unpack

from assistant_bridge.chat_completions import ChatCompletions, Endpoint
from assistant_bridge.conversation.memory import MemoryTurn, history_for_prompt
from assistant_bridge.errors import GeneratorError
from assistant_bridge.http import RetryPolicy

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You rewrite the user's last message in a conversation as one standalone search query. Resolve pronouns "
    "and references ('it', 'that', 'the second one') with the conversation, keep every constraint of the "
    "message, add nothing else, and keep the user's language. If the message already stands alone, return it "
    'unchanged. Answer with JSON only: {"query": "<the standalone query>"}'
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_LABEL = re.compile(r"^(?:standalone )?(?:query|rewritten(?: query)?|question)\s*:\s*", re.IGNORECASE)


def build_messages(question: str, history: Sequence[MemoryTurn], max_turns: int = 6) -> list[dict[str, str]]:
    """The chat messages of a rewrite request: the instructions, the last ``max_turns`` turns (answers cut
    short) and the message to rewrite."""
    lines = [f"{role}: {' '.join(text.split())}" for role, text in history_for_prompt(list(history)[-max_turns:])]
    conversation = "\n".join(lines) or "(no earlier turns)"
    user = f"Conversation:\n{conversation}\n\nLast message: {question}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_rewrite(content: str, question: str) -> str:
    """The query in an LLM answer: ``{"query": ...}`` (also inside a code fence), or the first line of plain
    text without a ``Query:`` label or quotes.

    :raises GeneratorError: empty, or implausibly long for a query.
    """
    text = _FENCE.sub("", content.strip()).strip()
    query = ""
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("query"), str):
            query = data["query"]
        elif data is not None:
            raise GeneratorError("the rewrite answer has no query", reason="bad_response")
    if not query:
        first = next((line for line in text.splitlines() if line.strip()), "")
        query = _LABEL.sub("", first.strip()).strip().strip("\"“”「」'")
    query = " ".join(query.split())
    if not query or len(query) > max(400, 4 * len(question)):
        raise GeneratorError("the rewrite answer is not a usable query", reason="bad_response")
    return query


class OpenAIRewriter:
    """Takes the options of :class:`~assistant_bridge.chat_completions.ChatCompletions`; ``timeout`` (5 s)
    bounds the connection as well as the answer, and nothing is retried: the embedded rewriter is the fallback.

    :param max_history_turns: remembered turns sent with the message."""

    name = "llm"

    def __init__(self, *, max_history_turns: int = 6, **endpoint: Unpack[Endpoint]) -> None:
        timeout = endpoint.get("timeout", 5.0)
        self.chat = ChatCompletions(
            **({"timeout": timeout, "connect_timeout": timeout} | endpoint),
            retry=RetryPolicy(max_retries=0, name="rewrite"),
            label="the rewrite LLM",
        )
        self.base_url = self.chat.base_url
        self.model = self.chat.model
        self.timeout = timeout
        self.max_history_turns = max_history_turns

    def rewrite(self, question: str, history: Sequence[MemoryTurn]) -> str:
        messages = build_messages(question, history, self.max_history_turns)
        return parse_rewrite(self.chat.content(messages, max_tokens=200, temperature=0), question)

    def close(self) -> None:
        self.chat.close()


class FakeLLMRewriter:
    """Answers ``answers`` in turn (a string, or an exception to raise); records what it was given."""

    name = "llm"

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, int]] = []

    def rewrite(self, question: str, history: Sequence[MemoryTurn]) -> str:
        self.calls.append((question, len(history)))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return parse_rewrite(answer, question)
