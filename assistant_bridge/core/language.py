"""A cheap language guess for the three languages the product ships for: ``en``, ``fr`` and ``ja``.

The guess only labels documents and chunks (``metadata.languages``) and picks per-language defaults; it
never drops text. Rules, in order:

1. ``ja`` when Japanese characters (Hiragana, Katakana, Han) make up at least 30 % of the letters.
2. ``fr`` when French stopwords and accented letters outweigh English stopwords.
3. ``en`` otherwise, including for empty or symbol-only text.

Known limits: Chinese or Korean-with-Hanja text is labelled ``ja``; Spanish, Italian and Portuguese often
come out ``fr`` or ``en``; a short mixed-language text is labelled by whichever stopwords it happens to hold.
Only the first :data:`SAMPLE_CHARS` characters are looked at.
"""

from __future__ import annotations

import re

from assistant_bridge.text import JAPANESE_CHARS

SAMPLE_CHARS = 20_000
JA_RATIO = 0.3

_JA_CHAR = re.compile(f"[{JAPANESE_CHARS}]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_WORD = re.compile(r"[a-zà-öø-ÿœæ]+(?:['’][a-zà-öø-ÿœæ]+)?")
_FR_ACCENTS = frozenset("éèêëàâîïôûùüçœ")

_FR_STOPWORDS = frozenset(
    """le la les un une des du de et est sont pour dans par sur avec au aux ce cette ces qui que
    quoi dont où ne pas plus vous nous votre vos notre nos leur leurs il elle ils elles se sa son ses
    être avoir été fait doit peut entre sans sous chez aussi mais ou donc car si tout tous toute
    toutes d l qu n s c j m après avant lors jusqu selon afin
    je tu me te moi toi lui en y mon ma mes ton ta tes celui celle ceux comment quand quel quelle quels
    quelles pourquoi combien faire ai avez êtes suis sommes ont merci beaucoup bonjour bonsoir salut revoir
    oui""".split()
)
_EN_STOPWORDS = frozenset(
    """the and of to is are for in on with you your we our this that these those be been was were
    it its as by or not an at from have has will can must should which who what when if all any
    into than then them they their there do does after before about""".split()
)

STOPWORDS = _FR_STOPWORDS | _EN_STOPWORDS  # words that say nothing about what a text is about, French and English


def detect_language(text: str) -> str:
    """Return ``"ja"``, ``"fr"`` or ``"en"`` for ``text`` (see the module docstring for the rules)."""
    sample = text[:SAMPLE_CHARS]
    letters = len(_LETTER.findall(sample))
    if letters == 0:
        return "en"
    if len(_JA_CHAR.findall(sample)) / letters >= JA_RATIO:
        return "ja"
    lowered = sample.lower()
    fr_score = 0.0
    en_score = 0.0
    for word in _WORD.findall(lowered):
        head = re.split(r"['’]", word, maxsplit=1)[0]
        if word in _FR_STOPWORDS or (head != word and head in _FR_STOPWORDS):
            fr_score += 1
        if word in _EN_STOPWORDS:
            en_score += 1
    # Accented letters are strong evidence for French among en/fr, but one café must not flip an
    # English text, hence the half weight.
    fr_score += 0.5 * sum(1 for char in lowered if char in _FR_ACCENTS)
    return "fr" if fr_score > en_score else "en"
