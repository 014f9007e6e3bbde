"""The conversational search loop: every outcome, truncation, timings, scores, all results returned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest

from assistant_bridge.core.generation import Generation
from assistant_bridge.core.loop import (
    LOW_COVERAGE,
    OPTION_UNKNOWN_STEP,
    OPTION_UNKNOWN_WORDS,
    OPTION_WORDS_ANSWER,
    OPTION_WORDS_MIN,
    Answer,
    IDontKnow,
    NoResults,
    OptionWords,
    Prepared,
    SearchFailed,
    finish_generation,
    named_pages,
    prepare_generation,
    run_conversational_search,
)
from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.errors import GeneratorError
from assistant_bridge.generators import FakeGenerator

pytestmark = pytest.mark.unit


class Pre:
    def __init__(self, value: float) -> None:
        self.value = value
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, snippets: Sequence[str]) -> float:
        self.calls.append((query, list(snippets)))
        return self.value


class Post:
    def __init__(self, value: float) -> None:
        self.value = value
        self.calls: list[tuple[str, list[str], str]] = []

    def score(self, query: str, snippets: Sequence[str], answer: str) -> float:
        self.calls.append((query, list(snippets), answer))
        return self.value


@dataclass(frozen=True)
class T:
    pre_gen: float
    post_gen: float
    pre_gen_low_coverage: float | None = None


class Clock:
    """Advances one millisecond per reading, so every stage takes a known, positive time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


RESULTS = [
    SearchResult("Reset", "Go to Settings. Then choose Reset.", url="https://a"),
    SearchResult("VPN", "Install the client. Sign in with SSO."),
    SearchResult("Extra", "Unrelated text about lunch."),
]


def run(results=RESULTS, pre=0.9, post=0.9, generator=None, thresholds=T(0.5, 0.5), **kw):  # type: ignore[no-untyped-def]
    return run_conversational_search(
        "how do I reset",
        results,
        prefilter=Pre(pre) if isinstance(pre, float) else pre,
        postfilter=Post(post) if isinstance(post, float) else post,
        generator=generator or FakeGenerator(),
        thresholds=thresholds,
        clock=Clock(),
        **kw,
    )


def test_no_results() -> None:
    out = run(results=[])
    assert isinstance(out, NoResults)
    assert "total" in out.timings and out.scores == {}


def test_answer_carries_all_results_scores_citations_and_timings() -> None:
    gen = FakeGenerator()
    out = run(generator=gen)
    assert isinstance(out, Answer)
    assert out.search_results == tuple(RESULTS)  # all, including the one never cited
    assert out.text == "Go to Settings. Install the client. Unrelated text about lunch."
    assert [c.search_result_index for c in out.citations] == [0, 1, 2]
    assert out.citations[0].body == RESULTS[0].body
    cs = out.confidence_scores
    assert (cs.pre_gen, cs.post_gen, cs.threshold) == (0.9, 0.9, 0.5)
    assert cs.extractiveness == 1.0
    assert set(out.confidence_scores.to_json()) == {"threshold", "pre_gen", "post_gen", "extractiveness"}
    assert out.scores == {"pre_gen": 0.9, "post_gen": 0.9, "extractiveness": 1.0}
    for stage in ("snippets", "pre_filter", "truncation", "generation", "post_filter", "total"):
        assert out.timings[stage] > 0
    assert out.timings["total"] >= sum(v for k, v in out.timings.items() if k != "total")
    assert out.thresholds == {"pre_gen": 0.5, "post_gen": 0.5}
    assert gen.calls[0][2] == "moderate"
    assert len(out.snippets_used) == 3


def test_response_length_is_passed_to_the_generator() -> None:
    gen = FakeGenerator()
    run(generator=gen, response_length="concise")
    assert gen.calls[0][2] == "concise"


def test_low_pre_gen_is_idk_without_generation() -> None:
    gen = FakeGenerator()
    post = Post(0.9)
    out = run(pre=0.2, post=post, generator=gen)
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence"
    assert out.scores == {"pre_gen": 0.2}
    assert gen.calls == [] and post.calls == []
    assert out.generated_text is None and out.search_results == tuple(RESULTS)
    assert "pre_filter" in out.timings and "generation" not in out.timings


def test_prefilter_sees_the_snippet_texts() -> None:
    pre = Pre(0.9)
    run(pre=pre)
    assert pre.calls == [("how do I reset", [r.body for r in RESULTS])]


def test_a_verbatim_extract_is_not_refused_by_the_post_filter_and_its_score_is_kept() -> None:
    out = run(post=0.1)  # the fake generator copies the snippets' first sentences
    assert isinstance(out, Answer)
    assert out.scores["post_gen"] == 0.1 and out.scores["extractiveness"] == 1.0


def test_scores_equal_to_threshold_pass() -> None:
    assert isinstance(run(pre=0.5, post=0.5), Answer)


def test_generator_declined() -> None:
    post = Post(0.9)
    out = run(generator=FakeGenerator(declined=True), post=post)
    assert isinstance(out, IDontKnow) and out.reason == "generator_declined"
    assert out.generated_text == "I don't know"
    assert post.calls == []
    assert "generation" in out.timings


def test_low_post_gen_is_idk_with_the_discarded_text() -> None:
    out = run(post=0.1, generator=FakeGenerator(reword=True))
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert out.scores["post_gen"] == 0.1 and out.scores["pre_gen"] == 0.9 and out.scores["extractiveness"] < 1
    assert out.generated_text and out.generated_text.startswith("In other words, Go to Settings.")
    assert {"generation", "post_filter", "total"} <= set(out.timings)


def test_each_threshold_gates_only_its_own_stage() -> None:
    assert isinstance(run(pre=0.3, post=0.95, thresholds=T(0.2, 0.9)), Answer)
    out = run(pre=0.95, post=0.3, thresholds=T(0.9, 0.2))
    assert isinstance(out, Answer) and out.confidence_scores.threshold == 0.2


def test_truncation_drops_snippets_from_the_end() -> None:
    # each snippet costs 10 tokens; a budget of 25 keeps the first two
    gen = FakeGenerator(context_tokens=25, token_counter=lambda q, s: 10 * len(s))
    out = run(generator=gen)
    assert isinstance(out, Answer)
    kept = gen.calls[0][1]
    assert [s.result_index for s in kept] == [0, 1]
    assert [s.result_index for s in out.snippets_used] == [0, 1]
    assert out.search_results == tuple(RESULTS)


