"""The embedded query rewriter (no model): decides whether a message depends on the conversation and carries
over the conversation's topic that it lacks. See :mod:`.rewrite` for where it fits.

Follow-up signals: an anaphor ("it", "that", "they", "those", "this", "the other one"; French "il", "ça",
"celui-ci"; Japanese "それ", "その…"), unless a noun before it in the same message, outside the question
phrase, is its antecedent ("debt consolidation - is it a good idea?", but not "which river does it flow
into?") or it is impersonal ("is it safer to invest in bonds?"); a continuation ("what about X", "and X?",
"I meant …", "et pour X ?", "qu'en est-il de X ?", "Xは？", "じゃあ…"); a message without a topic word ("Which
is more important?"); a fragment of at most three words ("enterprise value"); a definite reference with one
topic word ("What are the fees?"); a bare question ("Is there a cure?").

Carried terms (:func:`carried_terms`): the topic, not the last question's details: names, phrases, terms
carried before and the title of the page an answer cited, scored by recency; a lone lowercase word only
when it reads as a noun or comes back; a command the user named, when its manual page answered, alone with
its names; for "And …" asking a question of its own, nothing that only the questions after the one that opened
the topic said. They are appended after a dash: ``"Which is more important? —
Market Cap / NAV"``; a short self-contained question gets the topic in brackets (:class:`EmbeddedRewriter`).
Also here: social messages (:func:`social`) and the names a question asks about (:func:`asked_names`). Pure
Python, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.text import JAPANESE_CHARS, MANUAL_SECTION, manual_page_name, manual_page_section

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
though doesn don isn aren wasn weren didn won wouldn shouldn couldn hasn haven hadn cannot without within
upon toward towards via against across along around behind beside besides beyond inside outside throughout
unless except despite aside instead""".split()
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
pays pay open lots kind thanks hello hi wow oh omg now later soon yet anymore afterwards
différence différences mieux meilleur meilleure pire important importante exemple exemples expliquer
chose choses façon avantage avantages inconvénient inconvénients raison raisons cas question réponse
possible vrai faux""".split()
)
# generic words that still say what a message asks when they are its verb ("Why sell?", "How do I start it?"):
# they name no topic (the rewriter carries one) but weigh in the search of the message as asked
_ACTIONS = set(
    """buy sell pay paid pays open change create move write show turn start keep set put find use used using
