"""HAP (hate, abuse, profanity) detection on questions and answers, with per-assistant thresholds.

:class:`WordListScorer` scores a text in [0, 1] from the multilingual word lists of :mod:`.lexicon`:

* Latin scripts (English, French): NFKC, case folding and accents removed; words are matched whole, so
  "Scunthorpe" or "assessment" never match. Obfuscation is undone before matching: leetspeak inside a
  word (``sh1t``, ``@ss``, ``$hit``), separators inside a word (``f.u.c.k``, ``f-u-c-k``), spaced letters
  (``f u c k``), masked letters (``f*ck``, ``sh!t``) and repeated letters (``fuuuuck``);
* Japanese: substring matching on NFKC text with hiragana folded to katakana (``ばか`` = ``バカ``);
* each match contributes its severity weight; an insult aimed at "you" (``you idiot``, ``お前バカ``) counts at
  least 0.75; a group name near a dehumanising term counts 0.85 as hate; the score combines the matches
  as independent evidence, ``1 - prod(1 - w)``, so two mild words score more than one.

Limits, stated plainly: no understanding of context (quoting, negation, reclaimed use, a news report
about an insult all score like the insult itself); ambiguous words (``dick`` as a name, ``chink`` in "a
chink in the armour") are weighted low but can still add up; misspellings beyond the obfuscations above,
other languages and implicit hate without listed words are missed. It is a tripwire for the obvious cases,
not a moderation model.

:class:`HapCheck` applies an assistant's ``hap_filtering {input, output}`` settings (like watsonx
Orchestrate's) and returns a :class:`HapVerdict` for ``output.debug``; it never logs the text or the words
matched.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.safety import lexicon as lx
from assistant_bridge.text import HAN, KANA, without_accents

DEFAULT_THRESHOLD = 0.5
DIRECTED_WEIGHT = 0.75
GROUP_HATE_WEIGHT = 0.85
_WINDOW = 4  # words between "you" and an insult, or a group and a dehumanising term

_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "8": "b",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "i",
        "€": "e",
        "+": "t",
    }
)
_INNER_SEP = re.compile(r"(?<=[a-z])[.\-_·'](?=[a-z])")
_EDGE = re.compile(r"^[^\w@$!|*€+]+|[^\w*$!@]+$")
_RUN3 = re.compile(r"(.)\1{2,}")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]")


class HapScorer(Protocol):
    """Scores a text for hate, abuse and profanity; 0 is clean, 1 is certainly offensive."""

    name: str

    def score(self, text: str) -> HapScore: ...


@dataclass(frozen=True)
class HapScore:
    score: float
    categories: tuple[str, ...] = ()
    matches: int = 0


def _fold_latin(text: str) -> str:
    return without_accents(unicodedata.normalize("NFKC", text).casefold()).replace("’", "'")


def _variants(token: str) -> set[str]:
    """The forms a (possibly obfuscated) word may stand for."""
    base = _EDGE.sub("", token)
    if not base:
        return set()
    out = {base, base.rstrip("!") or base}
    for form in list(out):
        if any(c.isalpha() for c in form) and any(c in "0134578@$!|€+" for c in form):
            out.add(form.translate(_LEET))
    for form in list(out):
        out.add(_INNER_SEP.sub("", form))
    for form in list(out):
        if _RUN3.search(form):
            out.add(_RUN3.sub(r"\1", form))
            out.add(_RUN3.sub(r"\1\1", form))
    return {f for f in out if f}


def latin_words(text: str) -> list[set[str]]:
    """Each word of ``text`` as the set of its de-obfuscated forms; runs of three or more single letters
    (``f u c k``) are joined into one word."""
    raw = _fold_latin(text).split()
    joined: list[str] = []
    letters: list[str] = []
    for tok in raw:
        stripped = _EDGE.sub("", tok)
        if len(stripped) == 1 and (stripped.isalpha() or stripped in "@$!*"):
            letters.append(stripped)
            continue
        if letters:
            joined.extend(["".join(letters)] if len(letters) >= 3 else letters)
            letters = []
        joined.append(tok)
    if letters:
        joined.extend(["".join(letters)] if len(letters) >= 3 else letters)
    return [v for v in (_variants(t) for t in joined) if v]


@dataclass(frozen=True)
class _Pattern:
    words: tuple[str, ...]
    prefix: bool
    weight: float
    category: str


def _compile_latin(entries: Sequence[lx.Entry]) -> tuple[dict[str, list[_Pattern]], list[_Pattern]]:
    exact: dict[str, list[_Pattern]] = {}
    prefixes: list[_Pattern] = []
    for text, weight, category in entries:
        prefix = text.endswith("*")
        words = tuple(_fold_latin(text.rstrip("*")).split())
        p = _Pattern(words, prefix, weight, category)
        if prefix:
            prefixes.append(p)
        else:
            exact.setdefault(words[0], []).append(p)
    return exact, prefixes


def _masked(form: str, word: str, prefix: bool) -> bool:
    """``f*ck`` or ``sh!t`` (a ``*`` or ``!`` standing for one letter) against ``word``."""
    if "*" not in form:
        return False
    if not prefix and len(form) != len(word):
        return False
    if len(form) < len(word):
        return False
    return all(f == w or f == "*" for f, w in zip(form, word, strict=False)) and form[0] != "*"


def _to_katakana(text: str) -> str:
    return "".join(chr(ord(c) + 0x60) if "\u3041" <= c <= "\u3096" else c for c in text)


class WordListScorer:
    """The embedded multilingual scorer (no model; see the module docstring for what it can and cannot do)."""

    name = "wordlist"

    def __init__(self, latin: Sequence[lx.Entry] = lx.LATIN, japanese: Sequence[lx.Entry] = lx.JAPANESE) -> None:
        self._exact, self._prefixes = _compile_latin(latin)
        self._ja = [
            (_to_katakana(unicodedata.normalize("NFKC", t.removesuffix("!K"))), t.endswith("!K"), w, c)
            for t, w, c in japanese
        ]
        self._ja_benign = tuple(_to_katakana(unicodedata.normalize("NFKC", b)) for b in lx.BENIGN_JA)
        self._ja_you = tuple(_to_katakana(s) for s in lx.SECOND_PERSON_JA)
        self._ja_groups = tuple(_to_katakana(s) for s in lx.GROUPS_JA)
        self._ja_dehuman = tuple(_to_katakana(s) for s in lx.DEHUMANISING_JA)

    def score(self, text: str) -> HapScore:
        hits: list[tuple[float, str]] = []
        if text:
            hits.extend(self._latin(text))
            hits.extend(self._japanese(text))
        remaining = 1.0
        for weight, _ in hits:
            remaining *= 1.0 - min(1.0, max(0.0, weight))
        return HapScore(round(1.0 - remaining, 4), tuple(sorted({c for _, c in hits})), len(hits))

    def _latin(self, text: str) -> list[tuple[float, str]]:
        words = latin_words(text)
        hits: list[tuple[float, str]] = []
        flat = [min(w, key=len) for w in words]
        skip_to = 0
        for i, forms in enumerate(words):
            if i < skip_to:
                continue  # inside a phrase already counted
            best: _Pattern | None = None
            for form in forms:
                for p in self._exact.get(form, ()):
                    if self._phrase_at(words, i, p) and (best is None or p.weight > best.weight):
                        best = p
                for p in self._prefixes:
                    head = p.words[0]
                    if (form.startswith(head) or _masked(form, head, True)) and self._phrase_at(words, i, p):
                        if best is None or p.weight > best.weight:
                            best = p
                if "*" in form:
                    for p in (q for ps in self._exact.values() for q in ps if len(q.words) == 1):
                        if _masked(form, p.words[0], False) and (best is None or p.weight > best.weight):
                            best = p
            if best is None:
                continue
            weight = best.weight
            if best.category == "abuse" and any(f in lx.SECOND_PERSON for f in flat[max(0, i - _WINDOW) : i]):
                weight = max(weight, DIRECTED_WEIGHT)
            hits.append((weight, best.category))
            skip_to = i + len(best.words)
        for i, forms in enumerate(words):
            if forms & lx.GROUPS and any(w & lx.DEHUMANISING for w in words[max(0, i - _WINDOW) : i + _WINDOW + 1]):
                hits.append((GROUP_HATE_WEIGHT, "hate"))
        return hits

    @staticmethod
    def _phrase_at(words: list[set[str]], i: int, p: _Pattern) -> bool:
        if len(p.words) == 1:
            return True
        if i + len(p.words) > len(words):
            return False
        return all(p.words[k] in words[i + k] for k in range(1, len(p.words)))

    def _japanese(self, text: str) -> list[tuple[float, str]]:
        if not re.search(f"[{KANA}{HAN}]", text):
            return []
        original = unicodedata.normalize("NFKC", text)
        norm = _to_katakana(original)  # same length: one character for one
        for benign in self._ja_benign:
            norm = norm.replace(benign, "・" * len(benign))
        hits: list[tuple[float, str]] = []
        for needle, whole_word, weight, category in self._ja:
            for m in re.finditer(re.escape(needle), norm):
                if whole_word and (
                    _KATAKANA.match(original, m.end()) or (m.start() > 0 and _KATAKANA.match(original, m.start() - 1))
                ):
                    continue  # the end or the start of a longer katakana word: カスタマー, フォーカス
                before = norm[max(0, m.start() - 8) : m.start()]
                if category == "abuse" and any(y in before for y in self._ja_you):
                    weight = max(weight, DIRECTED_WEIGHT)
                hits.append((weight, category))
        for sentence in re.split(r"[。！？!?\n]", norm):
            if any(g in sentence for g in self._ja_groups) and any(d in sentence for d in self._ja_dehuman):
                hits.append((GROUP_HATE_WEIGHT, "hate"))
        return hits


class FakeHapScorer:
    """Scores 1.0 when the text contains one of ``flagged`` (case-insensitive), else 0.0; records texts."""

    name = "fake"

    def __init__(self, *flagged: str, score: float = 1.0) -> None:
        self.flagged = tuple(f.lower() for f in flagged)
        self.value = score
        self.texts: list[str] = []

    def score(self, text: str) -> HapScore:
        self.texts.append(text)
        hit = any(f in text.lower() for f in self.flagged)
        return HapScore(self.value if hit else 0.0, ("abuse",) if hit else (), int(hit))


# --- settings and the check ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class HapStage:
    enabled: bool = False
    threshold: float = DEFAULT_THRESHOLD


@dataclass(frozen=True)
class HapSettings:
    """``hap_filtering``: the question is checked when ``input.enabled`` (off by default), the answer when
    ``output.enabled`` (on by default); a score at or above the stage's threshold is a hit."""

    input: HapStage = field(default_factory=lambda: HapStage(False, DEFAULT_THRESHOLD))
    output: HapStage = field(default_factory=lambda: HapStage(True, DEFAULT_THRESHOLD))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None, where: str = "hap_filtering") -> HapSettings:
        """:raises ConfigurationError: a threshold outside [0, 1] (0 would block every text)."""
        data = data or {}
        default = cls()
        stages = {}
        for name in ("input", "output"):
            raw = data.get(name) or {}
            base: HapStage = getattr(default, name)
            threshold = float(raw.get("threshold", base.threshold))
            if not 0.0 < threshold <= 1.0:
                raise ConfigurationError(f"{where}.{name}.threshold must be greater than 0 and at most 1")
            stages[name] = HapStage(bool(raw.get("enabled", base.enabled)), threshold)
        return cls(**stages)


@dataclass(frozen=True)
class HapVerdict:
    stage: str
    enabled: bool
    threshold: float
    score: float | None = None
    detected: bool = False
    categories: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "score": self.score,
            "threshold": self.threshold,
            "detected": self.detected,
            "categories": list(self.categories),
        }


class HapCheck:
    """An assistant's HAP settings with the scorer that applies them."""

    def __init__(self, settings: HapSettings, scorer: HapScorer) -> None:
        self.settings = settings
        self.scorer = scorer

    def check(self, stage: str, text: str, threshold: float | None = None) -> HapVerdict:
        """:param stage: ``input`` (the question) or ``output`` (the answer).
        :param threshold: a per-request override of the stage's threshold."""
        cfg: HapStage = getattr(self.settings, stage)
        limit = cfg.threshold if threshold is None else threshold
        if not cfg.enabled:
            return HapVerdict(stage, False, limit)
        result = self.scorer.score(text)
        return HapVerdict(
            stage, True, limit, result.score, result.score >= limit and result.score > 0, result.categories
        )


_shared: WordListScorer | None = None


def shared_scorer() -> WordListScorer:
    """One word-list scorer per process (building it compiles the lists once)."""
    global _shared
    if _shared is None:
        _shared = WordListScorer()
    return _shared