def test_truncation_uses_the_generators_own_count() -> None:
    seen: list[int] = []

    def counter(query: str, snippets: Sequence[Snippet]) -> int:
        seen.append(len(snippets))
        return 100 if len(snippets) > 1 else 1

    run(generator=FakeGenerator(context_tokens=50, token_counter=counter))
    assert seen == [3, 2, 1]


def test_search_fails_when_nothing_fits() -> None:
    gen = FakeGenerator(context_tokens=5, token_counter=lambda q, s: 10)
    out = run(generator=gen)
    assert isinstance(out, SearchFailed) and out.reason == "prompt_too_long"
    assert gen.calls == []
    assert out.scores == {"pre_gen": 0.9}
    assert "truncation" in out.timings and "total" in out.timings


def test_generator_errors_propagate() -> None:
    with pytest.raises(GeneratorError):
        run(generator=FakeGenerator(error="endpoint down"))


def test_citations_outside_the_results_are_left_alone() -> None:
    from assistant_bridge.core.citations import Citation
    from assistant_bridge.generators.base import Generation

    prepared = prepare_generation("q", RESULTS, prefilter=Pre(1.0), generator=FakeGenerator(), thresholds=T(0, 0))
    assert isinstance(prepared, Prepared)
    odd = Citation("t", "x", "snippet", 99, ((0, 1),))
    out = finish_generation(prepared, Generation("x y z", (odd,), False, "m"), postfilter=Post(1.0), thresholds=T(0, 0))
    assert isinstance(out, Answer) and out.citations == (odd,)


def test_prepare_and_finish_support_streaming_callers() -> None:
    gen = FakeGenerator(chunk_chars=3)
    prepared = prepare_generation("q", RESULTS, prefilter=Pre(0.9), generator=gen, thresholds=T(0.5, 0.5))
    assert isinstance(prepared, Prepared) and prepared.pre_gen == 0.9
    stream = gen.stream("q", list(prepared.snippets))
    streamed = "".join(stream)
    out = finish_generation(prepared, stream.result(), postfilter=Post(0.9), thresholds=T(0.5, 0.5), generation_ms=4.0)
    assert isinstance(out, Answer) and out.text == streamed
    assert out.timings["generation"] == 4.0


def test_outcomes_are_frozen() -> None:
    out = run()
    with pytest.raises(AttributeError):
        out.text = "changed"  # type: ignore[misc]


def test_a_name_the_results_do_not_mention_is_idk_whatever_the_score() -> None:
    gen = FakeGenerator()
    out = run(generator=gen, must_mention=["VS Code"])
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence" and gen.calls == []
    assert out.scores == {"pre_gen": 0.9}  # the pre-generation score is still reported
    assert isinstance(run(must_mention=["SSO"]), Answer)  # in a passage
    assert isinstance(run(must_mention=["Settings", "vpn"]), Answer)  # case and titles do not matter
    people = [SearchResult("Roosevelt", "Franklin Roosevelt 's New Deal began in 1933.")]
    assert isinstance(run(results=people, must_mention=["Franklin D. Roosevelt"]), Answer)  # its longest word
    assert isinstance(run(results=people, must_mention=["Roosevelt's"]), Answer)  # possessives either way
    assert isinstance(run(results=people, must_mention=["Deal Street"]), IDontKnow)
    guide = [SearchResult("developers-reference", "It is not what is called a normative document.")]
    assert isinstance(run(results=guide, must_mention=["Debian Developer"]), Answer)  # its longest word, plural
    assert isinstance(run(results=guide, must_mention=["Debian Maintainer"]), IDontKnow)


def test_a_question_for_an_option_the_named_page_does_not_have_is_idk_whatever_the_score() -> None:
    gen = FakeGenerator()
    out = run(generator=gen, option_words=OptionWords(OPTION_WORDS_MIN - 0.1, 0))
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence" and gen.calls == []
    assert out.scores == {"pre_gen": 0.9, "option_words": OPTION_WORDS_MIN - 0.1, "option_unknown_words": 0}
    assert isinstance(run(option_words=OptionWords(0.9, OPTION_UNKNOWN_WORDS)), IDontKnow)  # words it never uses
    assert isinstance(run(option_words=OptionWords(OPTION_WORDS_MIN, 0)), Answer)
    assert isinstance(run(option_words=None), Answer)  # no such question, or a source that cannot tell
    # a command or a keyword is judged by the words its page never uses only: its entries need not list it
    assert isinstance(run(option_words=OptionWords(0.0, OPTION_UNKNOWN_WORDS - 1, entries=False)), Answer)
    assert isinstance(run(option_words=OptionWords(0.9, OPTION_UNKNOWN_WORDS, entries=False)), IDontKnow)
    assert isinstance(run(pre=0.1, option_words=OptionWords(0.9, 0, entries=False)), IDontKnow)
    # a page that writes its options in prose: more than half the words that say what is asked never used
    assert isinstance(run(option_words=OptionWords(0.0, 2, entries=False, asked=4, prose=True)), Answer)
    assert isinstance(run(option_words=OptionWords(0.0, 2, entries=False, asked=3, prose=True)), IDontKnow)


def test_each_word_the_page_never_uses_asks_more_of_the_option_entry() -> None:
    """ "Which lsof option sends its output to a remote syslog server?": lsof never writes "syslog", and no entry
    holds enough of the rest."""
    step = OPTION_WORDS_MIN + OPTION_UNKNOWN_STEP
    assert isinstance(run(option_words=OptionWords(step - 0.01, 1)), IDontKnow)
    assert isinstance(run(option_words=OptionWords(step, 1)), Answer)
    assert isinstance(run(option_words=OptionWords(step - 0.01, 0)), Answer)


def test_a_question_whose_words_are_half_unknown_to_the_page_is_idk() -> None:
    """ "Which parted command encrypts a partition?": one of its two words ("encrypts") parted(8) never uses. A
    command is no entry, so only its words can tell."""
    assert isinstance(run(option_words=OptionWords(0.5, 1, entries=False, asked=2)), IDontKnow)
    assert isinstance(run(option_words=OptionWords(0.5, 1, entries=False, asked=3)), Answer)
    assert isinstance(run(option_words=OptionWords(0.5, 1, entries=False)), Answer)  # words not counted (Japanese)


