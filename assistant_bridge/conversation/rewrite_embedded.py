"""The embedded query rewriter (no model): decides whether a message is a follow-up and carries over the
key terms of earlier turns that it lacks. See :mod:`.rewrite` for where it fits.

Follow-up signals: an anaphor ("it", "that", "they", "those", "this", "the other one"; French "il", "ça",
"celui-ci"; Japanese "それ", "その…"), unless a noun before it in the same message is its antecedent
("debt consolidation - is it a good idea?") or it is impersonal ("is it safer to invest in bonds?"); a
continuation ("what about X", "and X?", "I meant …", "et pour X ?", "qu'en est-il de X ?", "Xは？", "じゃあ…");
a message without a topic word ("Which is more important?"); a fragment of at most three words ("enterprise
value"); a definite reference with one topic word ("What are the fees?").

Carried terms: runs of content words (noun-phrase-like spans, capitalised spans, acronyms) for Latin
scripts, katakana/kanji runs for Japanese, scored by recency over the earlier queries and, less, their
answers (:func:`carried_terms`). They are appended after a dash: ``"Which is more important? — Market Cap /
NAV"``. Pure Python, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.text import JAPANESE_CHARS

MAX_QUERY_CHARS = 2048

# --- word lists ---------------------------------------------------------------------------------------------
_EN_STOP = set(
    """a an the and or but if then else of to in on at by for with from into onto about above below
over under between among through during before after since until than as is are was were be been being am do
does did doing done have has had having can could should would will shall may might must i me my mine we us our
ours you your yours he him his she her hers it its they them their theirs this that these those there here
what which who whom whose when where why how not no nor so too very just only also any some all each every
both either neither such same own other another more most less least much many few lot lots s t d ll re ve m
get gets got getting make makes made let lets go goes going went want wants need needs like one ones yes ok
okay please thanks thank really actually still even ever again already else whether while because although
though doesn don isn aren wasn weren didn won wouldn shouldn couldn hasn haven hadn cannot""".split()
)
_FR_STOP = set(
    """le la les l un une des du de d au aux et ou mais donc or ni car à a en dans sur sous par pour
avec sans chez vers entre est sont suis es sommes êtes était étaient être été avoir ai as avons avez ont eu
fait faire faut peut peuvent puis je j me m moi tu te t toi il elle on nous vous ils elles lui leur leurs se s
son sa ses mon ma mes ton ta tes notre nos votre vos ce c cet cette ces ça cela ceci celui celle ceux celles
qui que qu quoi quel quelle quels quelles lequel laquelle lesquels lesquelles dont où comment pourquoi
combien quand ne n pas plus moins très trop aussi bien si oui non y est-ce alors encore déjà tout tous toute
toutes autre autres même mêmes merci""".split()
)
# words that say nothing about the topic: a message made only of these cannot stand alone
_GENERIC = set(
    """important importance better best good bad worse worst difference differences different
