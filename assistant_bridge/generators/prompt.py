"""The chat prompt for LLM generators: numbered snippets, ``[n]`` citations, an exact "I don't know".

Invariant: snippet ``n`` in the prompt (1-based) is ``snippets[n - 1]``, so the markers the model writes map
back with :func:`~assistant_bridge.core.citations.citations_from_markers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assistant_bridge.core.snippets import Snippet
from assistant_bridge.generators.base import IDK_TEXT, ResponseLength, approx_tokens


@dataclass(frozen=True)
class LengthSetting:
    instruction: str
    max_tokens: int


LENGTHS: dict[str, LengthSetting] = {
    "concise": LengthSetting("Answer in one or two short sentences.", 120),
    "moderate": LengthSetting("Answer in a short paragraph of about three sentences.", 300),
    "verbose": LengthSetting("Give a detailed, complete answer of up to two paragraphs.", 700),
}

SYSTEM = (
    "You answer questions using only the numbered passages the user gives you. "
    "After each sentence of your answer, cite the passages that support it with their numbers in square "
    "brackets, for example [1] or [2][3]. Do not use any knowledge that is not in the passages. "
    f"If the passages do not contain the answer, reply exactly: {IDK_TEXT}. "
    "Answer in the language of the question. {length}"
)
_MESSAGE_OVERHEAD = 4  # role and separators per chat message in common chat templates


def build_messages(query: str, snippets: Sequence[Snippet], response_length: ResponseLength) -> list[dict[str, str]]:
    """The ``messages`` array: one system message with the rules, one user message with passages and query."""
    passages = "\n\n".join(
        f"[{i}] {s.title}\n{s.text}" if s.title else f"[{i}]\n{s.text}" for i, s in enumerate(snippets, start=1)
    )
    return [
        {"role": "system", "content": SYSTEM.format(length=LENGTHS[response_length].instruction)},
        {"role": "user", "content": f"Passages:\n\n{passages}\n\nQuestion: {query}"},
    ]


def count_prompt_tokens(messages: Sequence[dict[str, str]]) -> int:
    """Approximate prompt size (see :func:`~assistant_bridge.generators.base.approx_tokens`)."""
    return sum(approx_tokens(m["content"]) + _MESSAGE_OVERHEAD for m in messages) + 3