def test_a_question_for_an_option_the_named_page_has_goes_on_when_the_pre_filter_refuses() -> None:
    """The pre-filter reads a window of a dozen options; an option entry of the named page that holds most of the
    question's words, of which the page uses every one, says the page has what was asked."""
    out = run(pre=0.1, option_words=OptionWords(OPTION_WORDS_ANSWER, 0))
    assert isinstance(out, Answer)
    assert out.scores["pre_gen"] == 0.5 and out.scores["pre_gen_first_look"] == 0.1
    assert out.scores["option_words"] == OPTION_WORDS_ANSWER and out.scores["option_unknown_words"] == 0
    assert isinstance(run(pre=0.1, option_words=OptionWords(OPTION_WORDS_ANSWER - 0.01, 0)), IDontKnow)
    assert isinstance(run(pre=0.1, option_words=OptionWords(0.9, 1)), IDontKnow)
    assert isinstance(run(pre=0.1), IDontKnow)


class PagesAloneFail(Pre):
    """Accepts the results together, not the snippets of a named page alone (which do not answer)."""

    def score(self, query: str, snippets: Sequence[str]) -> float:
        return 0.9 if len(snippets) > 1 else 0.1


class FirstSnippetOnly(FakeGenerator):
    """Answers from the first snippet alone, as a generator that found its answer there."""

    def generate(self, query: str, snippets: Sequence[Snippet], response_length: str = "moderate") -> Generation:
        return super().generate(query, snippets[:1], response_length)  # type: ignore[arg-type]


def test_an_answer_from_passages_that_never_name_what_was_asked_is_idk() -> None:
    ports = SearchResult("Debian ports", "A port is Debian on another architecture, such as arm64.")
    sql = SearchResult("PostgreSQL", "PostgreSQL listens on TCP port 5432 by default.")
    out = run(results=[ports, sql], generator=FirstSnippetOnly(), must_mention=["PostgreSQL"])
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(run(results=[sql, ports], generator=FirstSnippetOnly(), must_mention=["PostgreSQL"]), Answer)
    # acronyms qualify a question more often than they are its subject
    assert isinstance(run(results=[ports, sql], generator=FirstSnippetOnly(), must_mention=["TCP"]), Answer)
    # the passage the answer leads with must name it: a later sentence from a passage that does is no excuse
    others = [SearchResult(f"Page {i}", "Nothing about it here.", f"u/{i}") for i in range(2)]
    out = run(results=[ports, sql, *others], must_mention=["PostgreSQL"])
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"


def test_a_name_glued_to_japanese_text_is_named() -> None:
    """Japanese writes a Latin name against the word after it: the title "第5章 debianディレクトリーにあるその他の
    ファイル" names Debian."""
    chapter = SearchResult(
        "第5章 debianディレクトリーにあるその他のファイル", "マニュアルページは /usr/share/man/man1 へ"
    )
    assert isinstance(run(results=[chapter], generator=FirstSnippetOnly(), must_mention=["Debian"]), Answer)
    other = SearchResult("第5章 その他のファイル", "マニュアルページは /usr/share/man/man1 へ")
    out = run(results=[other], generator=FirstSnippetOnly(), must_mention=["Debian"])
    assert isinstance(out, IDontKnow)


def test_the_page_of_a_cited_passage_names_its_subject_for_it() -> None:
    """ "Which SQLite syntax changes the name of a column?" answered from a passage of the ALTER TABLE page that
    does not say "SQLite", while another passage of that page among the results does."""
    rename = SearchResult("ALTER TABLE", "The RENAME COLUMN TO syntax changes the column-name of a table.", "u/alter")
    intro = SearchResult("ALTER TABLE", "SQLite supports a limited subset of ALTER TABLE.", "u/alter")
    elsewhere = SearchResult("ALTER TABLE", "SQLite supports a limited subset of ALTER TABLE.", "u/other")
    asked = ["SQLite"]
    assert isinstance(run(results=[rename, intro], generator=FirstSnippetOnly(), must_mention=asked), Answer)
    # a passage of another page (another link) names nothing for it
    out = run(results=[rename, elsewhere], generator=FirstSnippetOnly(), must_mention=asked)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    # only a name most of the results mention (the documents' product), not one that qualifies the question
    editors = SearchResult("ALTER TABLE", "Some editors on Windows show the schema.", "u/alter")
    others = [SearchResult(f"Page {i}", "Nothing about it here.", f"u/{i}") for i in range(3)]
    out = run(results=[rename, editors, *others], generator=FirstSnippetOnly(), must_mention=["Windows"])
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"


def test_the_file_name_of_a_cited_page_names_its_subject_for_it() -> None:
    """ "Which single keyword does SQLite accept as an alias for INSERT OR REPLACE?" answered from SQLite's INSERT
    page, whose passages never say "SQLite": the page's file name does ("sqlite3-doc-lang_insert.html")."""
    insert = SearchResult(
        "INSERT",
        "The parser allows the single keyword REPLACE as an alias for INSERT OR REPLACE.",
        "u/insert",
        result_metadata={"filename": "sqlite3-doc-lang_insert.html"},
    )
    others = [SearchResult(f"SQLite page {i}", "Nothing about it here.", f"u/{i}") for i in range(2)]
    assert isinstance(run(results=[insert, *others], generator=FirstSnippetOnly(), must_mention=["SQLite"]), Answer)
    linked = SearchResult("INSERT", insert.body, "https://sqlite.org/lang_insert.html")
    assert isinstance(run(results=[linked, *others], generator=FirstSnippetOnly(), must_mention=["SQLite"]), Answer)
    unnamed = SearchResult("INSERT", insert.body, "u/insert", result_metadata={"filename": "lang_insert.html"})
    out = run(results=[unnamed, *others], generator=FirstSnippetOnly(), must_mention=["SQLite"])
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"


def test_where_the_subject_of_a_what_is_question_lives_need_not_be_in_its_page() -> None:
    """ "What is REPLACE in SQLite?" over SQLite's documentation: the REPLACE page never says "SQLite"; the
    results do, so the answer stands. A place the results seldom mention ("in Oracle") is still asked of it."""
    replace = SearchResult("REPLACE", "The REPLACE command is an alias for INSERT OR REPLACE.", "u/replace")
    others = [SearchResult(f"Page {i}", f"SQLite page {i}.", f"u/{i}") for i in range(3)]
    results = [replace, *others]
    question = "What is REPLACE in SQLite?"
    out = run(results=results, generator=FirstSnippetOnly(), must_mention=["SQLite"], message=question)
    assert isinstance(out, Answer)
    oracle = [replace, SearchResult("CREATE INDEX", "Oracle does the same.", "u/index"), *others]
    out = run(
        results=oracle, generator=FirstSnippetOnly(), must_mention=["Oracle"], message="What is REPLACE in Oracle?"
    )
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    # not a question about what a thing is: the page must name the product as before
    out = run(
        results=results,
        generator=FirstSnippetOnly(),
        must_mention=["SQLite"],
        message="How does REPLACE work in SQLite?",
    )
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"


