"""Question analysis for the embedded planner: no model, plain text rules.

* :func:`analyze` classifies a question as a **comparison** (two or more named things compared: "Which
  magazine was started first, Arthur's Magazine or First for Women?"), a **conjunction** (two questions in
  one: "Who wrote X and who directed Y?") or a **single** question, and lists its named entities, its focus
  terms and whether it reads like a bridge question (a nested description: "the manager *who* recruited
  David Beckham").
* :func:`named_spans` finds capitalised spans and quoted titles; :func:`bridge_candidates` picks, from the
  passages found so far, the names the question does not mention (the bridge to the next hop).

The rules target English and the Latin-script languages closest to it (connectors such as "de", "la", "du"
are kept inside names); other scripts fall back to a single question and still benefit from the iterative
loop. Invariant: every function is deterministic and never raises on any string.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assistant_bridge.text import split_sentences

Kind = Literal["comparison", "conjunction", "single"]

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each either few first for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just last least less like made many
me more most much my myself neither no nor not now of off on once one only or other our ours out over own same
she should so some such than that the their theirs them themselves then there these they this those through to
too under until up upon very was we were what whats when where which while who whom whose why will with would
you your yours yourself named called known based located year years time name type kind best well also
le la les un une des du de et ou est sont qui que quoi quel quelle dans pour par sur avec
""".split()
)
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could "
    "has have had will would should in on at during since according".split()
)
_CONNECTORS = frozenset("of the for de la le du des von van der den di da del y al bin".split())
_IMPERATIVES = frozenset(
    "summarize summarise explain describe list give tell show find compare please name define "
    "according provide write".split()
)
_NOT_NAMES = frozenset(
    """
i a an the this that these those it he she they we you his her its their our my your which what who whom whose
when where why how is are was were do does did in on at of for by from with as and or but not also after before
during since until while january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
""".split()
)
_DEMONYMS = frozenset(
    """
american british english french german italian spanish japanese chinese korean indian russian soviet canadian
australian mexican brazilian irish scottish welsh dutch swedish norwegian danish finnish polish greek turkish
egyptian israeli iranian iraqi pakistani african european asian latin arab arabic jewish christian catholic
muslim hindu buddhist swiss austrian belgian portuguese argentine argentinian chilean colombian cuban filipino
indonesian thai vietnamese malaysian nigerian kenyan scandinavian western eastern northern southern north south
east west central new old great
""".split()
)
_ROLES = frozenset(
    """
king queen prince princess emperor empress pope bishop saint st sir lord lady dame senator president ceo chairman
colonel major general captain lieutenant admiral sergeant chamberlain director minister governor mayor chancellor
premier duke duchess count earl baron dr mr mrs ms professor nationality born
""".split()
)
_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
_PREPOSITIONS = frozenset("in on since by from until till before after during of at".split())
_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,120})[\"“”«»]")
_TOKEN = re.compile(r"[^\W_]+(?:['’.&\-][^\W_]+)*\.?|&", re.UNICODE)
_BRIDGE_CUE = re.compile(
    r"\S\s+(?:who|whom|whose|which|that|where|when|whereby)\s|\s(?:by|of|in|for|from)\s+(?:a|an|the)\s+\w+"
    r"\s+(?:who|which|that)\b|'s\s|\b(?:this|these)\s+\w+",
    re.IGNORECASE,
)
_OF_CUE = re.compile(r"\b[Tt]he\s+(?:[a-z\-]+\s+){1,3}of\s+(?:the\s+)?[A-Z0-9\"“]")
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:\?|;)\s+|,?\s+and\s+(?=(?:who|what|which|when|where|why|how|is|are|was|were|did|does|do)\b)",
    re.IGNORECASE,
)
_COMPARATIVE = re.compile(
    r"\b(?:same|both|either|neither|first|earlier|later|older|younger|larger|smaller|bigger|longer|shorter|"
    r"higher|lower|more|less|fewer|further|closer|before|after|common|similar|different|\w+er\s+than)\b",
    re.IGNORECASE,
)
_SUMMARY = re.compile(
    r"\b(?:summari[sz]e|summary|summarise|overview|outline of|tl;?dr|whole (?:document|file|text|page)|"
    r"entire (?:document|file|text|page)|full (?:document|text)|résum(?:é|er)|zusammenfass\w*)\b|要約|まとめ",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Span:
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class QuestionAnalysis:
    """What the embedded planner knows about a question.

    :param kind: comparison, conjunction or single.
    :param entities: the compared things (comparison), otherwise every named span of the question.
    :param clauses: the sub-questions of a conjunction (empty otherwise).
    :param focus: content words of the question that are not part of an entity (what is asked about them).
    :param bridge_cue: the question describes something instead of naming it ("the man who ...").
    :param summary: the question asks for a summary or a whole document.
    """

    kind: Kind
    entities: tuple[str, ...]
    clauses: tuple[str, ...]
    focus: tuple[str, ...]
    bridge_cue: bool
    summary: bool


def fold(text: str) -> str:
    """NFKC, case-folded, apostrophes unified, whitespace collapsed: the key names are compared under."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return " ".join(text.split())


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def content_words(text: str) -> list[str]:
    """Words that carry meaning: not stopwords, not one-letter, in order, without repeats."""
    out: list[str] = []
    for w in words(text):
        if len(w) > 1 and w not in STOPWORDS and w not in out:
            out.append(w)
    return out


def stem(word: str) -> str:
    """A crude, language-light stem: common English endings cut, then the first six characters."""
    w = word.casefold()
    if len(w) > 4:
        w = _SUFFIX.sub("", w)
    return w[:6]


def junk_name(name: str) -> bool:
    """Spans that are not worth a search of their own: dates, numbers, lone nationalities ("British",
    "South Korean"), and spans made only of common words."""
    ws = words(name)
    if not ws or not any(ch.isalpha() for ch in name):
        return True
    if any(w in _MONTHS for w in ws):
        return True
    if all(w in _DEMONYMS or w in STOPWORDS or w.isdigit() for w in ws):
        return True
    return len(ws) == 1 and (len(ws[0]) < 3 or ws[0] in _ROLES)


def _is_cap(tok: str) -> bool:
    return tok[:1].isupper() or tok[:1].isdigit()


def named_spans(text: str, *, skip_first: bool = True) -> list[Span]:
    """Capitalised spans ("First for Women", "Arthur's Magazine", "2014 S/S") and quoted titles.

    Lower-case connectors ("of", "de", "for", "the") may join capitalised words; a span never starts or
    ends with one. A capitalised sentence opener that is a common word ("Which", "The") is skipped.
    """
    spans: list[Span] = [Span(m.group(1).strip(), m.start(1), m.end(1)) for m in _QUOTED.finditer(text)]
    toks = list(_TOKEN.finditer(text))
    i = 0
    while i < len(toks):
        tok = toks[i].group()
        if not _is_cap(tok):
            i += 1
            continue
        sentence_start = i == 0 or bool(re.search(r"[.?!:;]\s*$", text[toks[i - 1].end() : toks[i].start() + 1]))
        common = tok.casefold() in _NOT_NAMES | QUESTION_WORDS | STOPWORDS | _IMPERATIVES
        next_cap = (
            i + 1 < len(toks) and _is_cap(toks[i + 1].group()) and not text[toks[i].end() : toks[i + 1].start()].strip()
        )
        lone_opener = sentence_start and skip_first and not next_cap and not tok[:1].isdigit()
        if lone_opener or (common and ((sentence_start and skip_first) or not next_cap)):
            i += 1
            continue
        j = i + 1
        last = i
        while j < len(toks):
            gap = text[toks[j - 1].end() : toks[j].start()]
            if gap.strip() not in ("", "-", "/", ":") or "\n" in gap:
                break
            t = toks[j].group()
            after_connector = toks[j - 1].group().casefold() in _CONNECTORS and j - 1 > last
            if (t[:1].isupper() or (t[:1].isdigit() and not after_connector)) or t == "&":
                last = j
            elif t.casefold() not in _CONNECTORS:
                break
            j += 1
        first = i
        prev = toks[i - 1].group().casefold() if i > 0 else ""
        if tok.isdigit() and last > i and prev in _PREPOSITIONS:
            first = i + 1  # "In 1991 Euromarché": the year is not part of the name
        start, end = toks[first].start(), toks[last].end()
        value = text[start:end].rstrip(".")
        if len(value) > 1 and any(ch.isalpha() for ch in value):
            spans.append(Span(value, start, start + len(value)))
        i = last + 1
    spans.sort(key=lambda s: s.start)
    out: list[Span] = []
    for s in spans:  # drop spans inside a longer one (a quoted title containing capitalised words)
        if any(o.start <= s.start and s.end <= o.end and o != s for o in spans):
            continue
        if all(fold(s.text) != fold(o.text) for o in out):
            out.append(s)
    return out


_JOINT = re.compile(r"[\"'”»]?\s*(?:,\s*)?(?:(or|and|y|et|ou|und|oder)\s+)?(?:the\s+)?[\"'“«]?")


def _or_chain(question: str, spans: list[Span]) -> list[str]:
    """Names listed with commas and a final "or": "A, B or C"."""
    chain: list[Span] = []
    has_or = False
    for a, b in zip(spans, spans[1:], strict=False):
        m = _JOINT.fullmatch(question[a.end : b.start])
        if m and (m.group(1) or "," in question[a.end : b.start]):
            chain = chain or [a]
            chain.append(b)
            has_or = has_or or (m.group(1) or "").lower() in ("or", "ou", "oder")
        elif len(chain) > 2 and has_or:
            break
        else:
            chain, has_or = [], False
    return [s.text for s in chain] if len(chain) > 2 and has_or else []


def _comparison_entities(question: str, spans: list[Span]) -> list[str]:
    chain = _or_chain(question, spans)
    if chain:
        return chain
    body = question.strip().rstrip("?.! ")
    tail = re.split(r"[,:]\s*", body)[-1] if re.search(r"[,:]", body) else ""
    if tail and re.search(r"\s+or\s+", tail):
        parts = [p.strip(" \"'“”") for p in re.split(r",\s*|\s+or\s+", tail) if p.strip(" \"'“”")]
        if len(parts) >= 2 and all(1 <= len(p.split()) <= 10 for p in parts):
            return parts
    match = re.search(r"\bbetween\s+(.+?)\s+and\s+(.+)$", body, re.IGNORECASE)
    if match and all(len(p.split()) <= 8 for p in match.groups()):
        return [p.strip(" \"'“”") for p in match.groups()]
    for a, b in zip(spans, spans[1:], strict=False):
        gap = question[a.end : b.start]
        joiner = re.fullmatch(r"[\"'”»]?\s*(?:,\s*)?(and|or|y|et|ou|und|oder)\s+(?:the\s+)?[\"'“«]?", gap)
        if joiner:
            both = re.search(r"\b(?:both|either|neither)\b", question, re.IGNORECASE)
            if (
                joiner.group(1).lower() == "or"
                or both
                or _COMPARATIVE.search(question)
                or re.match(r"(?:are|were|is|was|do|did|does|have|had)\b", question.strip(), re.I)
            ):
                return [a.text, b.text]
    return []


def analyze(question: str) -> QuestionAnalysis:
    """Classify ``question`` and list what the embedded planner needs (see :class:`QuestionAnalysis`)."""
    q = " ".join(question.split())
    spans = named_spans(q)
    summary = bool(_SUMMARY.search(q))
    compared = _comparison_entities(q, spans)
    clauses = [c.strip(" ,?") for c in _CLAUSE_SPLIT.split(q) if len(content_words(c)) >= 2]
    if compared:
        kind: Kind = "comparison"
        entities = tuple(compared)
        clauses = []
    elif len(clauses) >= 2:
        kind = "conjunction"
        entities = tuple(s.text for s in spans if not junk_name(s.text))
    else:
        kind = "single"
        entities = tuple(s.text for s in spans if not junk_name(s.text))
        clauses = []
    entity_words = {w for e in entities for w in words(e)}
    focus = tuple(w for w in content_words(q) if w not in entity_words and w not in QUESTION_WORDS)
    return QuestionAnalysis(
        kind=kind,
        entities=entities,
        clauses=tuple(clauses),
        focus=focus,
        bridge_cue=bool(_BRIDGE_CUE.search(q) or _OF_CUE.search(q)),
        summary=summary,
    )


def mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as whole words, ignoring case and accents' composition."""
    n = fold(name)
    if not n:
        return False
    return re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", fold(text)) is not None


def _base(title: str) -> str:
    """A title without its qualifier: "Bangor, Maine" -> "bangor", "Evolution (2001 film)" -> "evolution"."""
    t = re.sub(r"\s*\([^)]*\)\s*$", "", fold(title)).strip(" \"'")
    return t.split(", ")[0]


def about(title: str, name: str) -> bool:
    """Whether a passage titled ``title`` is the passage about ``name``: the same name up to a qualifier,
    the title's name inside a longer form of it ("Senator Kenneth LaValle"), or a name of two or more words
    opening the title ("David Beckham" / "David Beckham (footballer)")."""
    if not title or not name:
        return False
    base, full, n = _base(title), fold(title), fold(name).strip(" \"'")
    if n in (base, full):
        return True
    if len(base.split()) >= 2 and mentions(n, base):
        return True
    return len(n.split()) >= 2 and base.startswith(n + " ") and len(base.split()) <= len(n.split()) + 1


def same_name(a: str, b: str) -> bool:
    """Whether two names denote the same title: equal after folding, or one is the other plus a
    parenthesised qualifier ("Evolution" / "Evolution (2001 film)")."""
    fa, fb = fold(a), fold(b)
    return fa == fb or _unqualified(fa) == _unqualified(fb)


def _unqualified(name: str) -> str:
    return re.sub(r"\s*\([^)]*\)\s*$", "", name).strip(" \"'")


@dataclass(frozen=True)
class Passage:
    """The part of a hit the planner reads."""

    title: str
    text: str


def _mostly_within(name: str, title: str) -> bool:
    """A fuller or shorter form of the passage's own subject ("David Robert Joseph Beckham")."""
    a, b = set(content_words(name)), set(content_words(re.sub(r"\([^)]*\)", "", title)))
    return bool(a and b) and len(a & b) * 2 >= min(len(a), len(b)) + (1 if min(len(a), len(b)) > 1 else 0)


def bridge_candidates(
    question: str, passages: Sequence[Passage], *, limit: int = 3, exclude: Sequence[str] = ()
) -> list[str]:
    """Names in ``passages`` (best first) that the question does not mention: the likely bridge entities.

    Names in the sentences that share the most focus words with the question score higher, earlier
    passages count more, and the passage's own subject (its title, a longer form of it) is skipped.
    ``exclude`` lists names already searched.
    """
    q_words = set(content_words(question))
    focus = {stem(w) for w in analyze(question).focus} or {stem(w) for w in q_words}
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}
    skip = [fold(x) for x in exclude]

    def add(name: str, score: float) -> None:
        key = fold(name)
        if not key or key in skip or junk_name(name) or mentions(question, name):
            return
        if set(content_words(name)) <= q_words or not content_words(name):
            return
        scores[key] = scores.get(key, 0.0) + score
        shown.setdefault(key, name)

    for rank, p in enumerate(passages):
        weight = 1.0 / (1 + rank)
        sentences = split_sentences(p.text)[:12]
        overlap = [len(focus & {stem(w) for w in content_words(s)}) for s in sentences]
        best = max(overlap, default=0) or 1
        for pos, (sentence, ov) in enumerate(zip(sentences, overlap, strict=False)):
            s_weight = weight * (0.3 + ov / best) / (1 + 0.15 * pos)
            for span in named_spans(sentence):
                if p.title and (same_name(span.text, p.title) or _mostly_within(span.text, p.title)):
                    continue
                add(span.text, s_weight * (1.2 if len(span.text.split()) > 1 else 1.0))
    ranked = sorted(scores, key=lambda k: -scores[k])
    return [shown[k] for k in ranked[:limit]]