differ mean means meaning explain explanation tell know think thing things way ways example examples work
works working happen happens happened true false right wrong possible okay ok sure more less much many
idea ideas option options advice pros cons benefit benefits advantage advantages disadvantages reason reasons
detail details info information question questions answer case cases about else instead then biggest greatest
largest main major key primary typical typically usual usually general generally basic basically kind kinds
type types sort great fine safe safer risky riskier cheaper easier harder above below previous earlier
mentioned said tell anything something everything someone anyone lot get got rid pay paid buy sell use used
using take give find keep put set start try help consider considered apply comply provide include including
allow seem look feel become come see say ask call move believe hold bring write show turn change create
maybe sounds sound off check request year years last within time times money comes going want told says
pays pay open lots kind thanks hello hi wow oh omg
différence différences mieux meilleur meilleure pire important importante exemple exemples expliquer
chose choses façon avantage avantages inconvénient inconvénients raison raisons cas question réponse
possible vrai faux""".split()
)
_QWORDS_EN = {
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "is",
    "are",
    "do",
    "does",
    "did",
    "can",
    "could",
    "should",
    "would",
    "will",
    "was",
    "were",
    "has",
    "have",
    "may",
    "shall",
}
_QWORDS_FR = {
    "que",
    "qu",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "qui",
    "quoi",
    "quand",
    "où",
    "comment",
    "pourquoi",
    "combien",
    "est-ce",
    "lequel",
    "laquelle",
    "peut",
    "faut",
    "dois",
    "doit",
}
_ANAPHORA_EN = {
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "this",
    "that",
    "these",
    "those",
    "he",
    "him",
    "his",
    "she",
    "her",
    "former",
    "latter",
}
_ANAPHORA_FR = {
    "il",
    "elle",
    "ils",
    "elles",
    "ça",
    "cela",
    "ceci",
    "celui-ci",
    "celle-ci",
    "ceux-ci",
    "celles-ci",
    "celui-là",
    "celle-là",
    "ceux-là",
    "lui",
    "son",
    "sa",
    "ses",
    "leur",
    "leurs",
    "dernier",
    "dernière",
}
_FR_IMPERSONAL = re.compile(
    r"\b(il (faut|y a|est (possible|nécessaire|préférable|conseillé))|faut-il|y a-t-il|"
    r"s'il vous plaît)\b",
    re.IGNORECASE,
)
_ONE_BEFORE = {
    "which",
    "this",
    "that",
    "the",
    "each",
    "any",
    "there",
    "every",
    "other",
    "another",
    "better",
    "best",
    "cheaper",
    "safer",
    "one",
}
_POSSESSIVES = {"its", "their", "his", "her"}
_SUBJECT_BEFORE = {
    "is",
    "are",
    "was",
    "were",
    "does",
    "do",
    "did",
    "can",
    "could",
    "will",
    "would",
    "should",
    "has",
    "have",
    "and",
    "but",
    "if",
    "because",
    "since",
    "so",
}
_THAT_BEFORE = {
    "is",
    "was",
    "are",
    "does",
    "do",
    "did",
    "about",
    "of",
    "for",
    "with",
    "on",
    "in",
    "to",
    "from",
    "and",
    "or",
    "like",
    "by",
    "against",
    "than",
    "what's",
    "how's",
    "whats",
}
_CONT_EN = re.compile(
    r"^\s*(?:(?:and|but|so|also)\b|(?:what|how) about\b|what else\b|(?:and )?(?:why|how)"
    r"(?: so| not| come)?\s*\??\s*$|which one)|\byou (?:said|mentioned|told|suggested|described)\b|"
    r"\b(?:mentioned|listed|described) (?:above|earlier|before)\b|^\s*(?:and |so |but )?(?:if|what if|"
    r"even if|in (?:that|this|which) case|then)\b|\bi (?:mean|meant)\b|\b(?:my|your|our|their) own\W*$|"
    r"\bthe (?:last|first|second|third|previous|other|former|latter|same|above) (?:one|option|choice|"
    r"point|method|approach|suggestion|idea|step)s?\b",
    re.IGNORECASE,
)
_SUBST_EN = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*\??\s*$|^\s*and\s+(?P<y>.+?)\s*\?\s*$", re.IGNORECASE
)
_CONT_FR = re.compile(
    r"^\s*(?:et|mais|alors|donc|aussi)\b|qu['’]en est-il|^\s*(?:pourquoi|comment|lequel|"
    r"laquelle|lesquels|lesquelles)\s*\??\s*$",
    re.IGNORECASE,
)
_SUBST_FR = re.compile(
    r"^\s*et\s+(?:pour|en|avec|dans|si|concernant)?\s*(?P<x>.+?)\s*\?\s*$|qu['’]en est-il\s+"
    r"(?:de|du|des|d['’])\s*(?P<y>.+?)\s*\??\s*$",
    re.IGNORECASE,
)
_JA_CHARS = re.compile(f"[{JAPANESE_CHARS}]")
_JA_ANAPHORA = re.compile(
    r"(それら|これら|それ|これ|あれ|その|この|あの|そちら|こちら|そっち|そこ|彼女|彼ら|彼|前者|後者|同じ)"
)
_JA_NOT_ANAPHORA = re.compile(r"(それぞれ|これから|それから|このように|そのため|その他|このまま|それでも|その後)")
_JA_CONT = re.compile(r"^\s*(じゃあ|じゃ|では|それでは|なら|ちなみに|あと|それと|また)")
_JA_SUBST = re.compile(
    r"^\s*(?:じゃあ|では|なら)?[、,\s]*(?P<x>(?:[^\u3040-\u309f、。？?\s]|の){1,12}?)"
    r"(?:の場合|について|では|だと|なら)?は[？?]?\s*$"
)
_JA_TERM = re.compile(r"[\u30a0-\u30ff\u4e00-\u9fff\u3400-\u4dbf々ー]{2,}|[A-Za-z0-9][A-Za-z0-9.+\-]*")
_JA_GENERIC = {
    "何",
    "方法",
    "場合",
    "違い",
    "意味",
    "理由",
    "教え",
    "ください",
    "どう",
    "どれ",
    "いくら",
    "必要",
    "可能",
    "大丈夫",
    "問題",
    "質問",
    "回答",
    "情報",
    "説明",
    "一番",
    "最近",
    "今",
    "ありがとう",
    "お願い",
}
_WORD = re.compile(r"[^\W_][\w\-']*", re.UNICODE)
_INVERTED = re.compile(r"^(\w+?)-(?:t-)?(il|elle|ils|elles|on)$", re.IGNORECASE)
_ELISION = re.compile(r"^(?:l|d|qu|j|n|s|c|m|t|jusqu|lorsqu|puisqu)['’]", re.IGNORECASE)


def language(text: str) -> str:
    """``ja`` when the text has kana or kanji, ``fr`` when it has more French than English function words."""
    if _JA_CHARS.search(text):
        return "ja"
    words = [w.lower() for w in _WORD.findall(text.replace("’", "'"))]
    fr = sum(1 for w in words if w in _FR_STOP and w not in _EN_STOP) + sum(1 for c in text if c in "éèêàçùœ")
    en = sum(1 for w in words if w in _EN_STOP and w not in _FR_STOP)
    return "fr" if fr > en else "en"


def _tokens(text: str) -> list[str]:
    """Words, with French elisions removed (``l'impôt`` → ``impôt``), English clitics split off
    (``what's`` → ``what``, ``s``) and French inverted pronouns split off (``est-il`` → ``est``, ``il``)."""
    out: list[str] = []
    for raw in _WORD.findall(unicodedata.normalize("NFKC", text).replace("’", "'")):
        raw = _ELISION.sub("", raw).strip("-'")
        if not raw:
            continue
        if "'" in raw:
            out.extend(p for p in raw.split("'") if p)
            continue
        inverted = _INVERTED.match(raw)
        if inverted:
            out.extend([inverted.group(1), inverted.group(2)])
            continue
        out.append(raw)
    return out


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in ("ies", "es", "s"):
        if len(w) > 4 and w.endswith(suffix) and not w.endswith("ss"):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


def _is_stop(word: str, lang: str) -> bool:
    w = word.lower()
    return w in _EN_STOP or (lang == "fr" and w in _FR_STOP) or w.isdigit() and len(w) < 3


def _is_acronym(word: str) -> bool:
    letters = [c for c in (word[:-1] if word.endswith("s") else word) if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)  # NAV, IRA, 401K


def _is_entity(word: str, first: bool) -> bool:
    return _is_acronym(word) or (not first and word[:1].isupper())


# --- term extraction -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Term:
    text: str
    entity: bool
    key: tuple[str, ...]  # stemmed words (Latin) or the text itself (Japanese), to compare terms
    acronym: bool = False


def terms_of(text: str, lang: str | None = None) -> list[Term]:
    """Key terms of ``text``: runs of up to four content words (noun-phrase-like spans, capitalised spans,
    acronyms) for Latin scripts; katakana/kanji runs and Latin words for Japanese."""
    lang = lang or language(text)
    if lang == "ja":
        out = []
        for m in _JA_TERM.finditer(unicodedata.normalize("NFKC", text)):
            t = m.group()
            t = t[1:] if t.startswith("何") else t
            if (
                len(t) < 2
                or t.isdigit()
                or t in _JA_GENERIC
                or (t.isascii() and t.lower() in _EN_STOP)
                or _JA_ANAPHORA.fullmatch(t)
            ):
                continue
            out.append(Term(t, t.isascii() and _is_acronym(t), (t.lower(),), t.isascii() and _is_acronym(t)))
        return out
    out = []
    for sentence in re.split(r"(?<=[.!?;:])\s+|\n+|\s[—/]\s", text):  # a dash and slashes set off carried terms
        run: list[tuple[str, bool]] = []
        for i, tok in enumerate(_tokens(sentence)):
            low = tok.lower()
            if _is_stop(tok, lang) or low in _GENERIC or low in _ANAPHORA_EN or low in _ANAPHORA_FR or len(tok) < 2:
                out.extend(_flush(run))
                run = []
                continue
            run.append((tok, _is_entity(tok, i == 0)))
        out.extend(_flush(run))
    return out


def _verbish(word: str) -> bool:
    w = word.lower()
    return len(w) > 4 and (w.endswith("ed") or w.endswith("ly"))


def _flush(run: list[tuple[str, bool]]) -> list[Term]:
    """Terms of a run of content words, at most four words each; words that look like past participles or
    adverbs (``-ed``, ``-ly``) are trimmed from the edges, and a leading ``-ing`` word too."""
    while run and (_verbish(run[0][0]) or (len(run) > 1 and run[0][0].lower().endswith("ing"))):
        run = run[1:]
    while run and _verbish(run[-1][0]):
        run = run[:-1]
    out = []
    for start in range(0, len(run), 4):
        part = run[start : start + 4]
        if not part:
            continue
        text = " ".join(w for w, _ in part)
        out.append(
            Term(text, any(e for _, e in part), tuple(_stem(w) for w, _ in part), all(_is_acronym(w) for w, _ in part))
        )
    return out


def _words_of(text: str, lang: str) -> set[str]:
    if lang == "ja":
        return {t.key[0] for t in terms_of(text, "ja")}
    return {_stem(t) for t in _tokens(text)}


# --- follow-up detection ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FollowUp:
    """:param reason: ``anaphora``, ``continuation``, ``no_topic``, ``fragment`` or ``definite_reference``.
    :param substitute: X of "what about X?" (it replaces a term of the previous turn)."""

    follow_up: bool
    substitute: str | None = None
    reason: str = ""


def detect(question: str, lang: str | None = None) -> FollowUp:
    """Whether ``question`` depends on earlier turns, and how."""
    lang = lang or language(question)
    q = unicodedata.normalize("NFKC", question).strip()
    if lang == "ja":
        return _detect_ja(q)
    toks = _tokens(q)
    low = [t.lower() for t in toks]
    subst = (_SUBST_FR if lang == "fr" else _SUBST_EN).match(q)
    if subst:
        x = (subst.group("x") or subst.group("y") or "").strip(" ?")
        if x and len(_tokens(x)) <= 5:
            return FollowUp(True, substitute=x, reason="continuation")
    if _anaphors(q, low, lang):
        return FollowUp(True, reason="anaphora")
    if (_CONT_FR if lang == "fr" else _CONT_EN).search(q):
        return FollowUp(True, reason="continuation")
    content = [t for t in toks if not _is_stop(t, lang) and t.lower() not in _GENERIC]
    entities = [t for i, t in enumerate(toks) if _is_entity(t, i == 0) and t.lower() not in _QWORDS_EN]
    starts_q = bool(low) and (low[0] in _QWORDS_EN or low[0] in _QWORDS_FR)
    qword = starts_q or q.endswith("?")
    if not content:
        return FollowUp(True, reason="no_topic")
    if not starts_q and len(toks) <= 3 and not entities:
        return FollowUp(True, reason="fragment")
    articles = {"the"} if lang == "en" else {"le", "la", "les", "l"}
    if qword and len(content) == 1 and not entities and any(w in articles for w in low) and len(toks) <= 6:
        return FollowUp(True, reason="definite_reference")
    return FollowUp(False)


def _antecedent_before(low: list[str], i: int, lang: str) -> bool:
    """A content word before position ``i``: the pronoun there most likely refers to it."""
    return any(
        not _is_stop(w, lang)
        and w not in _GENERIC
        and len(w) >= 3
        and w not in _ANAPHORA_EN
        and w not in _ANAPHORA_FR
        and w not in _QWORDS_EN
        and w not in _QWORDS_FR
        for w in low[:i]
    )


def _anaphors(q: str, low: list[str], lang: str) -> list[str]:
    if lang == "fr":
        if _FR_IMPERSONAL.search(q):
            low = [w for w in _tokens(_FR_IMPERSONAL.sub(" ", q.lower()))]
        return [
            w
            for i, w in enumerate(low)
            if w in _ANAPHORA_FR and not (w in ("il", "elle", "ils", "elles") and _antecedent_before(low, i, lang))
        ]
    found = []
    for i, w in enumerate(low):
        if (
            w in ("one", "ones", "others")
            and i > 0
            and (low[i - 1] in _ONE_BEFORE or w == "others" and low[i - 1] == "the")
        ):
            found.append(w)
            continue
        if w not in _ANAPHORA_EN:
            continue
        if (w in _POSSESSIVES or i > 0 and low[i - 1] in _SUBJECT_BEFORE) and _antecedent_before(low, i, lang):
            continue  # "debt consolidation - is it a good idea?", "how do companies hire their staff?"
        if w == "that" and not (i == 0 or low[i - 1] in _THAT_BEFORE or i == len(low) - 1):
            continue  # "that" as a conjunction or relative pronoun: "is it true that ..."
        if w == "it" and "to" in low[i + 2 : i + 5] and len(low) > low.index("to", i + 2) + 1:
            continue  # "is it safer to invest in bonds": impersonal, the rest of the question says what
        found.append(w)
    return found


def _detect_ja(q: str) -> FollowUp:
    stripped = _JA_NOT_ANAPHORA.sub("", q)
    m = _JA_ANAPHORA.search(stripped)
    if m:
        return FollowUp(True, reason="anaphora")
    sub = _JA_SUBST.match(q)
    if sub and not re.search(r"(ですか|ますか|とは|何|どう)", sub.group("x")):
        return FollowUp(True, substitute=sub.group("x"), reason="continuation")
    if _JA_CONT.match(q):
        return FollowUp(True, reason="continuation")
    content = terms_of(q, "ja")
    if not content or len(re.sub(r"[\s、。？?！!]", "", q)) <= 4:
        return FollowUp(True, reason="no_topic")
    return FollowUp(False)


# --- carrying terms over ------------------------------------------------------------------------------------------
@dataclass
class _Scored:
    term: Term
    score: float = 0.0
    modifier: bool = False  # Japanese: followed by の in a previous query ("大阪の消費税率")
    seen: set[int] = field(default_factory=set)


def carried_terms(
    question: str,
    history: Sequence[MemoryTurn],
    lang: str,
    *,
    limit: int = 3,
    substitute: str | None = None,
    recency: float = 0.5,
    answer_weight: float = 0.3,
    max_words: int = 6,
) -> list[tuple[str, float]]:
    """The terms of earlier turns that ``question`` lacks, best first, with their scores.

    Each term scores ``recency ** age`` for every earlier query it appears in (age 0 = the previous turn),
    plus ``answer_weight * recency ** age`` per occurrence in that turn's answer (at most 3); an answer adds
    new terms only for names and acronyms it repeats. Entities count 1.5 times, other phrases 1.2 times. Terms under a third of the
    best score are dropped, and at most ``limit`` terms and ``max_words`` words are carried. With
    ``substitute`` (the X of "what about X?"), the terms X replaces are dropped: names when X is a name,
    acronyms when X is an acronym, and in Japanese the modifiers of the previous query (大阪 in 大阪の消費税率).
    """
    have = _words_of(question, lang)
    sub_tokens = _tokens(substitute) if substitute and lang != "ja" else []
    sub_name = any(t[:1].isupper() and not _is_acronym(t) for t in sub_tokens)
    sub_acronym = any(_is_acronym(t) for t in sub_tokens)
    scored: dict[tuple[str, ...], _Scored] = {}
    usable = [t for t in history if t.outcome != "hap"]
    for age, turn in enumerate(reversed(usable)):
        weight = recency**age
        query = turn.query or turn.question
        for t in terms_of(query, lang):
            s = scored.setdefault(t.key, _Scored(t))
            if age not in s.seen:
                s.score += weight
                s.seen.add(age)
            if lang == "ja" and re.search(re.escape(t.text) + r"\s*の", query):
                s.modifier = True
        if turn.answer:  # an answer confirms the terms of the queries; only its repeated names add new ones
            answer_terms = terms_of(turn.answer, lang)
            counts = Counter(t.key for t in answer_terms)
            firsts = {t.key: t for t in answer_terms}
            for key, n in counts.items():
                if key in scored or (n >= 2 and firsts[key].entity):
                    s = scored.setdefault(key, _Scored(firsts[key]))
                    s.score += weight * answer_weight * min(n, 3)
    ranked = []
    for s in scored.values():
        t = s.term
        if all(k in have for k in t.key) or (lang != "ja" and all(k.lower() in have for k in t.text.split())):
            continue
        if substitute and (
            s.modifier if lang == "ja" else (t.acronym and sub_acronym) or (t.entity and not t.acronym and sub_name)
        ):
            continue  # "what about Germany?": Germany replaces the previous country, the topic stays
        if not t.entity and len(t.key) == 1 and len(t.text) < 4:
            continue  # a short lowercase word alone says little about a topic
        ranked.append((s.score * (1.5 if t.entity else 1.2 if len(t.key) > 1 else 1.0), t.text))
    ranked.sort(key=lambda x: -x[0])
    if not ranked:
        return []
    best = ranked[0][0]
    out: list[tuple[str, float]] = []
    words = 0
    for score, text in ranked:
        if score < best / 3 or len(out) >= limit:
            break
        if any(text.lower() in o.lower() or o.lower() in text.lower() for o, _ in out):
            continue
        size = len(text.split()) if lang != "ja" else 1
        if out and words + size > max_words:
            continue
        out.append((text, score))
        words += size
    return out


class EmbeddedRewriter:
    """Resolves follow-ups from the remembered turns without a model (see the module docstring)."""

    name = "embedded"

    def __init__(self, limit: int = 3, recency: float = 0.5, answer_weight: float = 0.3) -> None:
        self.limit, self.recency, self.answer_weight = limit, recency, answer_weight

    def analyse(self, question: str, history: Sequence[MemoryTurn]) -> tuple[str, FollowUp, list[str]]:
        """``(query, follow-up decision, carried terms)``."""
        lang = language(question)
        decision = detect(question, lang)
        if not decision.follow_up or not any(t.outcome != "hap" for t in history):
            return question, decision, []
        scored = carried_terms(
            question,
            history,
            lang,
            limit=self.limit,
            substitute=decision.substitute,
            recency=self.recency,
            answer_weight=self.answer_weight,
        )
        return compose(question, scored, decision, lang), decision, [t for t, _ in scored]

    def rewrite(self, question: str, history: Sequence[MemoryTurn]) -> str:
        return self.analyse(question, history)[0]


def compose(question: str, scored: Sequence[tuple[str, float]], decision: FollowUp, lang: str) -> str:
    """The message with the carried terms appended after a dash, separated by slashes and spaces so that no
    tokenizer glues them to punctuation: ``"Which is more important? — Market Cap / NAV"``. The anaphor is
    left in place: putting a term in its place reads well when the term is right and badly when it is not,
    and searches the same."""
    if not scored:
        return question
    return f"{question.strip()} — {' / '.join(t for t, _ in scored)}"[:MAX_QUERY_CHARS]