def test_a_passage_that_writes_the_function_asked_about_need_not_name_the_product() -> None:
    """ "What does ifnull() return in SQLite?" is answered by the entry of ``ifnull(X,Y)`` on the page of SQL
    functions, which never writes "SQLite" though most results do: the name the question writes as code pins
    its subject. Without such a name the product is asked of the page as before."""
    entry = SearchResult("Built-In Scalar SQL Functions", "ifnull(X,Y): returns its first non-NULL argument.", "u/f")
    others = [SearchResult(f"Page {i}", f"SQLite page {i}.", f"u/{i}") for i in range(3)]
    question = "What does ifnull() return in SQLite?"
    out = run(results=[entry, *others], generator=FirstSnippetOnly(), must_mention=["SQLite"], message=question)
    assert isinstance(out, Answer)
    plain = "What does the first function return in SQLite?"
    out = run(results=[entry, *others], generator=FirstSnippetOnly(), must_mention=["SQLite"], message=plain)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"


def test_an_answer_must_come_from_or_name_a_manual_page_the_question_names() -> None:
    wget = SearchResult("wget(1): The non-interactive network downloader", "The default port for FTPS is 990.")
    htop = SearchResult(
        "htop(1): interactive process viewer", "By default htop serves its web view on port 8080 with -w."
    )
    question = "What is the default port of the htop web interface?"
    pre = PagesAloneFail(0.9)  # htop(1)'s snippet alone does not answer: all snippets go to the generator
    out = run(results=[wget, htop], pre=pre, generator=FirstSnippetOnly(), message=question)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(run(results=[htop, wget], pre=pre, generator=FirstSnippetOnly(), message=question), Answer)
    # any of the pages it names will do, or a passage that names one
    both = "Does wget or htop have a default port?"
    assert isinstance(run(results=[wget, htop], pre=pre, generator=FirstSnippetOnly(), message=both), Answer)
    named = SearchResult("curl(1): transfer a URL", "Unlike htop, curl uses port 443 for HTTPS by default.")
    assert isinstance(run(results=[named, htop], pre=pre, generator=FirstSnippetOnly(), message=question), Answer)
    # a page the question does not name, or no manual page at all, asks nothing of the answer
    other = "Which port for FTPS?"
    assert isinstance(run(results=[wget, htop], pre=pre, generator=FirstSnippetOnly(), message=other), Answer)
    assert named_pages(question, [wget, htop]) == ("htop",)
    assert named_pages("What does ssh-keygen -p do?", [SearchResult("ssh-keygen(1): key tool", "x")]) == ("ssh-keygen",)


def test_an_answer_must_come_from_or_name_a_package_the_question_names_by_its_document() -> None:
    """A document titled by a package's lower-case name ("markdown-it-py", a README titled "tqdm-README") is named
    as a manual page is: "Which markdown-it-py version dropped support for Python 3.7?" is not answered by
    python-dotenv's changelog. A title of words is no package's name."""
    mdit = SearchResult("markdown-it-py", "markdown-it-py 3.0.0 drops Python 3.7 support.")
    dotenv = SearchResult("python-dotenv", "1.0.0: Drop support for python 3.7, add python 3.12-dev.")
    question = "Which markdown-it-py version dropped support for Python 3.7?"
    pre = PagesAloneFail(0.9)
    out = run(results=[dotenv, mdit], pre=pre, generator=FirstSnippetOnly(), message=question)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(run(results=[mdit, dotenv], pre=pre, generator=FirstSnippetOnly(), message=question), Answer)
    assert named_pages(question, [dotenv, mdit]) == ("markdown-it-py",)
    readme = SearchResult("tqdm-README", "tqdm shows a progress bar.")
    assert named_pages("How do I nest tqdm bars?", [readme]) == ("tqdm",)
    words = SearchResult("Savepoints", "SAVEPOINTs are a method of creating transactions.")
    assert named_pages("What are savepoints?", [words, SearchResult("Tomli", "x")]) == ()


def test_an_acronym_that_qualifies_a_named_page_need_not_be_mentioned() -> None:
    screen = SearchResult("screen(1): screen manager", "C-a c: Create a new window with a shell and switch to it.")
    question = "How do I create a new window in GNU screen?"
    assert isinstance(run(results=[screen], must_mention=["GNU"], message=question), Answer)
    # an acronym that qualifies nothing the results hold is still asked about
    gpu = "How do I enable GPU usage monitoring in screen?"
    out = run(results=[screen], must_mention=["GPU"], message=gpu)
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence"


def test_a_name_made_an_adjective_is_mentioned_by_the_name() -> None:
    quoting = SearchResult("SQLite Keywords", "`keyword`: this quoting mechanism is used by MySQL.")
    question = "Does SQLite accept MySQL-style backquotes around identifiers?"
    assert isinstance(run(results=[quoting], must_mention=["MySQL-style"], message=question), Answer)
    out = run(results=[quoting], must_mention=["Oracle-style"], message="Does SQLite accept Oracle-style hints?")
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence"


def test_a_name_in_camel_case_is_mentioned_by_its_words_apart() -> None:
    """ "NetworkManager" is mentioned by a passage that writes its package "network-manager"."""
    nm = SearchResult("Network setup", 'See "/usr/share/doc/network-manager/README.Debian". Add the user to "netdev".')
    question = "Which group must a desktop user belong to to configure the network with NetworkManager?"
    assert isinstance(run(results=[nm], must_mention=["NetworkManager"], message=question), Answer)
    out = run(results=[nm], must_mention=["NetworkMonitor"], message=question.replace("Manager", "Monitor"))
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence"


def test_a_plural_acronym_names_a_kind_of_thing_not_one_that_must_be_mentioned() -> None:
    """A plural acronym ("process IDs"; the page writes PIDs) names a kind of thing, not a product the documents
    may not cover."""
    htop = SearchResult("htop(1): interactive process viewer", "-p --pid=PID,PID...: Show only the given PIDs.")
    question = "Which htop option shows only the given process IDs?"
    assert isinstance(run(results=[htop], must_mention=["IDs"], message=question), Answer)
    out = run(results=[htop], must_mention=["GPU"], message="Which htop option shows GPU usage?")
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence"


class CoveringPre(Pre):
    """A pre-filter that says how much of the question one sentence of the snippets holds."""

    def __init__(self, value: float, covered: float) -> None:
        super().__init__(value)
        self.covered = covered

    def coverage(self, query: str, snippets: Sequence[str], titles: Sequence[str] = ()) -> float:
        self.titles = tuple(titles)
        return self.covered


