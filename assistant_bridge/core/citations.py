"""Citations, sentence spans and the extractiveness score of a generated answer.

Invariants:

* Every citation range is a ``(start, end)`` pair of character offsets into the **answer text** as it is
  returned to the client (markers already removed), ``0 <= start < end <= len(answer)``, with ``end``
  **exclusive** (Python slice convention, as Bedrock's ``endIndex``): ``answer[start:end]`` is the cited
  span. IBM documents ``ranges`` without saying whether ``end`` is inclusive (OQ-8); exclusive is chosen
  because it composes with slicing and with JavaScript's ``substring``.
* :func:`strip_markers` is the one definition of how ``[n]`` markers are removed; the streaming
  :class:`MarkerStripper` produces exactly the same text, delta by delta.
* Tokenisation is CJK-aware: a Han/Kana/Hangul character is one token, any other run of letters or digits
  is one token, everything is NFKC-normalised and case-folded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from assistant_bridge.core.snippets import Snippet
from assistant_bridge.text import CJK_CHARS, sentence_spans

_TOKEN = re.compile(rf"[{CJK_CHARS}]|[^\W_{CJK_CHARS}]+")
_MIN_NGRAM = 3


@dataclass(frozen=True)
class Citation:
    """One cited span of the answer and the search result that supports it.

    :param title: title of the cited result.
    :param text: the supporting text (the exact source sentence for extractive answers, the snippet for LLM
        answers).
    :param body: the body of the cited search result.
    :param search_result_index: 0-based index into the turn's full ``search_results`` list.
    :param ranges: ``(start, end)`` offsets into the answer, end exclusive.
    """

    title: str
    text: str
    body: str
    search_result_index: int
    ranges: tuple[tuple[int, int], ...]

    def to_json(self) -> dict[str, Any]:
        """The watsonx ``ResponseGenericCitation`` shape."""
        return {
            "title": self.title,
            "text": self.text,
            "body": self.body,
            "search_result_index": self.search_result_index,
            "ranges": [{"start": start, "end": end} for start, end in self.ranges],
        }


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens; each CJK character is a token of its own."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def _ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def extractiveness(answer: str, sources: Iterable[str]) -> float:
    """Share of the answer's word tokens that lie inside a word sequence found in one of the sources.

    IBM defines extractiveness as "the fraction of the response that consists of sequences of words that are
    in the search results". Here a sequence means at least three consecutive tokens (any longer matching
    sequence is a chain of matching 3-grams, so 3-grams suffice); an answer shorter than three tokens counts
    as extractive only if it occurs whole in a source. Sequences never span two sources.

    :returns: a number in ``[0, 1]``; ``0.0`` for an answer without tokens.
    """
    tokens = word_tokens(answer)
    if not tokens:
        return 0.0
    source_tokens = [word_tokens(s) for s in sources]
    if len(tokens) < _MIN_NGRAM:
        whole = tuple(tokens)
        return 1.0 if any(whole in _ngrams(st, len(whole)) for st in source_tokens) else 0.0
    grams: set[tuple[str, ...]] = set()
    for st in source_tokens:
        grams |= _ngrams(st, _MIN_NGRAM)
    covered = [False] * len(tokens)
    for i in range(len(tokens) - _MIN_NGRAM + 1):
        if tuple(tokens[i : i + _MIN_NGRAM]) in grams:
            for j in range(i, i + _MIN_NGRAM):
                covered[j] = True
    return sum(covered) / len(tokens)


# --- [n] markers --------------------------------------------------------------------------------------------

_HSPACE = " \t\u00a0\u3000"
_MARKER_BODY = r"\[\s*\d{1,3}(?:\s*[,;\-–]\s*\d{1,3})*\s*\]"
_MARKER = re.compile(rf"[{_HSPACE}]*({_MARKER_BODY})")
_MARKER_FULL = re.compile(_MARKER_BODY)
_MARKER_PREFIX = re.compile(r"\[[\d\s,;\-–]*")
_MAX_MARKER_CHARS = 40


def _marker_numbers(marker: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", marker.strip("[] \t")):
        if not part:
            continue
        bounds = re.split(r"\s*[\-–]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 20:
                numbers.extend(range(low, high + 1))
                continue
        numbers.extend(int(b) for b in bounds if b.isdigit())
    return numbers


def strip_markers(text: str) -> tuple[str, list[tuple[int, list[int]]]]:
    """Remove ``[1]``, ``[2][3]``, ``[1, 2]``, ``[1-3]`` markers and the spaces before them.

    :returns: the cleaned text (also stripped of surrounding whitespace) and, for each marker, its offset
        in the cleaned text and the 1-based numbers it holds.
    """
    pieces: list[str] = []
    markers: list[tuple[int, list[int]]] = []
    length = 0
    cursor = 0
    for match in _MARKER.finditer(text):
        piece = text[cursor : match.start()]
        pieces.append(piece)
        length += len(piece)
        markers.append((length, _marker_numbers(match.group(1))))
        cursor = match.end()
    pieces.append(text[cursor:])
    joined = "".join(pieces)
    lead = len(joined) - len(joined.lstrip())
    cleaned = joined.strip()
    return cleaned, [(min(max(0, pos - lead), len(cleaned)), nums) for pos, nums in markers]


class MarkerStripper:
    """Incremental :func:`strip_markers` for streamed text: ``feed`` deltas, then ``flush``.

    The concatenation of everything returned equals ``strip_markers(full_text)[0]``. It holds back only
    trailing whitespace and a possible unfinished marker (at most a few dozen characters).
    """

    def __init__(self) -> None:
        self._pending = ""
        self._started = False

    def feed(self, delta: str) -> str:
        self._pending += delta
        return self._drain(final=False)

    def flush(self) -> str:
        return self._drain(final=True)

    def _drain(self, final: bool) -> str:
        out: list[str] = []
        text = self._pending
        i = 0
        held: int | None = None  # start of a whitespace run not yet emitted
        while i < len(text):
            char = text[i]
            if char == "[":
                match = _MARKER_FULL.match(text, i)
                if match:
                    # drop the marker and the horizontal spaces right before it (all still held)
                    low = i if held is None else held
                    cut = i
                    while cut > low and text[cut - 1] in _HSPACE:
                        cut -= 1
                    text = text[:cut] + text[match.end() :]
                    if held == cut:
                        held = None
                    i = cut
                    continue
                if not final and len(text) - i <= _MAX_MARKER_CHARS and _MARKER_PREFIX.fullmatch(text, i):
                    break  # maybe a marker: wait for the next delta
            if char.isspace():
                if held is None:
                    held = i
                i += 1
                continue
            if held is not None:
                if self._started:
                    out.append(text[held:i])
                held = None
            out.append(char)
            self._started = True
            i += 1
        self._pending = "" if final else text[held if held is not None else i :]
        return "".join(out)


def _citations_for(
    cleaned: str, markers: Sequence[tuple[int, list[int]]], snippets: Sequence[Snippet]
) -> tuple[Citation, ...]:
    spans = sentence_spans(cleaned)
    if not spans:
        return ()
    found: dict[tuple[tuple[int, int], int], None] = {}
    for pos, numbers in markers:
        span = spans[0]
        for candidate in spans:
            if candidate[0] < pos:
                span = candidate
            else:
                break
        for number in numbers:
            if 1 <= number <= len(snippets):
                found.setdefault((span, number - 1), None)
    citations = [
        Citation(
            title=snippets[k].title,
            text=snippets[k].text,
            body=snippets[k].text,
            search_result_index=snippets[k].result_index,
            ranges=(span,),
        )
        for span, k in found
    ]
    citations.sort(key=lambda c: (c.ranges[0], c.search_result_index))
    return tuple(citations)


def citations_from_markers(answer_with_markers: str, snippets: Sequence[Snippet]) -> tuple[str, tuple[Citation, ...]]:
    """Parse the ``[n]`` markers an LLM put in its answer (``n`` = 1-based snippet number).

    Markers are removed from the text (see :func:`strip_markers`). Each marker cites the sentence it sits
    in, or the sentence it directly follows (``"Paris is big.[1]"``). One citation is made per cited
    (sentence, snippet) pair; numbers outside ``1..len(snippets)`` are dropped. ``body`` is the snippet
    text here; the loop replaces it with the full result body.

    :returns: the cleaned answer and its citations sorted by position.
    """
    cleaned, markers = strip_markers(answer_with_markers)
    return cleaned, _citations_for(cleaned, markers, snippets)
