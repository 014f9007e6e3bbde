"""The conversational search loop (spec §B): results in, one :data:`Outcome` out. No I/O of its own.

Steps, each timed:

1. no results → :class:`NoResults` ("No results found" message);
2. :func:`~assistant_bridge.core.snippets.build_snippets` (at most five);
3. pre-generation filter ("retrieval confidence") below ``thresholds.pre_gen``, or less than
   :data:`SECOND_LOOK_MARGIN` above it: the filter's second look (:func:`_second_look`) may still find
   snippets that answer, which then are the only ones generated from; below the threshold and without them,
   a question that asks only what a named thing is gets the passages of that thing's own document that say
   what it is (:func:`_defining`); without those, :class:`IDontKnow` with ``reason="retrieval_confidence"``;
4. truncation: while the prompt is longer than ``generator.context_tokens``, drop the **last** snippet;
   nothing left → :class:`SearchFailed` with ``reason="prompt_too_long"`` (IBM: "the search fails");
5. generation; the generator declining (its answer is "I don't know") → ``reason="generator_declined"``;
6. an answer whose cited passages do not name what the question names (:func:`_off_subject`), an answer
   that writes no number to a question that asks for one (:func:`~assistant_bridge.text.asks_value`) or no
   length of time to one that asks how long something takes (:func:`~assistant_bridge.text.asks_duration`), an
   answer that states no such event to a question for the version something was added or removed in
   (:func:`~assistant_bridge.text.asked_event`), an answer that compares nothing to a question whether one thing
   is more so than another (:func:`~assistant_bridge.text.asks_comparison`), or a
   post-generation filter ("response confidence") below ``thresholds.post_gen`` →
   ``reason="response_confidence"``;
7. otherwise :class:`Answer` with **all** the search results, not only the ones that were cited.

Invariants: every outcome carries ``timings`` (milliseconds per stage that ran, plus ``total``) and
``scores`` (the scores computed before the loop stopped). A score equal to its threshold passes. Each
threshold belongs to one stage: the retrieval threshold is never applied to the response score.

``confidence_scores.threshold`` (a single number in the watsonx wire format, documented as "if either the
pre_gen or post_gen score is below this threshold…") reports the **post-generation** threshold, the last
gate the answer passed; both thresholds are kept in :attr:`Answer.thresholds` for debug output.

Errors raised by the filters or the generator (for example :class:`~assistant_bridge.errors.GeneratorError`)
propagate unchanged: the HTTP layer turns them into the "connectivity issue" message.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from assistant_bridge.core.citations import Citation, extractiveness
from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.snippets import Snippet, build_snippets
from assistant_bridge.text import (
    Overview,
    asked_event,
    asks_comparison,
    asks_count,
    asks_default,
    asks_duration,
    asks_value,
    compares,
    counted_thing,
    counts_unit,
    documents_name,
    gives_value,
    holds_code_names,
    holds_count,
    match_form,
    mentions,
    named_manual_pages,
    names_duration,
    overview,
    passage_defines,
    states_default,
    states_default_number,
    states_event,
    titles_subject,
)

if TYPE_CHECKING:
    from assistant_bridge.core.generation import Generation, Generator

ResponseLength = Literal["concise", "moderate", "verbose"]
IDKReason = Literal["retrieval_confidence", "generator_declined", "response_confidence"]
Clock = Callable[[], float]
VERBATIM = 1.0  # extractiveness of an answer made only of sentences copied from the snippets
# a pre-generation score less than this above its threshold is as doubtful as one below it: the second look
# runs for it too (:func:`_second_look`), and the snippets it vouches for become the only ones answered from
SECOND_LOOK_MARGIN = 0.05
# Snippets no sentence of which holds this share of the question's words (the pre-filter's ``coverage``) are about
# its subject but say nothing of what it asks as often as not: their pre-generation score must reach the level's
# ``pre_gen_low_coverage`` (``filters_models/thresholds.json``), not only its ``pre_gen``. On CLAPNQ train pairs a
# question over another passage of its own article holds less than half its words in one sentence 74 % of the
# time, over its answering passage 37 %; at the default level's false "I don't know" target, 0.5 declined the most
# of the other passages (76.7 %; 0.4: 74.1 %, 0.6: 74.6 %; filters_models/calibrate_coverage.py).
LOW_COVERAGE = 0.5
# A question that asks which option of a manual page does something, whose words no option entry of the page
# holds this much of (``option_words`` of :func:`prepare_generation`), asks for an option the page does not
# have. On the real-documents benchmark's such questions in English and French over a page in their own
# language (docs/benchmarks.md), the answerable ones hold at least 0.35 of their words in one entry; most
# unanswerable ones (S3 uploads, PDF to text, encryption…) hold less than 0.3, not all (YAML input: 0.39).
OPTION_WORDS_MIN = 0.3
# ... and one whose words an option entry of the page holds this much of, each of them used by the page, asks for
# that option: the turn goes on when the pre-filter refuses it (its window is a passage of a dozen options: "Which
# curl option fetches the headers only?" and curl's -I, --head scored 0.16). No question the benchmark's
# documents cannot answer scores above 0.39.
OPTION_WORDS_ANSWER = 0.5
# ... and one with this many words its page never uses (stop words aside) asks for something the page does not
# document ("encrypts" and "password" for zstd, "Amazon" and "S3" for rsync): none of the benchmark's 66 answerable
# such questions has two, 8 of its 11 unanswerable ones have.
OPTION_UNKNOWN_WORDS = 2
# ... and each word the page never uses asks this much more of the share an option entry holds: "Which lsof option
# sends its output to a remote syslog server?" (lsof never writes "syslog") holds 0.33 of its words in one entry.
# Chosen on the benchmark's splits up to fresh20 (any step from 0.04 to 0.07 declines what they cannot answer and
# keeps what they can), reported on the later ones (docs/benchmarks.md).
OPTION_UNKNOWN_STEP = 0.05


@dataclass(frozen=True)
class OptionWords:
    """How a question that asks which option of a named manual page does something matches that page:
    ``share``, the largest share of its words one option entry holds; ``unknown``, how many of its words the page
    never uses, of the ``asked`` words that say what it asks for. ``entries``: the question asks for an option,
    which the page's option entries list; a question that asks for a command or a keyword of the page ("Which
    tmux command records the session as a video file?") is judged by its unknown words only, since a page's
    commands need not be entries of it (parted's ``rm partition``)."""

    share: float
    unknown: int
    entries: bool = True
    asked: int = 0  # how many words say what it asks for (0: not counted)
    unwritten: bool = False  # none of the results' documents writes the program it asks an option of
    prose: bool = False  # the page writes its options in prose, not as entries: more than half the asked words

    @property
    def missing(self) -> bool:
        """The page has no such option: :data:`OPTION_UNKNOWN_WORDS` words the page never uses, or half the words
        that say what the question asks for ("Which parted command encrypts a partition?"; of a Japanese question,
        its kanji and katakana words: "diff でファイルを暗号化するオプションは？"), or an option question
        whose words no entry holds enough of, more asked of it for each unknown word. Of a manual page that writes
        its options in prose (``prose``: French crontab(1)'s "L'option -l permet d'afficher…"), more than half the
        words that say what the question asks for ("Quelle option de crontab exporte la crontab au format JSON ?")."""
        if self.prose:  # no entry to match, and a paraphrase misses a word or two of a page's prose
            return 2 * self.unknown > self.asked
        if self.unwritten or self.unknown >= OPTION_UNKNOWN_WORDS or (self.asked and 2 * self.unknown >= self.asked):
            return True
        return self.entries and self.share < OPTION_WORDS_MIN + OPTION_UNKNOWN_STEP * self.unknown

    @property
    def found(self) -> bool:
        """The page has it."""
        return self.entries and self.share >= OPTION_WORDS_ANSWER and self.unknown == 0

    def scores(self) -> dict[str, float]:
        """As the turn's scores report it."""
        return {"option_words": self.share, "option_unknown_words": self.unknown}


class PreFilterLike(Protocol):
    def score(self, query: str, snippets: Sequence[str]) -> float: ...


@runtime_checkable
class SecondLookLike(Protocol):
    """A pre-filter that can read further when its score is low (``filters.OnnxPreFilter.second_look``)."""

    def second_look(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]: ...


@runtime_checkable
class CoverageLike(Protocol):
    """A pre-filter that says how much of the question one sentence of the snippets holds
    (:class:`~assistant_bridge.generators.coverage.CoveringPreFilter`, which the service wraps its filter in)."""

    def coverage(self, query: str, snippets: Sequence[str], titles: Sequence[str] = ()) -> float: ...


class PostFilterLike(Protocol):
    def score(self, query: str, snippets: Sequence[str], answer: str) -> float: ...


class ThresholdsLike(Protocol):
    @property
    def pre_gen(self) -> float: ...

    @property
    def post_gen(self) -> float: ...

    # and, optionally, ``pre_gen_low_coverage`` (:func:`_pre_gen_floor`; ``filters.Thresholds`` has it)


@dataclass(frozen=True)
class ConfidenceScores:
    """The watsonx ``confidence_scores`` object (no ``retrieval`` key exists there)."""

    threshold: float
    pre_gen: float
    post_gen: float
    extractiveness: float

    def to_json(self) -> dict[str, float]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class _Base:
    timings: Mapping[str, float] = field(default_factory=dict)
    scores: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class NoResults(_Base):
    """The search returned nothing."""


@dataclass(frozen=True)
class IDontKnow(_Base):
    """A gate said no. ``generated_text`` is the discarded answer when generation ran (debug only)."""

    reason: IDKReason = "retrieval_confidence"
    search_results: tuple[SearchResult, ...] = ()
    snippets_used: tuple[Snippet, ...] = ()
    generated_text: str | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchFailed(_Base):
    """Nothing could be sent to the generator (IBM: "When it has no text, the search fails")."""

    reason: Literal["prompt_too_long"] = "prompt_too_long"
    search_results: tuple[SearchResult, ...] = ()


@dataclass(frozen=True)
class Answer(_Base):
    """A generated answer that passed both gates."""

    text: str = ""
    citations: tuple[Citation, ...] = ()
    confidence_scores: ConfidenceScores = ConfidenceScores(0.0, 0.0, 0.0, 0.0)
    search_results: tuple[SearchResult, ...] = ()
    snippets_used: tuple[Snippet, ...] = ()
    model: str = ""
    thresholds: Mapping[str, float] = field(default_factory=dict)


Outcome = NoResults | IDontKnow | SearchFailed | Answer
_OUTCOME_NAMES: dict[type, str] = {
    Answer: "answer",
    IDontKnow: "idk",
    NoResults: "no_results",
    SearchFailed: "search_failed",
}


def outcome_name(outcome: Outcome) -> str:
    """The outcome's name in logs, metrics and responses: ``answer``, ``idk``, ``no_results``, ``search_failed``."""
    return _OUTCOME_NAMES[type(outcome)]


class _Timer:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.started = clock()
        self._last = self.started
        self.timings: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = self._clock()
        self.timings[stage] = (now - self._last) * 1000.0
        self._last = now

    def done(self) -> dict[str, float]:
        self.timings["total"] = (self._clock() - self.started) * 1000.0
        return dict(self.timings)


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare_generation` hands to the generator, and what :func:`finish_generation` needs."""

    query: str
    results: tuple[SearchResult, ...]
    snippets: tuple[Snippet, ...]
    pre_gen: float
    timings: Mapping[str, float]
    started: float
    names: tuple[str, ...] = ()  # what the question names (``must_mention``): the answer's passages must too
    pages: tuple[str, ...] = ()  # the results' manual pages the question names (:func:`named_pages`)
    first_look: float | None = None  # the pre-filter's score when its second look let the turn through
    defined: bool = False  # let through because the snippets define what the question asks about (:func:`_defining`)
    message: str = ""  # the user's own words (``query`` may be a conversation turn's rewrite)
    option_words: OptionWords | None = None  # how an option question matches the page it names


def _thresholds_json(thresholds: ThresholdsLike) -> dict[str, float]:
    return {"pre_gen": float(thresholds.pre_gen), "post_gen": float(thresholds.post_gen)}


def _unmentioned(names: Sequence[str], results: Sequence[SearchResult]) -> bool:
    """One of ``names`` is not mentioned by ``results`` taken together (titles and passages)."""
    if not names:
        return False
    form = match_form(" ".join(f"{r.title} {_passages(r)}" for r in results))
    return _unnamed(names, form)


def _passages(result: SearchResult) -> str:
    """A result's passage and its highlights, as one text to look for names in."""
    return f"{result.body} {' '.join(result.highlight_body or ())}"


def _unqualified(names: Sequence[str], pages: Sequence[str], message: str) -> list[str]:
    """``names`` without the acronyms that qualify a manual page the message names: "GNU" in "How do I create a
    new window in GNU screen?" when screen(1) was found. The page names what is asked about; its manual need
    not say "GNU" anywhere near the answer. Nor a plural acronym alone ("process IDs", "URLs", "CPUs"): it
    names a kind of thing, which documents write in many ways ("PIDs", "pid"), not one product they may not
    cover."""
    form = match_form(message)
    return [
        n
        for n in names
        if not (_acronym(n) and any(mentions(form, f"{n} {page}") for page in pages)) and not _PLURAL_ACRONYM.match(n)
    ]


_PLURAL_ACRONYM = re.compile(r"^[A-Z]{2,}s$")


def _within(asked: Overview | None, name: str) -> bool:
    """``name`` is where the subject of a question about what a thing is lives, not the subject
    (:attr:`~assistant_bridge.text.Overview.within`)."""
    return asked is not None and asked.within is not None and mentions(match_form(asked.within), name)


def _acronym(name: str) -> bool:
    """All capitals, spaces aside: "GNU", "TCP", not "VS Code"."""
    return name.replace(" ", "").isupper()


def _unnamed(names: Sequence[str], form: str) -> bool:
    """One of ``names`` is not mentioned by the :func:`~assistant_bridge.text.match_form` ``form``
    (:func:`_mentioned`)."""
    return any(not _mentioned(form, name) for name in names)


# a name made an adjective ("MySQL-style backquotes", "Unix-like systems", "POSIX-compatible"): the name is what
# the documents must mention
_NAME_AS_ADJECTIVE = re.compile(r"-(?:style|like|compatible|based|specific|only|friendly|flavou?red)$", re.IGNORECASE)


# where a name written in camel case splits into the words its package or prose may spell apart ("NetworkManager" and
# "network-manager" or "Network Manager")
_CAMEL_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _mentioned(form: str, name: str) -> bool:
    """The whole name, or for a name of several words its longest word when that has 5 letters or more
    ("Roosevelt" for "Franklin D. Roosevelt"; "VS Code" only as a whole); a name made an adjective
    (:data:`_NAME_AS_ADJECTIVE`) as the name alone; a name in camel case as its words apart ("network-manager" for
    "NetworkManager"); that longest word in the plural too ("developers-reference" for "Debian Developer")."""
    name = _NAME_AS_ADJECTIVE.sub("", name)
    if mentions(form, name) or mentions(form, _CAMEL_CASE.sub(" ", name)):
        return True
    words = name.split()
    longest = max(words, key=len)
    # that word in the plural as well: "Debian Developer" of "the Debian Developer's Reference" is named by the
    # page "developers-reference"
    return len(words) > 1 and len(longest) >= 5 and (mentions(form, longest) or mentions(form, f"{longest}s"))


# a document titled by a package's name as it is spelled lower case ("markdown-it-py", "python-dotenv", "orjson",
# "tqdm-README" for a README named after its file): the question names a project the way the capitalised names
# of :func:`~assistant_bridge.conversation.rewrite_embedded.asked_names` are not
_PACKAGE_TITLE = re.compile(r"\s*([a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*)(?:-README)?\s*$")


def named_pages(message: str, results: Sequence[SearchResult]) -> tuple[str, ...]:
    """The commands whose manual pages are among ``results`` and that ``message`` names as a word: ``htop`` for
    "What is the default port of the htop web interface?" when htop(1) was found; and the packages whose
    documents are titled by their lower-case names (:data:`_PACKAGE_TITLE`): "Which markdown-it-py version
    dropped support for Python 3.7?" is not answered by python-dotenv's changelog."""
    titles = [r.title or "" for r in results]
    form = match_form(message)
    packages = {
        name
        for title in titles
        if (match := _PACKAGE_TITLE.match(title)) and len(name := match.group(1)) >= 3 and mentions(form, name)
    }
    return tuple(sorted(named_manual_pages(message, titles) | packages))


def _off_subject(
    names: Sequence[str],
    pages: Sequence[str],
    generation: Generation,
    results: Sequence[SearchResult] = (),
    message: str = "",
) -> bool:
    """The answer is drawn only from passages that never name what the question asks about: "What is the
    default port of PostgreSQL?" answered from a page about Debian's ports, which other results tied to
    PostgreSQL. Acronyms are left out ("Which TCP port does rsync listen on?" is answered by a passage that
    says "port 873" without "TCP"): they qualify the question more often than they are its subject. The
    same for the manual pages the question names (:func:`named_pages`), any one of them: "the default port of
    the htop web interface" answered from wget(1)'s FTPS port. A name that most of ``results`` mention (the
    product the documents are about: "SQLite" over SQLite's documentation) is named for a cited passage by
    its page: the other passages of that page among ``results`` count (:func:`_same_pages`). A cited page's
    address (link, file name) names what it is about as well (:func:`_address_words`). Such a name is not
    asked of cited passages that write a name ``message`` writes as code (:func:`~assistant_bridge.text.code_names`):
    "What does ifnull() return in SQLite?" is answered by the entry of ``ifnull(X,Y)`` on the page of SQL
    functions, which never writes "SQLite"."""
    named = [n for n in names if not _acronym(n)]
    if not generation.citations or not (named or pages):
        return False
    said = [f"{c.title} {c.body} {_address_words(c, results)}" for c in generation.citations]
    cited = " ".join(said)
    form = match_form(cited)
    lead = match_form(said[0])  # the passage the answer leads with
    common = [n for n in named if _mostly_mentioned(n, results)]
    if common and any(holds_code_names(message, [c.text for c in generation.citations])):
        named = [n for n in named if n not in common]
    paged = match_form(f"{cited} {_same_pages(generation, results)}") if common else form
    # and the passage it leads with names one of them: "What is the default port of PostgreSQL?" led by wget(1)'s
    # FTPS port is not saved by a later sentence from a page that compares SQLite with PostgreSQL
    lead_names = [n for n in named if n not in common]
    off_lead = bool(lead_names) and not any(_mentioned(lead, n) for n in lead_names)
    return (
        off_lead
        or any(not _mentioned(paged if n in common else form, n) for n in named)
        or (bool(pages) and not any(mentions(form, p) for p in pages))
    )


def _address_words(citation: Citation, results: Sequence[SearchResult]) -> str:
    """The words of the address of the result ``citation`` cites, its link and its file name (``filename``
    metadata): a page's address names what it is about when its passages do not ("sqlite3-doc-lang_insert.html"
    or "https://sqlite.org/lang_insert.html" name SQLite, whose INSERT page never writes "SQLite" near its
    REPLACE alias)."""
    if not 0 <= citation.search_result_index < len(results):
        return ""
    result = results[citation.search_result_index]
    address = f"{result.url or ''} {result.result_metadata.get('filename') or ''}"
    return " ".join(_LETTER_RUN.findall(address))


_LETTER_RUN = re.compile(r"[^\W\d_]+")


def _mostly_mentioned(name: str, results: Sequence[SearchResult]) -> bool:
    """At least half of ``results`` mention ``name`` (:func:`_mentioned`), in their titles or passages."""
    said = sum(_mentioned(match_form(f"{r.title} {_passages(r)}"), name) for r in results)
    return 2 * said >= len(results) > 0


def _same_pages(generation: Generation, results: Sequence[SearchResult]) -> str:
    """The passages among ``results`` of the pages the answer cites (same title and link): a page names its
    subject somewhere, not in each passage. "Which SQLite syntax changes the name of a column of a table?" is
    answered by "The RENAME COLUMN TO syntax changes the column-name…", whose page (ALTER TABLE) says
    "SQLite" in its other passages."""
    cited = {
        (results[c.search_result_index].title, results[c.search_result_index].url)
        for c in generation.citations
        if 0 <= c.search_result_index < len(results)
    }
    return " ".join(_passages(r) for r in results if (r.title, r.url) in cited)


def _pre_gen_floor(
    prefilter: PreFilterLike,
    thresholds: ThresholdsLike,
    query: str,
    snippets: Sequence[Snippet],
    scores: dict[str, Any],
) -> float:
    """The pre-generation score the snippets must reach: the level's ``pre_gen``, or its ``pre_gen_low_coverage``
    when no sentence of the snippets holds :data:`LOW_COVERAGE` of the question's words (reported as the turn's
    ``coverage`` score). ``pre_gen`` alone for a pre-filter that cannot tell and for thresholds without the rule
    (a request's own ``thresholds``)."""
    low = getattr(thresholds, "pre_gen_low_coverage", None)
    if low is None or not isinstance(prefilter, CoverageLike):
        return float(thresholds.pre_gen)
    covered = float(prefilter.coverage(query, [s.text for s in snippets], [s.title for s in snippets]))
    scores["coverage"] = covered
    return max(float(thresholds.pre_gen), float(low)) if covered < LOW_COVERAGE else float(thresholds.pre_gen)


def _second_look(prefilter: PreFilterLike, query: str, snippets: Sequence[Snippet]) -> list[tuple[int, float]]:
    """The snippets a pre-filter that reads more than it scores vouches for after all: its score comes from the
    passage window that shares the most words with the query, which is often a page's introduction rather than
    the paragraph that answers ("経費精算の締め切りはいつですか" and "経費は、支出した日から三十日以内に申請して
    ください。"). Answering then comes only from the vouched snippets, so the answer is drawn from what the
    filter read. Empty for a pre-filter without a second look."""
    if not isinstance(prefilter, SecondLookLike):
        return []
    return [(i, p) for i, p in prefilter.second_look(query, [s.text for s in snippets]) if 0 <= i < len(snippets)]


def _defining(asked: Overview | None, snippets: Sequence[Snippet]) -> list[int]:
    """The snippets that say what the message asks about when it asks only what a named thing is or does
    ("What does rsync do?", ``asked``: :func:`~assistant_bridge.text.overview`): passages of the subject's own
    document (its title or its file's name names it, :func:`~assistant_bridge.text.titles_subject`) holding a
    sentence that defines
    it (:func:`~assistant_bridge.text.passage_defines`). Such a question is answerable by what the document
    says first, whatever the pre-filter makes of a question with no words but the name (a French question about
    an English page scores low). A thing asked about within another ("What is trange in tqdm?",
    :attr:`~assistant_bridge.text.Overview.within`) is defined in that other's document too ("trange(N) can be
    also used as a convenient shortcut for tqdm(range(N))" in tqdm's README)."""
    if asked is None:
        return []
    subject = asked.subject
    owners = [subject] if asked.within is None else [subject, asked.within]
    return [
        i
        for i, s in enumerate(snippets)
        if any(titles_subject(s.title, owner, s.filename) for owner in owners) and passage_defines(subject, s.text)
    ]


def _undefined(asked: Overview | None, snippets: Sequence[Snippet]) -> bool:
    """The message asks only what a named thing is (:attr:`~assistant_bridge.text.Overview.named`; "What is a Roth
    IRA?" and "What is the expense policy?" describe a thing, documents say what it is in many ways) and no
    snippet is that thing's own document (its title names it), says what it is in a sentence or documents it as a
    reference does (a table row or a syntax line of its own, a sentence that gives it its name:
    :func:`~assistant_bridge.text.documents_name`): "What is PostgreSQL?" over SQLite's documentation, whose pages
    compare SQLite with it but never say what it is."""
    if asked is None or not asked.named:
        return False
    subject = asked.subject
    return not any(
        titles_subject(s.title, subject, s.filename)
        or passage_defines(subject, s.text, kinds=("what", "name"))
        or documents_name(subject, s.text)
        for s in snippets
    )


def prepare_generation(
    query: str,
    results: Sequence[SearchResult],
    *,
    prefilter: PreFilterLike,
    generator: Generator,
    thresholds: ThresholdsLike,
    clock: Clock = time.perf_counter,
    must_mention: Sequence[str] = (),
    message: str | None = None,
    option_words: OptionWords | None = None,
) -> Prepared | NoResults | IDontKnow | SearchFailed:
    """Steps 1–4. Returns :class:`Prepared` when the generator should run, or the outcome that ends the turn.

    ``must_mention``: names the user's question asks about ("VS Code", "GitLab"); when the results do not
    mention one of them (titles and passages, :func:`_mentioned`), the turn is an "I don't know" for
    retrieval confidence whatever the pre-generation score. In a conversation the query also carries the
    topic of earlier turns, which finds on-topic passages that say nothing of what was asked.

    ``message``: the user's own words (default ``query``; a conversation turn's query is its rewrite), for the
    manual pages the answer must come from or name (:func:`named_pages`, checked by :func:`finish_generation`).

    ``option_words``: when the message asks which option of a named manual page does something, how it matches
    that page (:class:`OptionWords`, from the source's ``option_words``). When the page has no such option
    (:attr:`OptionWords.missing`) the turn is an "I don't know" for retrieval confidence: "Which zstd option
    encrypts the compressed file with a password?" finds zstd's options about compressed files, which the
    pre-filter takes for an answer. When it has it (:attr:`OptionWords.found`), the turn goes on though the
    pre-filter refuses.

    Split from :func:`run_conversational_search` so that a streaming caller can run
    ``generator.stream`` itself between this and :func:`finish_generation`.
    """
    timer = _Timer(clock)
    all_results = tuple(results)
    if not all_results:
        return NoResults(timings=timer.done(), scores={})
    snippets = build_snippets(all_results)
    timer.lap("snippets")
    pre = float(prefilter.score(query, [s.text for s in snippets]))
    timer.lap("pre_filter")
    scores: dict[str, Any] = {"pre_gen": pre}
    message = query if message is None else message
    # a conversation turn's rewrite carries terms of earlier turns that its passages need not hold: not measured
    floor = _pre_gen_floor(prefilter, thresholds, query, snippets, scores) if message == query else thresholds.pre_gen
    pages = named_pages(message, all_results)
    must_mention = _unqualified(must_mention, pages, message)
    asked = overview(message)  # "What does rsync do?"
    unmentioned = _unmentioned(must_mention, all_results) or _undefined(asked, snippets)
    if option_words is not None:  # reported with every outcome
        scores.update(option_words.scores())
        unmentioned = unmentioned or option_words.missing
    if pre < floor + SECOND_LOOK_MARGIN and not unmentioned:
        vouched = _second_look(prefilter, query, snippets)
        timer.lap("second_look")
        if vouched:
            scores.update(pre_gen=max(p for _, p in vouched), pre_gen_first_look=pre)
            snippets = [snippets[i] for i in sorted(i for i, _ in vouched)]
        elif pre < floor and (defining := _defining(asked, snippets)):
            scores.update(pre_gen=floor, pre_gen_first_look=pre, defined=1.0)
            snippets = [snippets[i] for i in defining]
        elif pre < floor and option_words is not None and option_words.found:
            scores.update(pre_gen=floor, pre_gen_first_look=pre)
    if scores["pre_gen"] < floor or unmentioned:
        return IDontKnow(
            reason="retrieval_confidence",
            timings=timer.done(),
            scores=scores,
            search_results=all_results,
            snippets_used=tuple(snippets),
            thresholds=_thresholds_json(thresholds),
        )
    while snippets and generator.prompt_tokens(query, snippets) > generator.context_tokens:
        snippets.pop()
    timer.lap("truncation")
    if not snippets:
        return SearchFailed(timings=timer.done(), scores=scores, search_results=all_results)
    return Prepared(
        query=query,
        results=all_results,
        snippets=tuple(snippets),
        pre_gen=scores["pre_gen"],
        first_look=scores.get("pre_gen_first_look"),
        defined="defined" in scores,
        timings=dict(timer.timings),
        started=timer.started,
        # "What is REPLACE in SQLite?" over SQLite's documentation: the REPLACE page need not say "SQLite", the
        # place the subject lives (Overview.within) that most results name
        names=tuple(n for n in must_mention if not (_within(asked, n) and _mostly_mentioned(n, all_results))),
        pages=pages,
        message=message,
        option_words=option_words,
    )


def finish_generation(
    prepared: Prepared,
    generation: Generation,
    *,
    postfilter: PostFilterLike,
    thresholds: ThresholdsLike,
    generation_ms: float | None = None,
    clock: Clock = time.perf_counter,
) -> IDontKnow | Answer:
    """Steps 5–7 for a finished :class:`~assistant_bridge.generators.base.Generation`."""
    timings = dict(prepared.timings)
    if generation_ms is not None:
        timings["generation"] = generation_ms
    mark = clock()
    snippet_texts = [s.text for s in prepared.snippets]
    scores: dict[str, Any] = {"pre_gen": prepared.pre_gen}
    if prepared.first_look is not None:
        scores["pre_gen_first_look"] = prepared.first_look
    if prepared.defined:
        scores["defined"] = 1.0
    if prepared.option_words is not None:
        scores.update(prepared.option_words.scores())
    common: dict[str, Any] = {
        "search_results": prepared.results,
        "snippets_used": prepared.snippets,
        "thresholds": _thresholds_json(thresholds),
    }
    if generation.declined:
        timings["total"] = (clock() - prepared.started) * 1000.0
        return IDontKnow(
            reason="generator_declined", timings=timings, scores=scores, generated_text=generation.text, **common
        )
    # "How much does a Debian support contract cost?" answered with sentences that give no number, "How many
    # seconds does tomli wait…" with sentences that count no seconds, "What is the maximum length of a file name
    # under /usr?" with sentences that write no number, "How long does lintian-brush take…" with sentences that
    # name no length of time, "Which SQLite version removed STRICT tables?" with one that says which introduced
    # them: they answer another question; so "Is sed faster than awk?" answered with sed(1)'s list of related
    # commands, which compares nothing, and "What is Black's default line length?" with a changelog line that
    # says no default
    counted = counted_thing(prepared.query)
    # "From how many possible completions does readline ask…, by default?": "The default limit is '100'." counts them
    default_given = asks_default(prepared.message) and states_default_number(generation.text)
    if (
        _off_subject(prepared.names, prepared.pages, generation, prepared.results, prepared.message)
        or (asks_count(prepared.query) and not holds_count(generation.text))
        or (asks_value(prepared.message) and not gives_value(generation.text))
        or (asks_default(prepared.message) and not states_default(generation.text, prepared.message))
        or (asks_duration(prepared.message) and not names_duration(generation.text))
        or ((event := asked_event(prepared.message)) is not None and not states_event(event, generation.text))
        or (counted and not any(counts_unit(generation.text, unit) for unit in counted) and not default_given)
        or ((compared := asks_comparison(prepared.message)) and not compares(generation.text, compared))
    ):
        timings["total"] = (clock() - prepared.started) * 1000.0
        return IDontKnow(
            reason="response_confidence", timings=timings, scores=scores, generated_text=generation.text, **common
        )
    post = float(postfilter.score(prepared.query, snippet_texts, generation.text))
    now = clock()
    timings["post_filter"] = (now - mark) * 1000.0
    scores["post_gen"] = post
    extract = extractiveness(generation.text, snippet_texts)
    scores["extractiveness"] = extract
    # The post-filter judges whether an answer's own wording is supported. A verbatim extract is supported by
    # construction, and whether its passages answer the question was the pre-filter's decision: on real
    # passages the post-filter's score of extracts carries no signal (docs/conversational-search.md), so it is
    # reported for them but does not decide.
    if post < thresholds.post_gen and extract < VERBATIM:
        timings["total"] = (clock() - prepared.started) * 1000.0
        return IDontKnow(
            reason="response_confidence", timings=timings, scores=scores, generated_text=generation.text, **common
        )
    citations = tuple(
        dataclasses.replace(c, body=prepared.results[c.search_result_index].body)
        if 0 <= c.search_result_index < len(prepared.results)
        else c
        for c in generation.citations
    )
    timings["citations"] = (clock() - now) * 1000.0
    timings["total"] = (clock() - prepared.started) * 1000.0
    return Answer(
        text=generation.text,
        citations=citations,
        confidence_scores=ConfidenceScores(
            threshold=float(thresholds.post_gen), pre_gen=prepared.pre_gen, post_gen=post, extractiveness=extract
        ),
        timings=timings,
        scores=scores,
        model=generation.model,
        **common,
    )


def run_conversational_search(
    query: str,
    results: Sequence[SearchResult],
    *,
    prefilter: PreFilterLike,
    postfilter: PostFilterLike,
    generator: Generator,
    thresholds: ThresholdsLike,
    response_length: ResponseLength = "moderate",
    clock: Clock = time.perf_counter,
    must_mention: Sequence[str] = (),
    message: str | None = None,
    option_words: OptionWords | None = None,
) -> Outcome:
    """Run the whole loop for one turn (see the module docstring for the steps).

    :param query: the user's (possibly rewritten) query.
    :param results: the search results, in rank order; all of them are returned with an answer.
    :param response_length: ``concise``, ``moderate`` (IBM's default) or ``verbose``.
    :param must_mention: names the user asked about (see :func:`prepare_generation`).
    :param message: the user's own words when ``query`` is a rewrite (see :func:`prepare_generation`).
    :param option_words: how an option question matches the page it names (see :func:`prepare_generation`).
    :raises GeneratorError: when the generator fails (not caught here).
    """
    prepared = prepare_generation(
        query,
        results,
        prefilter=prefilter,
        generator=generator,
        thresholds=thresholds,
        clock=clock,
        must_mention=must_mention,
        message=message,
        option_words=option_words,
    )
    if not isinstance(prepared, Prepared):
        return prepared
    start = clock()
    generation = generator.generate(query, list(prepared.snippets), response_length)
    elapsed = (clock() - start) * 1000.0
    return finish_generation(
        prepared, generation, postfilter=postfilter, thresholds=thresholds, generation_ms=elapsed, clock=clock
    )