def test_snippets_that_hold_little_of_the_question_need_a_higher_pre_generation_score() -> None:
    """Passages about the question's subject that say nothing of what it asks: below half its words in any one
    sentence, the level's ``pre_gen_low_coverage`` applies."""
    rule = T(0.5, 0.5, pre_gen_low_coverage=0.7)
    out = run(pre=CoveringPre(0.6, LOW_COVERAGE - 0.01), thresholds=rule)
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence"
    assert out.scores == {"pre_gen": 0.6, "coverage": LOW_COVERAGE - 0.01}
    assert isinstance(run(pre=CoveringPre(0.7, LOW_COVERAGE - 0.01), thresholds=rule), Answer)
    covering = CoveringPre(0.6, LOW_COVERAGE)
    assert isinstance(run(pre=covering, thresholds=rule), Answer)
    assert covering.titles and all(covering.titles)  # the snippets' titles: a page the question names counts
    assert isinstance(run(pre=CoveringPre(0.6, 0.0)), Answer)  # thresholds without the rule
    assert isinstance(run(pre=0.6, thresholds=rule), Answer)  # a pre-filter that cannot tell
    # a conversation turn's rewrite carries terms of earlier turns that its passages need not hold
    rewritten = run(pre=CoveringPre(0.6, 0.0), thresholds=rule, message="and then?")
    assert isinstance(rewritten, Answer) and "coverage" not in rewritten.scores


class LookingPre(Pre):
    """A pre-filter with a second look that vouches for the given (snippet index, probability) pairs."""

    def __init__(self, value: float, vouched: Sequence[tuple[int, float]]) -> None:
        super().__init__(value)
        self.vouched = list(vouched)
        self.looks: list[list[str]] = []

    def second_look(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]:
        self.looks.append(list(snippets))
        return self.vouched


def test_a_second_look_answers_from_the_vouched_snippets_only() -> None:
    gen = FakeGenerator()
    pre = LookingPre(0.2, [(2, 0.93), (1, 0.97)])
    out = run(pre=pre, generator=gen)
    assert isinstance(out, Answer)
    assert pre.looks == [[r.body for r in RESULTS]]
    assert [s.result_index for s in gen.calls[0][1]] == [1, 2]  # in result order, the first snippet left out
    assert out.search_results == tuple(RESULTS)  # every result is still returned
    assert [c.search_result_index for c in out.citations] == [1, 2]
    assert out.confidence_scores.pre_gen == 0.97  # the best vouched window: it cleared the threshold
    assert out.scores["pre_gen_first_look"] == 0.2
    assert "second_look" in out.timings


def test_a_score_just_above_the_threshold_takes_a_second_look_too() -> None:
    from assistant_bridge.core.loop import SECOND_LOOK_MARGIN

    gen = FakeGenerator()
    doubtful = LookingPre(0.5 + SECOND_LOOK_MARGIN / 2, [(2, 0.95)])
    out = run(pre=doubtful, generator=gen)  # threshold 0.5
    assert isinstance(out, Answer) and len(doubtful.looks) == 1
    assert [s.result_index for s in gen.calls[0][1]] == [2] and out.confidence_scores.pre_gen == 0.95
    unvouched = LookingPre(0.5 + SECOND_LOOK_MARGIN / 2, [])
    out = run(pre=unvouched)
    assert isinstance(out, Answer) and len(unvouched.looks) == 1  # it passed; nothing better was found
    assert out.confidence_scores.pre_gen == 0.5 + SECOND_LOOK_MARGIN / 2 and len(out.snippets_used) == 3


def test_no_second_look_above_the_threshold_and_nothing_vouched_is_idk() -> None:
    pre = LookingPre(0.9, [(2, 0.95)])
    assert isinstance(run(pre=pre), Answer) and pre.looks == []  # the first look was enough
    gen = FakeGenerator()
    out = run(pre=LookingPre(0.2, []), generator=gen)
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence" and gen.calls == []
    assert out.scores == {"pre_gen": 0.2} and len(out.snippets_used) == 3


def test_a_second_look_does_not_override_an_unmentioned_name_or_a_higher_threshold() -> None:
    pre = LookingPre(0.2, [(0, 0.95)])
    out = run(pre=pre, must_mention=["VS Code"])
    assert isinstance(out, IDontKnow) and pre.looks == []
    out = run(pre=LookingPre(0.2, [(0, 0.95)]), thresholds=T(0.98, 0.5))
    assert isinstance(out, IDontKnow) and out.scores == {"pre_gen": 0.95, "pre_gen_first_look": 0.2}


def test_out_of_range_vouched_indices_are_ignored() -> None:
    out = run(pre=LookingPre(0.2, [(7, 0.99), (-1, 0.99)]))
    assert isinstance(out, IDontKnow) and out.scores == {"pre_gen": 0.2}


DEFINED = [
    SearchResult("rsync(1): options", "--delete removes files that are not on the sending side."),
    SearchResult("rsync(1): a fast file-copying tool", "Rsync is a fast and versatile file copying tool. It copies."),
    SearchResult("cp(1)", "cp is a command that copies files and directories from one place to another."),
]


def test_a_question_about_what_a_named_thing_is_answers_from_its_own_definition() -> None:
    """A low first look, nothing vouched: "What does rsync do?" is answered from the passages of rsync's own
    document that say what it is (cp's definition is another subject's); the threshold is reported as the score."""
    gen = FakeGenerator()
    out = run_conversational_search(
        "What does rsync do?",
        DEFINED,
        prefilter=LookingPre(0.1, []),
        postfilter=Post(0.9),
        generator=gen,
        thresholds=T(0.5, 0.5),
        clock=Clock(),
    )
    assert isinstance(out, Answer) and [s.result_index for s in gen.calls[0][1]] == [1]
    assert out.scores["pre_gen_first_look"] == 0.1 and out.scores["defined"] == 1.0
    assert out.confidence_scores.pre_gen == 0.5 and out.search_results == tuple(DEFINED)


def test_a_thing_asked_about_within_another_is_defined_in_that_others_document() -> None:
    """ "What is trange in tqdm?": tqdm's README says what trange is; another project's page that defines a
    trange does not answer it."""
    readme = [
        SearchResult("tqdm-README", "tqdm means progress. Install it with pip."),
        SearchResult("tqdm-README", "trange(i) is a special optimised instance of tqdm(range(i))."),
    ]
    other = [SearchResult("numpy-README", "trange is a helper that numpy never had.")]

    def ask(results: list[SearchResult]) -> object:
        return run_conversational_search(
            "What is trange in tqdm?", results, prefilter=LookingPre(0.1, []), postfilter=Post(0.9),
            generator=FakeGenerator(), thresholds=T(0.5, 0.5), clock=Clock(),
        )  # fmt: skip

    out = ask(readme)
    assert isinstance(out, Answer) and out.scores["defined"] == 1.0
    assert isinstance(ask(other), IDontKnow)


