"""A deterministic generator for tests of code that runs the loop (web routes, streaming, benchmarks).

:class:`FakeGenerator` answers with a fixed text, or by default with the first sentence of each snippet,
citing each sentence exactly (with ``reword``, after a lead-in of its own, so that the answer is not a verbatim
extract, as an LLM's is not). It records its calls, can decline, fail, or report any prompt size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from assistant_bridge.core.citations import Citation
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.errors import GeneratorError
from assistant_bridge.generators.base import (
    IDK_TEXT,
    Generation,
    GenerationStream,
    ResponseLength,
    approx_tokens,
    validate_response_length,
)
from assistant_bridge.text import split_sentences

REWORD_LEAD = "In other words, "


class FakeGenerator:
    """:param text: fixed answer (cites nothing); ``None`` means first sentences of the snippets.
    :param declined: answer "I don't know".
    :param error: raise :class:`GeneratorError` with this message from ``generate``/``stream``.
    :param context_tokens: the budget the loop truncates to.
    :param token_counter: overrides the prompt-size estimate (``(query, snippets) -> int``).
    :param chunk_chars: size of the streamed deltas.
    :param reword: start the answer with :data:`REWORD_LEAD` (the post-generation filter decides only for answers
        that are not verbatim extracts).
    """

    name = "fake"

    def __init__(
        self,
        text: str | None = None,
        *,
        declined: bool = False,
        error: str | None = None,
        context_tokens: int = 100_000,
        token_counter: Callable[[str, Sequence[Snippet]], int] | None = None,
        chunk_chars: int = 8,
        reword: bool = False,
    ) -> None:
        self.text = text
        self.declined = declined
        self.error = error
        self.context_tokens = context_tokens
        self.token_counter = token_counter
        self.chunk_chars = chunk_chars
        self.reword = reword
        self.calls: list[tuple[str, tuple[Snippet, ...], str]] = []
        self.warmed = False

    def warm_up(self) -> None:
        self.warmed = True

    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int:
        if self.token_counter is not None:
            return self.token_counter(query, snippets)
        return approx_tokens(query) + sum(approx_tokens(s.title) + approx_tokens(s.text) for s in snippets)

    def generate(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> Generation:
        validate_response_length(response_length)
        self.calls.append((query, tuple(snippets), response_length))
        if self.error is not None:
            raise GeneratorError(self.error)
        if self.declined:
            return Generation(text=IDK_TEXT, citations=(), declined=True, model="fake")
        if self.text is not None:
            return Generation(text=self.text, citations=(), declined=False, model="fake")
        parts: list[str] = [REWORD_LEAD] if self.reword else []
        citations: list[Citation] = []
        offset = len(REWORD_LEAD) if self.reword else 0
        for snippet in snippets:
            sentences = split_sentences(snippet.text)
            if not sentences:
                continue
            if citations:
                parts.append(" ")
                offset += 1
            sentence = sentences[0]
            citations.append(
                Citation(
                    snippet.title, sentence, snippet.text, snippet.result_index, ((offset, offset + len(sentence)),)
                )
            )
            parts.append(sentence)
            offset += len(sentence)
        if not citations:
            return Generation(text=IDK_TEXT, citations=(), declined=True, model="fake")
        return Generation(text="".join(parts), citations=tuple(citations), declined=False, model="fake")

    def stream(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> GenerationStream:
        generation = self.generate(query, snippets, response_length)
        size = max(1, self.chunk_chars)

        def deltas() -> Iterator[str]:
            for i in range(0, len(generation.text), size):
                yield generation.text[i : i + size]

        return GenerationStream(deltas(), lambda _text: generation)