take give apply hold bring call check request include provide""".split()
)
_WH_EN = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
_AUX = set("is are was were do does did can could should would will has have had may might must shall".split())
_QWORDS_EN = _WH_EN | _AUX
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
_PLURAL_ANAPHORA = {"they", "them", "their", "these", "those"}
_OBJECTS = {"it", "them", "him", "her", "this", "that", "these", "those"}

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
# "What is inflation?", "Explain the term fiduciary": a definition question names its own topic
_DEFINITION = re.compile(
    r"^\s*(?:(?:what|who)(?:'s| is| are| was| were)\s+(?:an?\s+|the\s+)?[\w\-']+|(?:explain|define)\b.*|"
    r"what does [\w\-']+ mean)\s*\??\s*$",
    re.IGNORECASE,
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


_JOINERS = frozenset({"vs", "versus"})  # "buying vs renting": joins two terms as "or" does ("VS Code" is a name)


def _is_stop(word: str, lang: str) -> bool:
    w = word.lower()
    return (
        w in _EN_STOP
        or (w in _JOINERS and not word.isupper())
        or (lang == "fr" and w in _FR_STOP)
        or (w.isdigit() and len(w) < 3)
    )


def _is_acronym(word: str) -> bool:
    letters = [c for c in (word[:-1] if word.endswith("s") else word) if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)  # NAV, IRA, 401K


def _is_entity(word: str, first: bool) -> bool:
    return word != "I" and (_is_acronym(word) or (not first and word[:1].isupper()))


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
    while run and (
        (_verbish(run[0][0]) and not (len(run) > 1 and run[0][0].lower().endswith("ed")))
        or (len(run) > 1 and run[0][0].lower().endswith("ing"))
    ):
        run = run[1:]  # a participle before a noun stays: "annotated tag", "installed packages"
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
    """:param reason: ``anaphora``, ``continuation``, ``no_topic``, ``fragment``, ``definite_reference`` or
        ``bare`` (a short question with no topic of its own: only the conversation's topic is carried).
    :param substitute: X of "what about X?" (it replaces a term of the previous turn).
    :param plural: the message refers back with a plural pronoun ("Can I follow them live?").
    :param subject: the substitute is what the rest of the message asks about ("What about xz, can it use several
        cores?": its pronoun means xz): it replaces every earlier term but names, whatever its case."""

    follow_up: bool
    substitute: str | None = None
    reason: str = ""
    plural: bool = False
    subject: bool = False


def content_words(question: str, lang: str | None = None) -> int:
    """How many words of ``question`` say what it asks: not function words, question words, pronouns or
    generic words ("Why does he do it?": 0; "What about a Signed-off-by line?": 2), except a generic verb of
    action (:data:`_ACTIONS`: "Why sell?" asks about selling, whatever the topic it continues), nor the words
    of a measure, which bound the answer and name no topic: a number, the unit after it and a comparative before
    "than" ("Only those bigger than 100 MB?": 0). Japanese: its terms."""
    lang = lang or language(question)
    if lang == "ja":
        return len(terms_of(question, "ja"))
    toks = _tokens(question)
    return sum(
        1
        for i, t in enumerate(toks)
        if len(t) > 1 and (_says_something(t, lang) or t.lower() in _ACTIONS) and not _measure(toks, i)
    )


_MEASURE_UNIT_CHARS = 5  # the longest word after a number read as its unit: "MB", "days", "hours"


def _measure(toks: Sequence[str], i: int) -> bool:
    """``toks[i]`` is a number, the unit right after one ("100 MB", "30 days") or a comparative ("bigger
    than", "plus gros que")."""
    t = toks[i]
    before = toks[i - 1].lower() if i > 0 else ""
    after = toks[i + 1].lower() if i + 1 < len(toks) else ""
    return bool(  # a token holds no "." nor "%" (_tokens): a number is a run of digits
        t.isdecimal()
        or (i > 0 and toks[i - 1].isdecimal() and len(t) <= _MEASURE_UNIT_CHARS)
        or after == "than"
        or (before in ("plus", "moins") and after == "que")
    )


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
        head, comma, rest = x.partition(",")
        anaphora = _ANAPHORA_FR if lang == "fr" else _ANAPHORA_EN
        if comma and head.strip() and len(_tokens(head)) <= 3 and any(t.lower() in anaphora for t in _tokens(rest)):
            # "What about xz, can it use several cores?": X, then a question about it
            return FollowUp(True, substitute=head.strip(), reason="continuation", subject=True)
        first = (_tokens(x) or [""])[0].lower()
        if x and len(_tokens(x)) <= 5 and first not in _QWORDS_EN and first not in _QWORDS_FR and first != "i":
            return FollowUp(True, substitute=x, reason="continuation")  # not "and how do I delete one?"
    anaphors = _anaphors(q, low, lang)
    if anaphors:
        return FollowUp(True, reason="anaphora", plural=any(w in _PLURAL_ANAPHORA for w in anaphors))
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
    definite = any(w in articles for w in low)
    if qword and not entities and len(toks) <= 10 and not _DEFINITION.match(q) and len(content) <= 1 + definite:
        # "Is there a cure?", "Can the patterns use wildcards?": the topic is implied
        return FollowUp(True, reason="bare")
    return FollowUp(False)


def _antecedent_before(low: list[str], i: int, lang: str) -> bool:
    """A content word before position ``i``: the pronoun there most likely refers to it. The words of the
    question phrase ("how long", "which river", "what kind of …") ask about the referent and are not it:
    in "Which river does it flow into?" *it* still refers back."""
    start = 0
    if low and (low[0] in _QWORDS_EN or low[0] in _QWORDS_FR) and low[0] not in _AUX:
        start = 1
        while start < i and low[start] not in _AUX and low[start] not in _ANAPHORA_EN:
            start += 1  # "which river", "how many people", "what kind of fees"
    return any(len(w) >= 3 and _says_something(w, lang) for w in low[start:i])


def _says_something(word: str, lang: str) -> bool:
    """``word`` says what a question is about: not a function word, a generic word, a pronoun or a question
    word."""
    w = word.lower()
    return not (
        _is_stop(w, lang)
        or w in _GENERIC
        or w in _ANAPHORA_EN
        or w in _ANAPHORA_FR
        or w in _QWORDS_EN
        or w in _QWORDS_FR
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
        if w in _OBJECTS and i == len(low) - 1 and i > 1 and low[i - 1] not in _AUX:
            found.append(w)  # "Who plays her?", "How do I delete it?": an object at the end refers back
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


# --- names a follow-up asks about ----------------------------------------------------------------------------------
_LATIN_NAME = re.compile(r"(?<![A-Za-z0-9_-])[A-Z][A-Za-z0-9+#]*(?:[ .-][A-Z][A-Za-z0-9+#]*)*")


_UNIT_CHARS = 4  # the longest capitalised word after a number read as its unit ("TiB", "GHz"), not a name


def asked_names(question: str) -> list[str]:
    """The names ``question`` itself asks about: runs of capitalised words or acronyms, the first word of
    each sentence and ``I`` aside ("Can I see them in **VS Code**?", "Does **GitLab** show tags?"); in a
    Japanese question, its Latin-script words with a capital ("Windows でプリンターを…", "PostgreSQL のポート").
    One letter is no name (``-P``), nor is a short capitalised word after a number, its unit ("larger than
    8 TiB", "5 GHz"). A question whose results do not mention such a name asks about
    something the documents do not cover, however well the carried topic matched."""
    if language(question) == "ja":
        return [w for w in _LATIN_NAME.findall(question) if len(w) > 1]
    names: list[str] = []
    for sentence in re.split(r"(?<=[.!?;:])\s+|\n+", question):  # "OK. Tell me…": a sentence's first word
        run: list[str] = []
        tokens = _tokens(sentence)
        for i, tok in enumerate(tokens):
            unit = i > 0 and tokens[i - 1].isdigit() and len(tok) <= _UNIT_CHARS  # "8 TiB", "100 MB": a unit
            if _is_entity(tok, i == 0) and tok.lower() not in _QWORDS_EN and tok.lower() not in _EN_STOP and not unit:
                run.append(tok)
                continue
            if run:
                names.append(" ".join(run))
            run = []
        if run:
            names.append(" ".join(run))
    return [n for n in names if len(n) > 1]


# --- social turns ---------------------------------------------------------------------------------------------------
SOCIAL_KINDS = ("thanks", "goodbye", "greeting", "acknowledgement", "no_question")
_SOCIAL_WORDS = {
    "thanks": set("thanks thank thx ty cheers appreciate appreciated grateful merci remercie".split()),
    "goodbye": set("bye goodbye byebye cya farewell ciao revoir later ya".split()),
    "greeting": set("hello hi hey hiya morning afternoon evening bonjour salut bonsoir coucou".split()),
    "acknowledgement": set(
        """ok okay k kk great cool perfect nice awesome excellent wonderful fantastic got understood alright
        sure fine noted wow omg yes yep yeah super parfait accord compris génial oui bien entendu top""".split()
    ),
}
# words that may stand beside the social ones ("thanks, that helps a lot", "ok got it", "see you")
_SOCIAL_FILLER = set(
    """you very much so a lot that that's this it helps helped helpful is was for the help info information
    answer again all many really good see there it's i we everyone guys folks much appreciated beaucoup can me
    right yall now then s d
    vous toi c'est ça bon tout de le la les je pour votre ton aide""".split()
)
# a remark that the answer was the right one says nothing new beside "thanks" ("thanks, that's what I needed")
_SOCIAL_REMARK = re.compile(
    r"\b(?:that|this|it)(?:'s| is| was) (?:exactly |just )?what i (?:needed|wanted|was looking for|meant)\b|"
    r"\b(?:c'est|voilà) (?:exactement |bien )?ce (?:que je (?:voulais|cherchais)|qu'il me fallait)\b"
)
_JA_SOCIAL = {
    "thanks": ("ありがとう", "どうも", "感謝", "助かりました", "助かります"),
    "goodbye": ("さようなら", "またね", "では、また", "失礼します"),
    "greeting": ("こんにちは", "こんばんは", "おはよう", "はじめまして"),
    "acknowledgement": ("了解", "わかりました", "分かりました", "はい", "なるほど", "承知しました"),
}
_EMOJI_SOCIAL = {"thanks": "🙏", "goodbye": "👋", "acknowledgement": "👍👌🙂😊😀👏✅"}


def social(message: str) -> str | None:
    """The kind of a message that asks nothing of the documents, or ``None``: ``thanks`` ("Thank you!",
    "great, thanks"), ``goodbye``, ``greeting``, ``acknowledgement`` ("ok", "got it", "👍") and
    ``no_question`` (only punctuation or symbols). A remark that the answer was the right one ("that's what I
    needed", "c'est exactement ce que je cherchais") counts for nothing. A message with a word outside these
    small vocabularies is not social: "thanks, and what about ETFs?" is searched."""
    text = unicodedata.normalize("NFKC", message).strip().lower()
    if not any(c.isalnum() for c in text):
        for kind, marks in _EMOJI_SOCIAL.items():
            if any(m in text for m in marks):
                return kind
        return "no_question"
    if _JA_CHARS.search(text):
        bare = re.sub(r"[\s、。！!？?〜~ーっ…]+$", "", re.sub(r"^[\s、。]+", "", text))
        bare = re.sub(r"(ございます|ございました|です|でした|ね|よ|ー)+$", "", bare)
        for kind, words in _JA_SOCIAL.items():
            if any(bare == w or (bare.startswith(w) and len(bare) <= len(w) + 2) for w in words):
                return kind
        return None
    tokens = re.findall(r"\w+", _SOCIAL_REMARK.sub(" ", text.replace("’", "'")))  # "d'accord" → d, accord
    if not tokens or len(tokens) > 8:
        return None
    found = set()
    for w in tokens:
        kinds = [k for k, vocab in _SOCIAL_WORDS.items() if w in vocab]
        if kinds:
            found.update(kinds)
        elif w not in _SOCIAL_FILLER:
            return None
    for kind in SOCIAL_KINDS:
        if kind in found:
            return kind
    return None


# --- carrying terms over ------------------------------------------------------------------------------------------
_TITLE_CUT = re.compile(rf"\s*(?::|\s[|–—-]\s|{MANUAL_SECTION}).*$")


def title_term(title: str, lang: str) -> Term | None:
    """The topic a result's title names, as a term: the title before its first colon, dash or manual
    section (``git-stash(1): Stash the changes…`` → ``git-stash``); ``None`` for a title that is long or has
    no content word, unless it is a manual page's: ``find(1)`` names the command ``find``. A page of section 7
    (overviews, tutorials, conventions: ``gitcore-tutorial(7)``, ``gitfaq(7)``) names no topic: it is about
    everything its commands do, so carrying it draws the next question to the overview."""
    title = unicodedata.normalize("NFKC", title)
    if (manual_page_section(title) or "").startswith("7"):
        return None
    head = _TITLE_CUT.sub("", title).strip()
    if not head:
        return None
    if lang == "ja" or _JA_CHARS.search(head):
        return Term(head, True, (head.lower(),)) if len(head) <= 20 else None
    if manual_page_name(title) is not None:
        return _topic_term(head, lang)  # a command's name, even when it is an English word: find, file, time
    toks = _tokens(head)
    if not toks or len(toks) > 6 or all(_is_stop(t, lang) or t.lower() in _GENERIC for t in toks):
        return None
    return _topic_term(head, lang)


@dataclass
class _Scored:
    term: Term
    kind: str  # title, entity, phrase (several words) or word
    score: float = 0.0
    modifier: bool = False  # Japanese: followed by の in a previous query ("大阪の消費税率")
    seen: set[int] = field(default_factory=set)
    noun: bool = False  # a lone word after an article ("le taux", "a cure"): it can be what a pronoun means


_UNREAD = ("hap", "social")  # outcomes of turns the rewriter does not read: a blocked turn, a "thanks"
# "And just see what's inside?", "Et pour la supprimer ?": a question of its own beside the previous one
_PARALLEL = re.compile(r"^\s*(?:and|et)\b", re.IGNORECASE)
_WEAK_CARRY = re.compile(r" \([^()]*\)$")  # the topic a short self-contained question was given, in brackets
_KIND_WEIGHT = {"title": 0.9, "topic": 1.3, "entity": 1.3, "phrase": 1.2, "word": 0.6}
_KIND_RANK = {"word": 0, "phrase": 1, "entity": 2, "topic": 3, "title": 4}


def _kind(t: Term, lang: str) -> str:
    """A Japanese term is a kanji or katakana run: a noun, counted as a phrase."""
    return "entity" if t.entity else "phrase" if len(t.key) > 1 or lang == "ja" else "word"


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
    topic_only: bool = False,
    topic_shift: float = 0.1,
    plural: bool = False,
    subject: bool = False,
    parallel: bool = False,
    commands: frozenset[str] = frozenset(),
) -> list[tuple[str, float]]:
    """The terms of earlier turns that ``question`` lacks, best first, with their scores: the conversation's
    topic, not the details of the last question.

    Candidates are the terms of earlier queries, the terms they carried (after their dash: a topic carried
    once stays the topic) and the title of the first result each earlier answer cited. Each scores
    ``recency ** age`` for every turn it appears in (age 0 = the previous turn), times ``topic_shift`` for
    each self-contained question between it and now (a question that opened a new topic leaves the older
    ones behind, unless its answer cites first the page the turn before it cited first: it stayed on that
    topic); an answer that repeats it adds ``answer_weight * recency ** age`` per occurrence (at most
    3) and confirms it, but adds no term of its own. Names and carried topics count 1.3 times, phrases 1.2,
    titles 0.9 (the user's own words name the topic better than a cited page) and single lowercase words
    0.6; such a word is carried only when two turns name it, an article or a plural makes it a noun ("le
    taux de TVA", "branches") or the X of "what about X?" is a name (the same question about another
    thing): "How long do they live?" carries *guinea pigs*, not *long*. ``topic_only`` (a bare
    question) carries no single lowercase word. Terms under a third of the best score are dropped, and at
    most ``limit`` terms and ``max_words`` words are carried.

    ``commands`` (:func:`named_commands`): the commands the user named in a turn their manual page answered.
    When one of them is among the terms to carry, it is the topic, and the earlier questions' phrases and words
    and the cited pages' titles were details of questions about it: only the command and the terms that name it
    ("tmux session"), names and what a plural pronoun means are carried ("Can it keep reading a file as it
    grows?" after "How do I show line numbers in less?" carries *less*, not *line numbers*).

    With ``substitute`` (the X of "what about X?"), X replaces the terms it is like: a name replaces names
    and titles, an acronym acronyms, a phrase the terms that share a word with it ("Huntington's disease"
    replaces "sickle cell disease"), "ones" the details of the previous question; in Japanese X replaces
    the modifiers of the previous query (大阪 in 大阪の消費税率). The rest of the topic stays.

    With ``subject`` (X is what the rest of the message asks about: "What about xz, can it use several cores?"),
    X replaces everything but names, whatever its case: the cited pages' titles and the topics carried before
    (the question is about X now) and the earlier questions' phrases and words (it asks its own question; they
    were their details). Names stay: "What about bicycles, are they allowed on the highway?" after a question
    on the speed limit for motorcycle driving in New York carries *New York*, and a name X is like is replaced
    as above.

    With ``plural`` (the message refers back with "they", "them", "these" or "those"), a plural noun of the
    previous question is what the pronoun most likely means: it weighs as a phrase and is carried ("Where do I
    see its logs?", then "Can I follow them live?" carries *logs*).

    With ``parallel`` (the message asks its own thing with "And …": "And just see what's inside without extracting
    it?"), what only the questions after the one that opened the topic said (their words, the terms carried for
    them, the pages that answered them) are their details, not the topic: they are not carried, names aside. A
    question opens a topic when it stands alone and its answer cites another page first than the turn before it
    ("How can I leave out some files?" on tar(1), after a question answered from tar(1), does not). The topic
    stays (*tar*); "leave out" and "files" do not.
    """
    have = _words_of(question, lang)
    scored: dict[tuple[str, ...], _Scored] = {}
    usable = [t for t in history if t.outcome not in _UNREAD]
    era = 1.0  # turns before the question that opened the current topic count less
    opener: int | None = None  # the age of the question that opened the current topic
    for age, turn in enumerate(reversed(usable)):
        weight = era * recency**age
        query = turn.query or turn.question
        before = usable[-age - 2] if age + 1 < len(usable) else None
        opens = not detect(turn.question, lang).follow_up and not _same_page(turn, before)
        if opens:
            era *= topic_shift
        if opener is None and (opens or before is None):
            opener = age
        own, carried = _own_and_carried(query)
        found = [(t, _kind(t, lang)) for t in terms_of(own, lang)]
        found += [(t, "topic") for t in (_topic_term(x, lang) for x in carried.split(" / ")) if t is not None]
        found += [(t, "title") for t in (title_term(x, lang) for x in _page_titles(turn, lang)) if t is not None]
        for t, kind in found:
            s = scored.setdefault(t.key, _Scored(t, kind))
            if _KIND_RANK[kind] > _KIND_RANK[s.kind]:
                s.kind = kind  # "git-bisect" carried before is a topic, though a lowercase word
            if age not in s.seen:
                s.score += weight
                s.seen.add(age)
            if kind == "word" and (_after_article(t.text, own) or _plural(t.text)):
                s.noun = True
            if lang == "ja" and re.search(re.escape(t.text) + r"\s*の", query):
                s.modifier = True
        if turn.answer:  # an answer confirms the terms of the queries; it adds none of its own
            for key, n in Counter(t.key for t in terms_of(turn.answer, lang)).items():
                if key in scored:
                    scored[key].score += weight * answer_weight * min(n, 3)
    replaced = _replacement(substitute, lang, subject)
    # "what about Germany?": the same question about another thing, so the details stay
    same_question = any(_is_entity(t, first=False) for t in _tokens(substitute or ""))
    ranked = []
    for s in scored.values():
        t = s.term
        if all(k in have for k in t.key) or (lang != "ja" and all(k.lower() in have for k in t.text.split())):
            continue
        if replaced(s):
            continue
        if parallel and opener and max(s.seen) < opener and s.kind != "entity":
            continue  # a detail of a question asked after the one that opened the topic, or the page it cited
        # what a plural pronoun means: a plural noun of the previous question ("logs", "log files")
        referent = (
            plural
            and 0 in s.seen
            and (s.kind == "phrase" or (s.kind == "word" and s.noun))
            and _plural(t.text.split()[-1], shortest=4)
        )
        if s.kind == "word" and not referent:
            if topic_only or len(t.text) < 4 or not (len(s.seen) >= 2 or s.noun or same_question):
                continue  # a lone lowercase word is a detail of one question ("how long"), not the topic
        # what stays when the topic is a command the user named: the command and the terms that name it ("tmux
        # session"), names, what a plural pronoun means
        stays = any(w.lower() in commands for w in t.text.split()) or s.kind == "entity" or referent
        ranked.append((s.score * _KIND_WEIGHT["phrase" if referent else s.kind], t.text, stays))
    ranked.sort(key=lambda x: -x[0])
    if not ranked:
        return []
    best = ranked[0][0]
    if any(text.lower() in commands for score, text, _ in ranked if score >= best / 3):
        ranked = [r for r in ranked if r[2]]  # the other terms were details of the questions about the command
    out: list[tuple[str, float]] = []
    words = 0
    for score, text, _ in ranked:
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


def named_commands(history: Sequence[MemoryTurn], lang: str) -> frozenset[str]:
    """The commands, in lower case, that the user named in their own words in a turn that the command's manual
    page answered: *scp* after "How do I copy a directory to another machine with scp?" answered from scp(1) or,
    when that turn was not answered, searched with scp(1) first (:func:`_page_titles`)."""
    out = set()
    for turn in history:
        for title in _page_titles(turn, lang):
            name = manual_page_name(title)
            if name is not None and _names_in_own_words(turn, name, lang):
                out.add(name.lower())
    return frozenset(out)


def _names_in_own_words(turn: MemoryTurn, name: str, lang: str) -> bool:
    """The user wrote ``name`` in the turn's own words (not among the terms its query carried)."""
    own = _own_and_carried(turn.query or turn.question)[0]
    words = _words_of(own, lang) if lang == "ja" else {tok.lower() for tok in _tokens(own)}
    return name.lower() in words


def _page_titles(turn: MemoryTurn, lang: str) -> list[str]:
    """The page a turn's topic is read from: the first page its answer cites; for a turn that was not answered,
    the first result when it is the manual page of a command the question named ("How do I find files by name
    ignoring case with find?" refused, find(1) first): the user named the command and the search agreed, so a
    follow-up ("Without going into subdirectories?") is still about it. Nothing for a turn the rewriter does
    not read."""
    if turn.outcome in _UNREAD:
        return []
    if turn.titles:
        return list(turn.titles[:1])
    name = manual_page_name(turn.first_title) if turn.first_title else None
    return [turn.first_title] if name is not None and _names_in_own_words(turn, name, lang) else []


def carries_named_command(carried: Sequence[str], commands: frozenset[str]) -> bool:
    """One of the ``carried`` terms is one of ``commands``, the commands the user named in a turn their manual page
    answered (:func:`named_commands`): "Can I limit the bandwidth it uses? — scp". Such a topic is the user's and
    the documents agree with it, so the rewrite is hedged less with the message as asked
    (:attr:`~.rewrite.Rewrite.blend`, ``SETTLED_SHARE``)."""
    return bool({t.lower() for t in carried} & commands)


def topic_command(carried: Sequence[str], commands: frozenset[str]) -> str | None:
    """The command a follow-up is about: the first of the ``carried`` terms that is, or holds as a word, one of
    ``commands``, the commands the user named in a turn their manual page answered (:func:`named_commands`):
    *make* for "How do I only see what it would run without running it? — make", *tar* for "Can it show each
    file as it goes? — tar archive". The search reads that page first
    (:meth:`~assistant_bridge.services.Services.with_topic_page`); ``None`` when no carried term names one."""
    for term in carried:
        for word in term.lower().split():
            if word in commands:
                return word
    return None


def _own_and_carried(query: str) -> tuple[str, str]:
    """A remembered query's own words and the terms it carried (after its dash), without the topic a short question
    was given in brackets: ``"Which key types can it make? — new SSH / ssh-keygen"`` → ``("Which key types can it
    make?", "new SSH / ssh-keygen")``."""
    own, _, carried = _WEAK_CARRY.sub("", query).partition(" — ")
    return own, carried


def _same_page(turn: MemoryTurn, before: MemoryTurn | None) -> bool:
    """Both answers cite the same page first: a self-contained question answered from the page the turn before
    it was answered from ("How can I leave out some files?" after a question on tar archives, both from tar(1))
    stays on that topic."""
    return before is not None and bool(turn.titles[:1]) and turn.titles[:1] == before.titles[:1]


def _after_article(word: str, text: str) -> bool:
    """``word`` stands after an article, a quantifier or a possessive in ``text`` ("le taux", "all branches",
    "its logs")."""
    return re.search(_BEFORE_NOUN + re.escape(word) + r"\b", text, re.IGNORECASE) is not None


_DETERMINERS = "the a an all every each some any both several le la les un une des du my your our".split()
_BEFORE_NOUN = rf"(?:\b(?:{'|'.join(_DETERMINERS + sorted(_POSSESSIVES))})\s+|\bl['’])"


def _plural(word: str, shortest: int = 5) -> bool:
    """A lowercase word that reads as a plural noun ("branches", "donors"); questions rarely hold verbs in -s.
    Words under ``shortest`` letters are not read as plurals ("uses", "runs") unless a caller knows the word is
    a noun ("its logs")."""
    return len(word) >= shortest and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _topic_term(text: str, lang: str) -> Term | None:
    """A term an earlier turn carried (the part of its query after the dash): it was the topic then."""
    text = text.strip()
    if not text:
        return None
    if lang == "ja":
        return Term(text, True, (text.lower(),))
    toks = _tokens(text)
    return Term(text, True, tuple(_stem(t) for t in toks), all(_is_acronym(t) for t in toks)) if toks else None


def _content_stems(text: str, lang: str) -> set[str]:
    """The stems of ``text``'s words of three letters or more that are neither stop words nor generic."""
    return {_stem(t) for t in _tokens(text) if not _is_stop(t, lang) and t.lower() not in _GENERIC and len(t) > 2}


def _replacement(substitute: str | None, lang: str, subject: bool = False) -> Callable[[_Scored], bool]:
    """Which earlier terms the X of "what about X?" replaces (see :func:`carried_terms`); ``subject``: X is what
    the rest of the message asks about, so it replaces every term but names."""
    if not substitute:
        return lambda s: False
    if lang == "ja":
        return lambda s: s.modifier
    toks = _tokens(substitute)
    name = any(_is_entity(t, first=False) and not _is_acronym(t) for t in toks)
    acronym = any(_is_acronym(t) for t in toks)
    stems = _content_stems(substitute, lang)
    ones = any(t.lower() in ("one", "ones") for t in toks)

    def replaced(s: _Scored) -> bool:
        t = s.term
        if acronym and t.acronym or name and s.kind in ("entity", "title") and not t.acronym:
            return True
        if subject and s.kind != "entity":
            # "What about xz, can it…?": xz is the topic now, not gzip(1), whose page was cited, and the question
            # is its own: the earlier questions' phrases are their details; a name stays ("New York")
            return True
        if stems & set(t.key):
            return True
        return ones and s.seen == {0} and s.kind in ("phrase", "word")

    return replaced


def _holds_topic(question: str, term: str, lang: str) -> bool:
    """The question already says a word of the conversation's topic term: "Why do municipalities issue bonds?"
    after a chat about *foreign bonds* names its topic, and the bracket would only add the earlier turn's
    qualifier ("foreign"). Japanese: the term as written."""
    if lang == "ja":
        return term.lower() in question.lower()
    return bool(_content_stems(question, lang) & _content_stems(term, lang))


class EmbeddedRewriter:
    """Resolves follow-ups from the remembered turns without a model (see the module docstring).

    :param weak: a short self-contained question (at most 12 words, no name, not a definition: "How can I
        leave out some files?") gets the conversation's best topic term (no lone word) in brackets:
        ``"How can I leave out some files? (tar archive)"``. In a chat about documentation such a question
        usually continues the topic; when it opens a new one, the bracketed term weighs little beside the
        question's own words. A question that already says a word of the term gets none (:func:`_holds_topic`).
        The bracketed term is never carried further, and the question still counts as a new topic for the turns
        before it (``query_rewrite.topic_for_short_questions``, default on).
    """

    name = "embedded"

    def __init__(self, limit: int = 3, recency: float = 0.5, answer_weight: float = 0.3, weak: bool = True) -> None:
        self.limit, self.recency, self.answer_weight, self.weak = limit, recency, answer_weight, weak

    def analyse(self, question: str, history: Sequence[MemoryTurn]) -> tuple[str, FollowUp, list[str]]:
        """``(query, follow-up decision, carried terms)``."""
        lang = language(question)
        decision = detect(question, lang)
        if not any(t.outcome not in _UNREAD for t in history):
            return question, decision, []
        commands = named_commands(history, lang)
        if not decision.follow_up:
            if not self.weak or asked_names(question) or _DEFINITION.match(question) or len(_tokens(question)) > 12:
                return question, decision, []  # it names its own topic
            weak = carried_terms(
                question, history, lang, limit=1, recency=self.recency, topic_only=True, commands=commands
            )
            if not weak or _holds_topic(question, weak[0][0], lang):
                return question, decision, []
            return f"{question.strip()} ({weak[0][0]})"[:MAX_QUERY_CHARS], decision, [weak[0][0]]
        scored = carried_terms(
            question,
            history,
            lang,
            limit=2 if decision.reason == "bare" else self.limit,
            substitute=decision.substitute,
            recency=self.recency,
            answer_weight=self.answer_weight,
            topic_only=decision.reason == "bare",
            plural=decision.plural,
            subject=decision.subject,
            parallel=_parallel(question, decision),
            commands=commands,
        )
        return compose(question, scored, decision, lang), decision, [t for t, _ in scored]

    def rewrite(self, question: str, history: Sequence[MemoryTurn]) -> str:
        return self.analyse(question, history)[0]


def _parallel(question: str, decision: FollowUp) -> bool:
    """The message asks its own thing beside the previous question: it opens with "and" ("et"), and what follows is
    no thing to ask the same about ("And for the pregnancy?") but a question of its own ("And just see what's
    inside?", "And extract it somewhere else?", whose pronoun means the topic)."""
    if _PARALLEL.match(question) is None:
        return False
    return decision.substitute is None or any(t.lower() in _OBJECTS for t in _tokens(decision.substitute))


def compose(question: str, scored: Sequence[tuple[str, float]], decision: FollowUp, lang: str) -> str:
    """The message with the carried terms appended after a dash, separated by slashes and spaces so that no
    tokenizer glues them to punctuation: ``"Which is more important? — Market Cap / NAV"``. The anaphor is
    left in place: putting a term in its place reads well when the term is right and badly when it is not,
    and searches the same."""
    if not scored:
        return question
    return f"{question.strip()} — {' / '.join(t for t, _ in scored)}"[:MAX_QUERY_CHARS]