def test_a_definition_does_not_answer_another_question_or_override_a_name() -> None:
    for message in ("What is the default port of rsync?", "What does cp do with links?"):
        out = run_conversational_search(
            message, DEFINED, prefilter=Pre(0.1), postfilter=Post(0.9), generator=FakeGenerator(),
            thresholds=T(0.5, 0.5), clock=Clock(),
        )  # fmt: skip
        assert isinstance(out, IDontKnow) and out.scores == {"pre_gen": 0.1}
    out = run_conversational_search(
        "What does rsync do?", DEFINED, prefilter=Pre(0.1), postfilter=Post(0.9), generator=FakeGenerator(),
        thresholds=T(0.5, 0.5), clock=Clock(), must_mention=["VS Code"],
    )  # fmt: skip
    assert isinstance(out, IDontKnow)


def test_a_question_about_what_a_thing_is_needs_its_document_or_a_definition() -> None:
    """ "What is PostgreSQL?" over SQLite's documentation: its pages compare SQLite with PostgreSQL but never
    say what it is, and no page is PostgreSQL's own. The thing's own page, or a sentence that says what it
    is, lets the turn through."""
    compare = [
        SearchResult("UPSERT", "PostgreSQL has the ability to use a DML statement with a RETURNING clause."),
        SearchResult("NULL Handling", "SQLite follows interpretation (1), as does PostgreSQL."),
    ]
    gen = FakeGenerator()
    out = run(results=compare, generator=gen, message="What is PostgreSQL?")
    assert isinstance(out, IDontKnow) and out.reason == "retrieval_confidence" and gen.calls == []
    own = SearchResult("rsync(1): a fast, versatile, local/remote file-copying tool", "It offers many options.")
    assert isinstance(run(results=[own], message="What does rsync do?"), Answer)
    about = SearchResult("About SQLite", "SQLite is a C-language library that implements an SQL database engine.")
    assert isinstance(run(results=[about], message="What is SQLite?"), Answer)
    assert isinstance(run(results=compare, message="How does PostgreSQL differ?"), Answer)  # not such a question
    # with an article the subject is a thing described, not a name: no definition is asked of the passages
    policy = [SearchResult("Travel", "Our expense policy covers trains and hotels.")]
    assert isinstance(run(results=policy, message="What is the expense policy?"), Answer)
    assert isinstance(run(results=compare, message="What is the PostgreSQL command?"), IDontKnow)
    # a README titled by its heading is its project's by its file name
    readme = SearchResult("filesystem_spec", "A specification for pythonic filesystems.")
    assert isinstance(run(results=[readme], message="What is fsspec?"), IDontKnow)
    named = replace(readme, result_metadata={"filename": "fsspec-README.md"})
    assert isinstance(run(results=[named], message="What is fsspec?"), Answer)
    # a reference documents a name by a table row or a syntax line of its own, with no sentence that defines it
    row = SearchResult("Package management", "apt autoremove | N/A | remove auto-installed packages no longer required")
    assert isinstance(run(results=[*compare, row], message="What does apt autoremove do?"), Answer)
    syntax = SearchResult("Pragmas", "PRAGMA schema.integrity_check;\n\nThis pragma does a consistency check.")
    assert isinstance(run(results=[*compare, syntax], message="What does PRAGMA integrity_check do?"), Answer)
    assert isinstance(run(results=[*compare, syntax], message="What does PRAGMA quick_check do?"), IDontKnow)


@pytest.mark.parametrize(
    ("question", "answered"),
    [
        ("How much does a Debian support contract cost?", False),
        ("Combien coûte un contrat de support ?", False),
        ("サポート契約はいくらですか", False),
        ("How do I get support?", True),  # not a count: answered as before
        ("How much faster is the paid support?", True),  # a degree, which words can give
        ("Which list sets how much support is given?", True),  # a verb's object: it asks for a list
    ],
)
def test_a_count_question_answered_without_any_number_is_idk(question: str, answered: bool) -> None:
    """The question asks how many or how much; sentences that give no number in any form answer another
    question ("How much does a Debian support contract cost?" → "Debian installs only free software…")."""
    out = _asked(question, "Support is given on the mailing lists by volunteers.")
    assert isinstance(out, Answer) is answered
    if not answered:
        assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    for priced in ("A contract costs 500 EUR a year.", "Support contracts are free.", "契約は五万円です。"):
        assert isinstance(_asked(question, priced), Answer)


def _asked(question: str, passage: str) -> object:
    """``question`` asked of one passage, every filter passing: what the loop's own answer checks make of it."""
    return run_conversational_search(
        question,
        [SearchResult("Doc", passage)],
        prefilter=Pre(0.9),
        postfilter=Post(0.9),
        generator=FakeGenerator(),
        thresholds=T(0.5, 0.5),
        clock=Clock(),
    )


@pytest.mark.parametrize(
    ("question", "counted", "other"),
    [
        (
            "How many seconds does the parser wait before it times out?",
            "The parser waits 30 seconds.",
            "Version 3.11 added the parser.",
        ),
        ("Combien de jours faut-il attendre ?", "Il faut attendre 3 jours.", "Le formulaire 12 est requis."),
        ("何日以内に申請しますか", "申請は30日以内です。", "書類は2部必要です。"),
        # a word before the counted noun is no unit of its own: either word named answers
        (
            "How many crewed landings were there in total?",
            "There were six manned landings.",
            "Apollo 11 landed in 1969.",
        ),
        # a count without a bound
        (
            "How many history entries does readline keep by default?",
            "By default, the number of history entries is not limited.",
            "Readline 8.2 keeps a history list.",
        ),
        # the count in a parenthesis after its unit
        (
            "How many seconds does lsof wait between listings?",
            "It delays t seconds (default fifteen), then repeats the listing.",
            "lsof 4.93 lists open files.",
        ),
        # a bound on a count asks how many: the largest value of something else does not answer it
        (
            "What is the maximum number of triggers one table can have?",
            "A table can have at most 64 triggers.",
            "The maximum value of a host parameter number defaults to 999.",
        ),
        # a rate counts something else in each unit: "twice each day" counts runs, not days
        (
            "How many days does an upload wait before it migrates?",
            "An upload waits 5 days before it migrates.",
            "The migration scripts are run twice each day.",
        ),
    ],
)
def test_a_count_of_a_unit_answered_without_that_unit_is_idk(question: str, counted: str, other: str) -> None:
    """ "How many seconds…" answered with sentences that hold numbers but count no seconds ("Version 3.11 added
    the parser.") answers another question; the sentence that names the unit answers it. A count of money, of
    people or of events may be given in other words and is not held to its word."""

    out = _asked(question, other)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, counted), Answer)
    assert isinstance(_asked("How much money did he make?", "He earned $1 million in 2004."), Answer)
    assert isinstance(_asked("How many people live in Paris?", "Paris has 2.1 million inhabitants."), Answer)
    # a default given as a number counts what a default count asks for
    limit = "The default limit is '100'."
    assert isinstance(_asked("From how many possible completions does it ask, by default?", limit), Answer)
    assert isinstance(_asked("From how many possible completions does it ask?", limit), IDontKnow)
    # a count a verb of the question governs is not what it asks: "Which find option limits how many levels…"
    maxdepth = "-maxdepth levels: Descend at most LEVELS (a non-negative integer) levels of directories."
    assert isinstance(
        _asked("Which find option limits how many levels of directories find descends?", maxdepth), Answer
    )


