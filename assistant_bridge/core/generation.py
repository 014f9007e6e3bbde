"""The generator protocol and its result types: what the core loop calls and receives.

A generator turns a query and the kept snippets into an answer with citations. It knows its context size
(``context_tokens``) and how long a prompt would be (``prompt_tokens``) so the loop can drop snippets
before calling it. ``generate`` returns a :class:`Generation`; ``stream`` returns a
:class:`GenerationStream` that yields text deltas and then hands over the same :class:`Generation`.
The implementations live in :mod:`assistant_bridge.generators`.

Invariants: the streamed deltas concatenate to ``Generation.text`` exactly; citation ranges index into that
text; ``declined`` is true when the text is an "I don't know" answer
(:func:`assistant_bridge.generators.base.is_declined`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from assistant_bridge.core.citations import Citation
from assistant_bridge.core.snippets import Snippet

ResponseLength = Literal["concise", "moderate", "verbose"]
RESPONSE_LENGTHS: tuple[str, ...] = ("concise", "moderate", "verbose")
IDK_TEXT = "I don't know"


@dataclass(frozen=True)
class Generation:
    """A finished answer.

    :param text: the answer shown to the user (no citation markers).
    :param citations: the cited spans of ``text``.
    :param declined: the generator said it does not know.
    :param model: the model (or algorithm) that produced it.
    :param prompt_tokens: input size as counted by the server, or estimated.
    :param completion_tokens: output size when known.
    """

    text: str
    citations: tuple[Citation, ...]
    declined: bool
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class GenerationStream:
    """Text deltas of one answer, then the finished :class:`Generation`.

    Iterate it (or call :meth:`deltas`) to receive the deltas; :meth:`result` returns the
    :class:`Generation` and drains any deltas not read yet. Errors raised while streaming (for example
    :class:`~assistant_bridge.errors.GeneratorError` after the first token) propagate from the iteration.
    """

    def __init__(self, deltas: Iterator[str], finish: Callable[[str], Generation]) -> None:
        self._source = deltas
        self._finish = finish
        self._parts: list[str] = []
        self._result: Generation | None = None

    def __iter__(self) -> GenerationStream:
        return self

    def __next__(self) -> str:
        if self._result is not None:
            raise StopIteration
        try:
            delta = next(self._source)
        except StopIteration:
            self._result = self._finish("".join(self._parts))
            raise
        self._parts.append(delta)
        return delta

    def deltas(self) -> Iterator[str]:
        return self

    def result(self) -> Generation:
        for _ in self:
            pass
        assert self._result is not None
        return self._result

    def close(self) -> None:
        close = getattr(self._source, "close", None)
        if close is not None:
            close()


@runtime_checkable
class Generator(Protocol):
    """Writes an answer from snippets. Construction is cheap; :meth:`warm_up` loads models or pools."""

    name: str
    context_tokens: int

    def warm_up(self) -> None: ...

    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int: ...

    def generate(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> Generation: ...

    def stream(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> GenerationStream: ...


def validate_response_length(value: str) -> ResponseLength:
    """:raises ValueError: for anything but ``concise``, ``moderate`` or ``verbose``."""
    if value not in RESPONSE_LENGTHS:
        raise ValueError(f"response_length must be concise, moderate or verbose, not {value!r}")
    return value  # type: ignore[return-value]
