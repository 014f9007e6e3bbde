"""Text normalisation shared by indexing and querying.

:func:`lexical_form` is the one analysed form of text fed to every BM25 index (Milvus Lite's ``standard``
analyzer cannot split Japanese, so CJK runs are pre-split into overlapping character bigrams, the Lucene
``CJKAnalyzer`` approach). The same function must be applied to documents *and* queries, or lexical
search silently misses.

:func:`normalize_for_dedup` is the key used to drop duplicate snippets.
"""

from __future__ import annotations

import re
import unicodedata

from assistant_bridge.text import HAN, ITERATION_MARKS, KANA, unwrap_unspaced

# Han (incl. extension A and compatibility ideographs), Hiragana, Katakana (incl. the prolonged sound
# mark and phonetic extensions). Half-width Katakana needs no range: NFKC widens it first.
_CJK_RUN = re.compile(rf"[{ITERATION_MARKS}{KANA}{HAN}]+")
_SPACE = re.compile(r"\s+")


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def indexed_text(title: str | None, text: str) -> str:
    """What a lexical index reads of a chunk, before :func:`lexical_form`: its title, then its text, a blank line
    between them (a title that ends in Japanese and a text that starts in it are two runs, not one)."""
    return f"{title or ''}\n\n{text}"


def lexical_form(text: str) -> str:
    """Return the form of ``text`` to index and to query with BM25.

    NFKC, lower case, and each run of Han/Hiragana/Katakana rewritten as overlapping character bigrams
    joined by spaces (a lone CJK character stays a unigram); a run wrapped over a line break is one run.
    Non-CJK text keeps its characters and spacing; a space is inserted where a CJK run touches other text
    so that tokens do not merge.

    >>> lexical_form("経費精算")
    '経費 費精 精算'
    >>> lexical_form("経費精\\n算")
    '経費 費精 精算'
    >>> lexical_form("VPNの設定")
    'vpn の設 設定'
    """
    # a Japanese paragraph of a Markdown or text file wrapped at a fixed width is one run of characters
    normalized = unwrap_unspaced(unicodedata.normalize("NFKC", text).lower())
    parts: list[str] = []
    last = 0
    for match in _CJK_RUN.finditer(normalized):
        start, end = match.span()
        parts.append(normalized[last:start])
        if start > 0 and not normalized[start - 1].isspace():
            parts.append(" ")
        parts.append(_bigrams(match.group()))
        if end < len(normalized) and not normalized[end].isspace():
            parts.append(" ")
        last = end
    parts.append(normalized[last:])
    return "".join(parts)


def _is_edge_junk(char: str) -> bool:
    category = unicodedata.category(char)
    return char.isspace() or category.startswith("P") or category.startswith("S")


def normalize_for_dedup(text: str) -> str:
    """Return a key under which near-identical snippets collide.

    NFKC, case-folded, whitespace runs collapsed to one space, and punctuation, symbols and spaces
    stripped from both ends (snippets often differ only by a trailing ``…`` or quote).
    """
    folded = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    start = 0
    end = len(folded)
    while start < end and _is_edge_junk(folded[start]):
        start += 1
    while end > start and _is_edge_junk(folded[end - 1]):
        end -= 1
    return folded[start:end]