@pytest.mark.parametrize(
    ("question", "value", "other"),
    [
        (
            "What is the maximum length of a file name under /usr?",
            "File names are at most 14 characters long.",
            "/usr is the second major section of the filesystem.",
        ),
        ("How long does DROP INDEX take?", "It takes a few seconds per gigabyte.", "DROP INDEX removes an index."),
        (
            "How long does lintian-brush take to fix a package?",
            "It takes a minute.",
            "lintian-brush fixes more than 80 common lintian issues.",
        ),
        ("How long can a short description be?", "At most 80 characters.", "It is the first line."),
        # "which <value>": the port is the value asked for, whatever the question says after it
        ("Which TCP port does the daemon listen on?", "It listens on port 873.", "The daemon serves modules."),
        ("Which port does the key server use for key uploads?", "It uses port 11371.", "Keys are signed."),
        # a manual page's section is no value
        ("What is the maximum size of a package?", "A package is at most 2 GB.", "See the deb(5) manual page."),
        ("How long is the show on for?", "It runs for eight weeks.", "It features eight single men and women."),
        ("Quelle est la taille maximale d'un paquet ?", "Un paquet fait au plus 2 Go.", "Un paquet est une archive."),
        ("/home に置けるユーザー数の上限は？", "上限は 500 人です。", "/home はユーザーのディレクトリーです。"),
    ],
)
def test_a_value_question_answered_without_any_number_is_idk(question: str, value: str, other: str) -> None:
    """A question that asks for a size, a length, a limit, a port or a version is answered by a number written
    in digits: sentences that write none ("/usr is the second major section…") answer another question."""
    out = _asked(question, other)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, value), Answer)


def test_a_value_may_be_written_in_words_or_be_no_limit() -> None:
    """A generator that writes its own answer may spell the number ("Fourteen characters.") or say there is
    none ("There is no limit."); a digit of a name ("iperf3") is no number."""
    question = "What is the maximum length of a file name?"
    for answer in ("Fourteen characters.", "There is no limit on its length.", "Quinze caractères."):
        assert isinstance(_asked(question, answer), Answer)
    assert isinstance(_asked(question, "iperf3 names files as it likes."), IDontKnow)


@pytest.mark.parametrize(
    "question",
    [
        "Which zip options give the maximum compatibility?",  # the option that sets it: a name answers
        "Which ssh_config keyword sets the port?",
        "How do I limit the maximum depth of tree?",  # how to: a way answers
        "Does the LIMIT clause set a maximum?",  # whether: yes or no answers
        "サポート契約の内容は？",  # サポート holds ポート and asks no port
        "Which pragma sets how long to wait on a lock?",  # a name answers
        "Which scp option limits the bandwidth it uses?",  # the option, though "limits" follows it
        # "which table": a table's name answers, though the question speaks of the largest rowid
        "Which internal table does SQLite use to keep track of the largest ROWID?",
        "What was the first effort to port Debian to another kernel?",  # "port" the verb
        "package と version の間のハイフンは何に変わりますか？",  # English words of a Japanese question name parts
        "Which Cache-Control value does the client set?",  # a value may be a word ("no-store")
    ],
)
def test_a_question_about_a_value_that_asks_no_value_is_answered_without_a_number(question: str) -> None:
    assert isinstance(_asked(question, "It is given by the -m flag."), Answer)


def test_a_version_asked_by_what_happened_in_it_is_answered_by_a_sentence_that_says_so() -> None:
    """ "Which SQLite version removed support for STRICT tables?" is not answered by the sentence that says which
    version introduced them; another word for the same event answers ("added" by "introduced", "dropped" by
    "removed")."""
    introduced = "SQLite version 3.37.0 introduced the option of STRICT tables."
    out = _asked("Which SQLite version removed support for STRICT tables?", introduced)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked("Which SQLite version added STRICT tables?", introduced), Answer)
    assert isinstance(_asked("In which release was m68k dropped?", "m68k was removed in Debian 4.0."), Answer)
    included = "Which Debian release first included apt-file?"
    assert isinstance(_asked(included, "Debian 3.0 was released in 2002."), IDontKnow)
    assert isinstance(_asked(included, "apt-file is included since Debian 3.1."), Answer)
    assert isinstance(_asked("Which version of SQLite do I need?", "Use version 3.37.0."), Answer)  # no event asked
    # French writes the event with its own verbs: "introduite", "incluse"
    multiarch = "Dans quelle version de Debian la multiarchitecture a-t-elle été introduite ?"
    assert isinstance(_asked(multiarch, "La multiarchitecture, introduite dans Debian 7, intègre dpkg."), Answer)
    assert isinstance(_asked(multiarch, "Debian 7 intègre dpkg et apt."), IDontKnow)
    made = "Which SQLite version made WITHOUT ROWID tables the default?"
    assert isinstance(_asked(made, "SQLite 3.8.2 or later is needed to use a WITHOUT ROWID table."), IDontKnow)
    assert isinstance(_asked(made, "Since 4.0 such tables are the default."), Answer)
    # a keyword in capitals is no event: DROP TABLE dropped nothing
    removed = "Which SQLite version removed the ANALYZE command?"
    keyword = "The DROP TABLE command works on statistics tables as of SQLite version 3.7.9."
    assert isinstance(_asked(removed, keyword), IDontKnow)
    assert isinstance(_asked(removed, "ANALYZE was DROPPED, that is removed, in 9.9.9."), Answer)


