"""Helpers every generator shares (the protocol and result types live in :mod:`assistant_bridge.core.generation`
and are re-exported here for the implementations).
"""

from __future__ import annotations

import re
import unicodedata

from assistant_bridge.core.generation import (
    IDK_TEXT,
    RESPONSE_LENGTHS,
    Generation,
    GenerationStream,
    Generator,
    ResponseLength,
    validate_response_length,
)
from assistant_bridge.text import CJK_CHARS

__all__ = [
    "IDK_TEXT",
    "RESPONSE_LENGTHS",
    "Generation",
    "GenerationStream",
    "Generator",
    "ResponseLength",
    "approx_tokens",
    "is_declined",
    "validate_response_length",
]

_WORDISH = re.compile(rf"[{CJK_CHARS}]|[^\W_{CJK_CHARS}]+|[^\w\s]")


def approx_tokens(text: str) -> int:
    """Estimate the number of subword tokens of ``text`` without a tokenizer.

    Each CJK character and each punctuation mark counts 1; any other word counts 1 per started 6
    characters (BPE vocabularies keep common words whole and split long ones). On English prose this lands
    within about 10 % of GPT-style tokenizers; accented Latin-script languages tokenise less efficiently and
    may be underestimated by up to about 25 %, which the completion reserve absorbs. The loop uses it only
    to decide when to drop snippets.
    """
    total = 0
    for token in _WORDISH.findall(text):
        total += 1 + (len(token) - 1) // 6
    return total


_IDK_PATTERNS = (
    "i don't know",
    "i do not know",
    "i dont know",
    "je ne sais pas",
    "わかりません",
    "分かりません",
    "no lo sé",
    "ich weiß es nicht",
)


def is_declined(text: str) -> bool:
    """True when ``text`` is an "I don't know" answer: empty, or opening with a standard IDK phrase."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'").strip().lstrip("\"'*_ ")
    if not folded:
        return True
    return any(folded.startswith(p) for p in _IDK_PATTERNS)
