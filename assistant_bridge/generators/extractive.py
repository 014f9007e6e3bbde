"""The extractive generator: answers with the snippet sentences that best answer the query. No LLM.

Every sentence of every kept snippet is scored::

    score = w_embed * cos(query, sentence)        # semantic match (optional embedder, e.g. USE-multilingual)
          + coverage(query terms, sentence)       # idf-weighted share of the query's terms in the sentence
          - w_position * log(1 + index in its snippet)
          - w_rank * log(1 + snippet order)
          - fragment_penalty                      # chunk edges cut mid-sentence

Terms are case-folded words of three or more characters cut to five characters (a cheap stemmer that works
for English and French alike), numbers, and CJK character bigrams; their idf comes from the candidate
sentences themselves, so words that appear everywhere (stopwords, the page's topic) weigh nothing and no
stopword list is needed.

The best sentences are kept up to the response length (concise 1, moderate 3, verbose 5 sentences, each
with a character cap), near-duplicates skipped, and printed in reading order (snippet order, then position).
Each sentence is cited exactly: ``Citation.text`` is the source sentence and its range covers it in the
answer.

Measured on the CLAPNQ dev answerable questions, gold passage (``bench/clapnq.py``; the weights were chosen
there): see ``docs/conversational-search.md``.

Invariant: the answer consists only of sentences copied from the snippets (a sentence longer than the cap
is cut at a word boundary and ends with "…"), so extractiveness is 1.0 unless a sentence was cut.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from assistant_bridge.core.citations import CJK_CHARS, Citation, sentence_spans
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.embedders.base import Embedder
from assistant_bridge.generators.base import (
    IDK_TEXT,
    Generation,
    GenerationStream,
    ResponseLength,
    approx_tokens,
    validate_response_length,
)

_TERM = re.compile(rf"[{CJK_CHARS}]+|[^\W_{CJK_CHARS}]+")
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]")
_NO_SPACE_AFTER = re.compile(rf"[{CJK_CHARS}。！？」』）]$")
_ENDS_SENTENCE = re.compile(r"[.!?…。！？][\"'”’»)\]」』）]*$")


@dataclass(frozen=True)
class LengthPolicy:
    """How many sentences and characters one response length allows."""

    sentences: int
    max_chars: int


DEFAULT_LENGTHS: dict[str, LengthPolicy] = {
    "concise": LengthPolicy(sentences=1, max_chars=300),
    "moderate": LengthPolicy(sentences=3, max_chars=700),
    "verbose": LengthPolicy(sentences=5, max_chars=1400),
}


@dataclass(frozen=True)
class _Candidate:
    snippet: int
    position: int
    start: int
    end: int
    text: str
    terms: frozenset[str]
    fragment: bool


def terms(text: str) -> list[str]:
    """Matching terms of ``text``: stemmed words (3+ chars), numbers, CJK bigrams."""
    out: list[str] = []
    for token in _TERM.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK_RUN.match(token):
            out.extend(token[i : i + 2] for i in range(max(1, len(token) - 1)))
        elif token.isdigit() or len(token) > 2:
            out.append(token[:5])
    return out


def _candidates(snippets: Sequence[Snippet]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for k, snippet in enumerate(snippets):
        spans = sentence_spans(snippet.text)
        for position, (start, end) in enumerate(spans):
            text = snippet.text[start:end]
            first_char = text[0]
            fragment = (position == 0 and first_char.isalpha() and first_char.islower()) or (
                position == len(spans) - 1 and len(spans) > 1 and not _ENDS_SENTENCE.search(text)
            )
            out.append(_Candidate(k, position, start, end, text, frozenset(terms(text)), fragment))
    return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


class ExtractiveGenerator:
    """Sentence-selection answers with exact citations.

    :param embedder: optional sentence embedder (``embed_queries``/``embed_passages``, normalised rows). Without
        one the score is lexical and positional only.
    :param w_embed: weight of the query-sentence cosine.
    :param w_position: penalty per log position inside a snippet (leading sentences carry definitions).
    :param w_rank: penalty per log rank of the snippet (later results are less relevant).
    :param fragment_penalty: subtracted from a sentence cut by a chunk boundary.
    :param min_chars: sentences shorter than this are used only when nothing else exists.
    :param min_relevance: if set, decline ("I don't know") when the best score is below it.
    :param max_embedded: cap on sentences sent to the embedder (the best by lexical score); bounds latency.
    :param context_tokens: the snippet budget the loop truncates to.
    """

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        w_embed: float = 0.5,
        w_position: float = 0.06,
        w_rank: float = 0.05,
        fragment_penalty: float = 0.1,
        min_chars: int = 20,
        min_relevance: float | None = None,
        max_embedded: int = 48,
        context_tokens: int = 16384,
        lengths: dict[str, LengthPolicy] | None = None,
    ) -> None:
        self.embedder = embedder
        self.w_embed = w_embed
        self.w_position = w_position
        self.w_rank = w_rank
        self.fragment_penalty = fragment_penalty
        self.min_chars = min_chars
        self.min_relevance = min_relevance
        self.max_embedded = max_embedded
        self.context_tokens = context_tokens
        self.lengths = dict(DEFAULT_LENGTHS if lengths is None else lengths)
        self.model = "extractive" if embedder is None else f"extractive+{embedder.name}"

    def warm_up(self) -> None:
        if self.embedder is not None:
            self.embedder.warm_up()

    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int:
        return approx_tokens(query) + sum(approx_tokens(s.title) + approx_tokens(s.text) + 4 for s in snippets)

    def score(self, query: str, snippets: Sequence[Snippet]) -> tuple[list[_Candidate], np.ndarray]:
        """Score every candidate sentence; exposed for the benchmark and tests."""
        cands = _candidates(snippets)
        if not cands:
            return cands, np.zeros(0)
        n = len(cands)
        qterms = set(terms(query))
        df = {t: sum(1 for c in cands if t in c.terms) for t in qterms}
        idf = {t: max(0.0, math.log((n + 1) / (df[t] + 0.5))) for t in qterms}
        total = sum(idf.values())
        lexical = np.array(
            [sum(idf[t] for t in qterms & c.terms) / total if total > 0 else 0.0 for c in cands], dtype=np.float64
        )
        prior = np.array(
            [
                -self.w_position * math.log1p(c.position)
                - self.w_rank * math.log1p(c.snippet)
                - (self.fragment_penalty if c.fragment else 0.0)
                for c in cands
            ]
        )
        scores = lexical + prior
        if self.embedder is not None and self.w_embed:
            chosen = np.argsort(-scores, kind="stable")[: self.max_embedded]
            qvec = self.embedder.embed_queries([query])[0]
            svecs = self.embedder.embed_passages([cands[i].text for i in chosen])
            cosine = np.full(n, -1.0)
            cosine[chosen] = svecs @ qvec
            scores = scores + self.w_embed * cosine
        short = np.array([len(c.text) < self.min_chars for c in cands])
        if not short.all():
            scores = np.where(short, scores - 10.0, scores)
        return cands, scores

    def _select(self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength) -> list[_Candidate]:
        policy = self.lengths[validate_response_length(response_length)]
        cands, scores = self.score(query, snippets)
        if not cands:
            return []
        order = np.argsort(-scores, kind="stable")
        if self.min_relevance is not None and scores[order[0]] < self.min_relevance:
            return []
        chosen: list[_Candidate] = []
        used = 0
        for i in order:
            cand = cands[int(i)]
            if len(chosen) >= policy.sentences:
                break
            if any(_near_duplicate(cand, c) for c in chosen):
                continue
            if chosen and used + len(cand.text) > policy.max_chars:
                continue
            chosen.append(cand)
            used += len(cand.text) + 1
        chosen.sort(key=lambda c: (c.snippet, c.position))
        return chosen

    def _compose(self, chosen: Sequence[_Candidate], snippets: Sequence[Snippet], max_chars: int) -> Generation:
        if not chosen:
            return Generation(text=IDK_TEXT, citations=(), declined=True, model=self.model)
        parts: list[str] = []
        citations: list[Citation] = []
        length = 0
        for cand in chosen:
            if parts:
                sep = "" if _NO_SPACE_AFTER.search(parts[-1]) else " "
                parts.append(sep)
                length += len(sep)
            sentence = _cut(cand.text, max_chars)
            snippet = snippets[cand.snippet]
            citations.append(
                Citation(
                    title=snippet.title,
                    text=cand.text,
                    body=snippet.text,
                    search_result_index=snippet.result_index,
                    ranges=((length, length + len(sentence)),),
                )
            )
            parts.append(sentence)
            length += len(sentence)
        return Generation(text="".join(parts), citations=tuple(citations), declined=False, model=self.model)

    def generate(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> Generation:
        chosen = self._select(query, snippets, response_length)
        return self._compose(chosen, snippets, self.lengths[response_length].max_chars)

    def stream(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> GenerationStream:
        generation = self.generate(query, snippets, response_length)

        def deltas() -> Iterator[str]:
            cursor = 0
            for citation in generation.citations:
                end = citation.ranges[0][1]
                yield generation.text[cursor:end]
                cursor = end
            if cursor < len(generation.text):
                yield generation.text[cursor:]

        return GenerationStream(deltas(), lambda _text: generation)


def _near_duplicate(a: _Candidate, b: _Candidate) -> bool:
    if not a.terms or not b.terms:
        return a.text.strip().casefold() == b.text.strip().casefold()
    overlap = len(a.terms & b.terms) / len(a.terms | b.terms)
    return overlap >= 0.8