def test_a_question_whether_one_thing_is_more_so_than_another_is_answered_by_a_comparison() -> None:
    """ "Is sed faster than awk?" is not answered by sed(1)'s list of related commands nor by "rather than": the
    answer compares ("than", "as fast as", or the question's own comparative: "WAL uses many fewer fsync()
    operations"). Questions that compare nothing are left alone ("Only those bigger than 100 MB?", "a kernel
    other than Linux")."""
    faster = "Is sed faster than awk?"
    out = _asked(faster, "awk(1), ed(1), grep(1), tr(1).")
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(faster, "Consider files as separate rather than as one stream."), IDontKnow)
    assert isinstance(_asked(faster, "sed is faster than awk for simple substitutions."), Answer)
    assert isinstance(_asked(faster, "sed is about as fast as awk."), Answer)
    fewer = "Does WAL mode need more or fewer fsync() calls than the rollback journal?"
    assert isinstance(_asked(fewer, "WAL uses many fewer fsync() operations."), Answer)
    assert isinstance(_asked("Which is better, less or most?", "less is a pager."), IDontKnow)
    assert isinstance(_asked("Est-ce que gzip est plus rapide que xz ?", "gzip compresse des fichiers."), IDontKnow)
    for other in (
        "Only those bigger than 100 MB?",
        "Is there a kernel other than Linux?",
        "Is there a folder other than /tmp for temporary files?",  # "folder" is no comparative
        "Is there one that is more important than the others?",  # which one: its answer names it
        "Is it safer than the rest?",
    ):
        assert isinstance(_asked(other, "It is given by the -m flag."), Answer)


def test_a_count_is_a_number_written_before_its_unit() -> None:
    """The unit named and a number written elsewhere count nothing ("…version 3.8.2 … to use a WITHOUT ROWID
    table"); "a single RESERVED lock" counts locks."""
    question = "How many RESERVED locks may be active at one time?"
    assert isinstance(_asked(question, "Only a single RESERVED lock may be active at one time."), Answer)
    elsewhere = "Since version 3.6.18 a process may hold a lock of any kind."
    out = _asked(question, elsewhere)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    # a version or a date is no count, even right before the unit; "0-day" is a count of days
    triggers = "How many triggers can a table have?"
    assert isinstance(_asked(triggers, "Prior to version 3.6.18 (2009-09-11), triggers were not recursive."), IDontKnow)
    assert isinstance(_asked("How many days can an upload wait?", "0-day is uploaded every day."), Answer)
    # the number may follow the unit ("nominated for 62…"), but "one" after it is a pronoun
    nominations = "How many Emmy nominations did the series get?"
    assert isinstance(_asked(nominations, "The series was nominated for 62 Primetime Emmy Awards."), Answer)
    tools = "How many developers maintain the package?"
    assert isinstance(_asked(tools, "It depends on the development tools one needs."), IDontKnow)


def test_a_default_asked_for_is_answered_by_what_says_a_default() -> None:
    """ "What is Black's default line length?" answered with a changelog line about --line-length answers
    another question; the sentence that says what the default is (or what is done "normally") answers it."""
    question = "What is Black's default line length?"
    out = _asked(question, "Fix crash in preview mode when using a short --line-length (#4086).")
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, "Black defaults to 88 characters per line."), Answer)
    backup = "What extension does patch add to a backup file by default?"
    assert isinstance(_asked(backup, "Normally, patch renames the original file by appending '.orig'."), Answer)
    assert isinstance(_asked("Quel est le séparateur par défaut ?", "Par défaut ‘:’."), Answer)


def test_the_number_of_a_note_or_an_item_is_no_value() -> None:
    """ "[84]" and "(3)" number a note or an item: an answer that writes no other number gives no value."""
    question = "Which port does dput use?"
    out = _asked(question, "[84] dput is more popular than dupload. (3) It supports Ubuntu's services.")
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, "[84] dput uses port 21."), Answer)


def test_the_number_of_a_section_referred_to_is_no_value() -> None:
    """ "Charte Debian, 4.4 « debian/changelog »" and "Section 7.4, “…”" refer to a section: an answer that writes
    no other number gives no value, and counts nothing."""
    question = "Quelle est la taille maximale d'un fichier debian/changelog ?"
    refers = "C'est un fichier obligatoire, avec un format spécifique décrit dans la Charte Debian, 4.4 « debian/changelog »."
    out = _asked(question, refers)
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    out = _asked("How many maintainers can a package have?", "See Section 7.4, “Who is the maintainer?”, for them.")
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, "La Charte Debian, 4.4 « debian/changelog », le limite à 64 Kio."), Answer)


def test_the_number_of_a_line_of_a_listing_is_no_value() -> None:
    """ "La ligne 6 est…" walks through a listing: its number is no size."""
    question = "Quelle est la taille maximale d'un paquet ?"
    out = _asked(question, "La ligne 6 est la version de la Charte. La ligne 9 est le nom du paquet binaire.")
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, "La taille maximale d'un paquet est de 2 Go."), Answer)
    assert isinstance(_asked("What is the maximum line length?", "Lines are limited to 80 characters."), Answer)


def test_a_version_asked_in_french_or_japanese_by_its_event() -> None:
    introduced = "Quelle version de SQLite a introduit la fonction pi() ?"
    assert isinstance(_asked(introduced, "SQLite utilise un typage dynamique depuis 2004, (3) …"), Answer)
    assert isinstance(_asked(introduced, "SQLite 3.0 utilise un typage dynamique."), IDontKnow)
    assert isinstance(_asked(introduced, "La fonction pi() est disponible depuis la version 3.35.0."), Answer)
    assert isinstance(_asked("どのバージョンで削除されましたか？", "バージョン 3.35 で追加されました。"), IDontKnow)
    assert isinstance(_asked("どのバージョンで削除されましたか？", "バージョン 3.40 で廃止されました。"), Answer)


def test_a_count_of_a_phrase_counts_its_plural_noun() -> None:
    """ "How many WITHOUT ROWID tables…" counts tables: an answer about WITHOUT ROWID that counts no tables
    answers another question."""
    question = "How many WITHOUT ROWID tables can one database hold?"
    out = _asked(question, "SQLite 3.8.2 or later is needed to use WITHOUT ROWID.")
    assert isinstance(out, IDontKnow) and out.reason == "response_confidence"
    assert isinstance(_asked(question, "A database can hold 2000 tables of either kind."), Answer)
