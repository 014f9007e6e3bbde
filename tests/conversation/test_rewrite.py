"""Query rewriting: follow-up detection in English, French and Japanese, carried terms, the contextual modes,
the LLM rewriter (prompt, parsing, every failure falls back to the last message) and the factory."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.conversation.rewrite import Rewriter, make_rewriter
from assistant_bridge.conversation.rewrite_embedded import (
    EmbeddedRewriter,
    asked_names,
    carried_terms,
    carries_named_command,
    content_words,
    detect,
    language,
    named_commands,
    social,
    terms_of,
    title_term,
    topic_command,
)
from assistant_bridge.conversation.rewrite_llm import (
    FakeLLMRewriter,
    OpenAIRewriter,
    build_messages,
    parse_rewrite,
)
from assistant_bridge.errors import ConfigurationError, GeneratorError

pytestmark = pytest.mark.unit

NAV = [
    MemoryTurn(
        "What's the difference between Market Cap and NAV?",
        "What's the difference between Market Cap and NAV?",
        "Market cap is the share price times the number of shares. NAV, the net asset value, is assets "
        "minus liabilities per share.",
    )
]
FRANCE = [
    MemoryTurn(
        "What is the capital gains tax rate in France?",
        "What is the capital gains tax rate in France?",
        "France applies a flat tax of 30 percent.",
    )
]
TVA = [
    MemoryTurn(
        "Quel est le taux de TVA en France ?", "Quel est le taux de TVA en France ?", "Le taux normal est de 20 %."
    )
]
OSAKA = [
    MemoryTurn(
        "大阪の消費税率は何パーセントですか？", "大阪の消費税率は何パーセントですか？", "消費税率は10パーセントです。"
    )
]


def rewrite(question: str, history: list[MemoryTurn]) -> str:
    return Rewriter("entire_conversation").rewrite(question, history).query


@pytest.mark.parametrize(
    "question, reason",
    [
        ("Is it taxable?", "anaphora"),
        ("Where do I buy those?", "anaphora"),
        ("Is there one that is more important than the others?", "anaphora"),
        ("What about ETFs?", "continuation"),
        ("And for bonds?", "continuation"),
        ("I meant for a deceased relative", "continuation"),
        ("Which is more important?", "no_topic"),
        ("Why?", "continuation"),
        ("enterprise value", "fragment"),
        ("What are the fees?", "definite_reference"),
        ("Comment est-il calculé ?", "anaphora"),
        ("Celui-ci s'applique aux livres ?", "anaphora"),
        ("Et pour la Belgique ?", "continuation"),
        ("Qu'en est-il de l'Espagne ?", "continuation"),
        ("それはいつから始まりましたか？", "anaphora"),
        ("その計算方法は？", "anaphora"),
        ("東京は？", "continuation"),
    ],
)
def test_follow_ups_are_detected(question: str, reason: str) -> None:
    decision = detect(question)
    assert decision.follow_up and decision.reason == reason


@pytest.mark.parametrize(
    "question",
    [
        "How do I reset my password?",
        "What is inflation?",
        "What is a Roth IRA?",
        "Is it safer to invest in bonds than in stocks?",
        "Debt consolidation - is it a good idea?",
        "How do companies hire their employees?",
        "Faut-il payer des impôts sur les plus-values ?",
        "Comment réinitialiser mon mot de passe ?",
        "パスワードをリセットする方法は？",
    ],
)
def test_self_contained_questions_are_left_alone(question: str) -> None:
    assert not detect(question).follow_up
    for history in (NAV, TVA, OSAKA):
        plain = Rewriter("entire_conversation", EmbeddedRewriter(weak=False)).rewrite(question, history)
        assert plain.query == question and plain.carried == ()
        # by default a short one gets at most the topic, in brackets, after the question as asked
        weak = Rewriter("entire_conversation").rewrite(question, history)
        assert weak.query == question or re.fullmatch(re.escape(question) + r" \([^()]+\)", weak.query)
        assert len(weak.carried) <= 1 and weak.follow_up is False


def test_a_short_question_gets_the_topic_in_brackets_and_passes_it_on_to_no_one() -> None:
    history = [_turn("How do I create a compressed tar archive of a folder?", "Use tar with --gzip.")]
    first = Rewriter("entire_conversation").rewrite("How can I leave out some files?", history)
    assert first.query == "How can I leave out some files? (compressed tar archive)" and first.follow_up is False
    history.append(_turn("How can I leave out some files?", "Use --exclude.", query=first.query))
    # the follow-up takes the topic from the turn before the bracketed one: the bracket is not a topic
    follow = Rewriter("entire_conversation").rewrite("And just see what's inside?", history)
    assert "tar archive" not in follow.query or follow.query.count("tar archive") == 1
    assert Rewriter("entire_conversation").rewrite("What is Kubernetes?", history).query == "What is Kubernetes?"


def test_a_short_question_that_names_the_topic_gets_no_bracket() -> None:
    """A question that names the topic: "Why do municipalities issue bonds?" after a chat about foreign bonds;
    the bracket would add only the earlier turn's qualifier ("foreign"), which sends the search elsewhere."""
    history = [_turn("Is investing in foreign bonds a good idea?", "Foreign bonds carry currency risk.")]
    asked = Rewriter("entire_conversation").rewrite("Why do municipalities issue bonds?", history)
    assert asked.query == "Why do municipalities issue bonds?" and asked.carried == ()
    other = Rewriter("entire_conversation").rewrite("How are municipalities funded?", history)
    assert other.query == "How are municipalities funded? (foreign bonds)"


def test_follow_ups_carry_the_topic_of_earlier_turns() -> None:
    assert rewrite("Which is more important?", NAV) == "Which is more important? — Market Cap / NAV"
    assert rewrite("enterprise value", NAV) == "enterprise value — Market Cap / NAV"
    assert rewrite("Is it taxable?", NAV) == "Is it taxable? — Market Cap / NAV"
    assert rewrite("Comment est-il calculé ?", TVA) == "Comment est-il calculé ? — TVA / France / taux"
    assert rewrite("それはいつから始まりましたか？", OSAKA).startswith("それはいつから始まりましたか？ — 消費税率")


def test_what_about_x_replaces_the_entity_and_keeps_the_topic() -> None:
    assert rewrite("What about Germany?", FRANCE) == "What about Germany? — capital gains tax rate"
    assert rewrite("Et pour la Belgique ?", TVA) == "Et pour la Belgique ? — TVA / taux"
    ja = rewrite("東京は？", OSAKA)
    assert "消費税率" in ja and "大阪" not in ja


def test_recent_turns_weigh_more_and_answers_less() -> None:
    history = [
        MemoryTurn("How do pensions work?", "How do pensions work?", "Pensions pay out monthly."),
        MemoryTurn("What is a Roth IRA?", "What is a Roth IRA?", "A Roth IRA is funded with taxed income."),
    ]
    terms = [t for t, _ in carried_terms("Is it taxable?", history, "en")]
    assert terms == ["Roth IRA"]  # the recent topic; "pensions", a word two turns back, is left behind
    assert "taxed income" not in terms  # an answer only confirms terms, it adds none of its own


@pytest.mark.parametrize(
    "question",
    [
        "How long do they usually live?",
        "Which river does it flow into?",
        "Which states does its watershed cover?",
        "Which illness did he have?",
        "How long is it?",
        "Who plays her?",
    ],
)
def test_the_question_phrase_is_not_the_antecedent(question: str) -> None:
    decision = detect(question)
    assert decision.follow_up and decision.reason == "anaphora"


@pytest.mark.parametrize("question", ["Is there a cure?", "Do donors get paid?", "Why sell?"])
def test_a_bare_question_takes_the_topic(question: str) -> None:
    assert detect(question).follow_up


def _turn(question: str, answer: str = "", query: str = "", titles: tuple[str, ...] = ()) -> MemoryTurn:
    return MemoryTurn(question, query or question, answer, outcome="answer", titles=titles)


def test_the_topic_is_carried_not_the_details() -> None:
    snake = [_turn("How long is the Snake River?", "At 1,078 miles, the Snake River flows into the Columbia.")]
    assert rewrite("Which river does it flow into?", snake) == "Which river does it flow into? — Snake River"
    pigs = [_turn("Where do guinea pigs originally come from?", "Guinea pigs originated in the Andes.")]
    assert rewrite("How long do they usually live?", pigs) == "How long do they usually live? — guinea pigs"
    sickle = [_turn("What is sickle cell disease?", "Sickle cell disease is a group of blood disorders.")]
    assert rewrite("Is there a cure?", sickle) == "Is there a cure? — sickle cell disease"


def test_an_and_question_of_its_own_leaves_the_previous_questions_details_behind() -> None:
    """A message opening with "and" ("And just see what's inside?") after "How can I leave out some files?" on
    the same page: the topic goes on, "leave out" and "files" (that question's details) do not. Without a topic
    before the previous question, its terms are the topic and stay."""
    tar = ("tar(1): an archiving utility",)
    history = [
        _turn("How do I create a compressed archive of a folder?", "Use tar -czf.", titles=tar),
        _turn("How can I leave out some files?", "Use --exclude.", "How can I leave out some files? (tar)", tar),
    ]
    inside = rewrite("And just see what's inside without extracting it?", history)
    assert inside.startswith("And just see what's inside without extracting it? — ")
    assert "compressed archive" in inside and "leave out" not in inside and "files" not in inside
    # the same message as a plain follow-up keeps them: it may ask about the files
    assert "leave out" in rewrite("Can I see them before?", history)
    alone = [_turn("How do I create a compressed archive of a folder?", "Use tar -czf.", titles=tar)]
    assert "compressed archive" in rewrite("And extract it?", alone)


def test_details_of_every_question_after_the_one_that_opened_the_topic_are_left_behind() -> None:
    """ "And extract it somewhere else?" (a question of its own: its pronoun means the topic) after two follow-ups
    on a zipped folder: the password of one and the page that answered the other are not carried, the folder is.
    "And for the pregnancy?" asks the same about another thing: the earlier details stay."""
    history = [
        _turn("How do I zip a folder with everything inside it?", "Use zip -r.", titles=("zip(1): package files",)),
        _turn("Can I protect it with a password?", "Use -e.", "Can I protect it with a password? — folder", ("x",)),
        _turn("How do I list what is in it?", "Use -l.", "How do I list what is in it? — folder / password", ("y",)),
    ]
    extract = rewrite("And extract it somewhere else?", history)
    assert "folder" in extract and "password" not in extract
    donors = [
        _turn("What is egg donation?", "Egg donation is…"),
        _turn("Who can be donors?", "Donors are…", "Who can be donors? — egg donation"),
    ]
    assert "donors" in rewrite("And for the pregnancy?", donors)


def test_a_command_the_user_named_is_the_topic_not_the_details_of_the_questions_about_it() -> None:
    """The user named less and less(1) answered: "Can it keep reading a file as it grows?" asks about less, not
    about line numbers. A term that names the command ("tmux session") and what a plural pronoun means stay."""
    less = [_turn("How do I show line numbers in less?", "Use -N.", titles=("less(1): opposite of more",))]
    assert rewrite("Can it keep reading a file as it grows?", less) == "Can it keep reading a file as it grows? — less"
    tmux = [_turn("How do I give a tmux session a name?", "Use -s.", titles=("tmux(1): terminal multiplexer",))]
    assert rewrite("And come back to it later?", tmux) == "And come back to it later? — tmux session"
    find = [_turn("How do I list the log files with find?", "Use -name.", titles=("find(1): search for files",))]
    assert "log files" in rewrite("How do I delete them?", find)
    # a command the user did not name (the page answered a question in other words) is no such topic
    other = [_turn("How do I show line numbers in the pager?", "Use -N.", titles=("less(1): opposite of more",))]
    assert "line numbers" in rewrite("Can it keep reading a file as it grows?", other)


def test_a_plural_pronoun_carries_the_plural_noun_it_refers_to() -> None:
    service = _turn("How can I check whether it is running?", "Use systemctl status.", "… — service / systemctl")
    logs = _turn("Where do I see its logs?", "Use journalctl -u.", "Where do I see its logs? — service / systemctl")
    carried = rewrite("Can I follow them live?", [service, logs]).split(" — ")[1].split(" / ")
    assert "logs" in carried and "service" in carried
    # a singular pronoun means the topic, not the previous question's plural noun
    assert "logs" not in rewrite("Can I restart it?", [service, logs])


def test_a_preposition_is_no_part_of_a_carried_phrase() -> None:
    history = [_turn("How do I put my uncommitted changes aside without committing them?", "Use git stash.")]
    assert rewrite("How do I get them back later?", history) == "How do I get them back later? — uncommitted changes"


def test_a_self_contained_question_answered_from_the_same_page_keeps_the_topic() -> None:
    """ "Which dynasty built most of what is left today?" stands alone, but its answer cites the page the
    question before it was answered from: it did not open a new topic, and "it" still means the Great Wall."""
    wall = "Great Wall of China"
    where = _turn("Where is the Great Wall?", "The Great Wall of China is in northern China.", titles=(wall,))
    dynasty = "Which dynasty built most of what is left today?"
    same = [where, _turn(dynasty, "The Ming dynasty built most of it.", titles=(wall,))]
    assert wall in rewrite("How long is it?", same)
    other = [where, _turn(dynasty, "The Ming dynasty built most of it.", titles=("Ming dynasty",))]
    assert wall not in rewrite("How long is it?", other)


def test_cited_titles_name_the_topic() -> None:
    title = "git-stash(1): Stash the changes in a dirty working directory away"
    history = [_turn("How do I put my changes aside?", "Use git stash push.", titles=(title,))]
    assert "git-stash" in rewrite("How do I get them back later?", history)
    term = title_term(title, "en")
    assert term is not None and term.text == "git-stash"
    assert title_term("Snake River - Wikipedia", "en").text == "Snake River"  # type: ignore[union-attr]
    assert title_term("A very long title that says a great many things at once", "en") is None


def test_a_manual_page_names_its_command_even_when_it_is_an_english_word() -> None:
    title = "find(1): search for files in a directory hierarchy"
    assert title_term(title, "en").text == "find"  # type: ignore[union-attr]
    assert title_term("Find more", "en") is None  # a title of generic words names nothing
    history = [_turn("How can I find files modified in the last 7 days?", "Use -mtime -7.", titles=(title,))]
    assert "find" in rewrite("Only those bigger than 100 MB?", history).split(" — ")[1].split(" / ")


def test_an_overview_page_names_no_topic() -> None:
    """A section-7 page (a tutorial, a FAQ) answers many questions; carried, it draws the next one to itself."""
    title = "gitcore-tutorial(7): A Git core tutorial for developers"
    assert title_term(title, "en") is None
    history = [_turn("How do I add a remote repository?", "Use git remote add.", titles=(title,))]
    assert "gitcore-tutorial" not in rewrite("How do I change its URL?", history)


def test_what_about_x_replaces_what_it_is_like() -> None:
    sickle = [_turn("What is sickle cell disease?", "Sickle cell disease is a group of blood disorders.")]
    assert rewrite("What about Huntington's disease?", sickle) == "What about Huntington's disease?"
    snake = [_turn("How long is the Snake River?", "The Snake River is 1,078 miles long.")]
    assert rewrite("What about the Columbia?", snake) == "What about the Columbia? — long"  # the same question


def test_what_about_x_then_a_question_about_it_makes_x_the_topic() -> None:
    """X, then a question whose pronoun means X ("What about xz, can it use several cores?"): X replaces the page
    the conversation was on and the details of the earlier questions, whatever its case; a name stays."""
    assert detect("What about xz, can it use several cores?").subject
    assert detect("Et xz, peut-il utiliser plusieurs cœurs ?").subject
    assert not detect("What about submodules?").subject  # a detail of the same topic: git-clone stays
    gzip = [
        _turn("How do I compress a file but keep the original?", "gzip -k keeps it.", titles=("gzip(1): compress",)),
        _turn("How do I get the best compression?", "Use --best.", query="How do I get the best compression? — gzip"),
    ]
    assert rewrite("What about xz, can it use several cores?", gzip) == "What about xz, can it use several cores?"
    speed = [_turn("What is the speed limit for motorcycle driving in New York?", "It is 55 mph.")]
    assert (
        rewrite("What about bicycles, are they allowed on the highway?", speed)
        == "What about bicycles, are they allowed on the highway? — New York"
    )


def test_a_new_topic_leaves_the_old_one_behind() -> None:
    history = [NAV[0], _turn("What are the key factors to consider when purchasing a business?", "Cash flow.")]
    terms = [t for t, _ in carried_terms("Will purchasing stocks give me control over it?", history, "en")]
    assert terms and "NAV" not in terms and "Market Cap" not in terms


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Thank you!", "thanks"),
        ("great, thanks a lot", "thanks"),
        ("thanks, that helps", "thanks"),
        ("thanks, that's what I needed", "thanks"),
        ("Merci, c'est exactement ce que je cherchais !", "thanks"),
        ("ok", "acknowledgement"),
        ("got it 👍", "acknowledgement"),
        ("👍", "acknowledgement"),
        ("🙏🙏", "thanks"),
        ("all right, see ya", "goodbye"),
        ("hi, can you help me", "greeting"),
        ("merci beaucoup !", "thanks"),
        ("d'accord", "acknowledgement"),
        ("ありがとうございます！", "thanks"),
        ("了解です", "acknowledgement"),
        ("?!…", "no_question"),
        ("   ", "no_question"),
    ],
)
def test_social_messages(message: str, kind: str) -> None:
    assert social(message) == kind


@pytest.mark.parametrize(
    "message",
    [
        "thanks, and what about ETFs?",
        "ok, what is a Roth IRA?",
        "ok, that's what I needed for tar, and for zip?",
        "OK Google",
        "Hello world in C",
        "ありがとうの意味は？",
    ],
)
def test_questions_are_not_social(message: str) -> None:
    assert social(message) is None


def test_blocked_turns_are_ignored() -> None:
    history = [MemoryTurn("bad words here", "bad words here", outcome="hap")]
    assert rewrite("Which is more important?", history) == "Which is more important?"


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Why does he do it?", 0),
        ("Which is more important?", 0),
        ("What about submodules?", 1),
        ("Est-ce imposable ?", 1),
        ("What about a Signed-off-by line?", 2),
        ("Can it make a bare repository?", 2),
        ("それはいくらですか", 0),
        ("東京の消費税率は？", 2),
        # a measure bounds the answer and names no topic: the number, its unit, the comparative before "than"
        ("Only those bigger than 100 MB?", 0),
        ("Et ceux plus gros que 100 Mo ?", 0),
        ("Files older than 30 days in /tmp?", 2),
        ("15- or 30-year mortgage?", 2),
        # a generic verb of action says what the message asks, though it names no topic
        ("Why sell?", 1),
        ("How do I start it?", 1),
        ("What are the pros and cons?", 0),
    ],
)
def test_content_words_say_how_much_a_message_says_of_its_own(question: str, words: int) -> None:
    assert content_words(question) == words


def test_terms_and_language() -> None:
    assert language("Quel est le taux ?") == "fr" and language("消費税") == "ja" and language("What is it?") == "en"
    assert [t.text for t in terms_of("What's the difference between Market Cap and NAV?")] == ["Market Cap", "NAV"]
    assert [t.text for t in terms_of("大阪の消費税率は何パーセントですか？")] == ["大阪", "消費税率", "パーセント"]
    # "vs" joins two things as "and" does: it starts no term ("vs renting" is no topic)
    assert [t.text for t in terms_of("Buying vs renting a home.")] == ["Buying", "renting", "home"]
    # an adverb of time says when, not what: "passphrase later" is no topic
    assert [t.text for t in terms_of("How do I change the passphrase later?")] == ["passphrase"]
    assert [t.text for t in terms_of("Is the fee still charged now?")] == ["fee"]


def test_modes() -> None:
    single = Rewriter("single_turn").rewrite("Is it taxable?", NAV)
    assert (single.query, single.method, single.rewritten) == ("Is it taxable?", "none", False)
    first = Rewriter("entire_conversation").rewrite("Is it taxable?", [])
    assert first.method == "none" and first.history_turns == 0
    full = Rewriter("entire_conversation").rewrite("Is it taxable?", NAV)
    assert full.method == "embedded" and full.follow_up is True and full.carried == ("Market Cap", "NAV")
    debug = full.to_json()
    assert debug["original_query"] == "Is it taxable?" and debug["rewritten_query"] == full.query
    assert debug["rewritten"] is True and debug["history_turns"] == 1 and debug["fallback"] is False
    with pytest.raises(ValueError):
        Rewriter("whole_thing")


def test_a_rewrite_is_searched_blended_with_the_message_as_asked() -> None:
    rewriter = make_rewriter("entire_conversation", {}, {})
    full = rewriter.rewrite("Is it taxable in Germany?", NAV)
    assert full.blend == ("Is it taxable in Germany?", 1.0) and full.to_json()["as_asked_weight"] == 1.0
    # a message with less to say of its own weighs less: one content word half, none nothing
    assert rewriter.rewrite("Is it taxable?", NAV).blend == ("Is it taxable?", 0.5)
    assert rewriter.rewrite("Which is more important?", NAV).blend is None
    # a command-line option says what the message asks about on its own: it weighs in full
    assert rewriter.rewrite("And what does --hard do?", NAV).blend == ("And what does --hard do?", 1.0)
    assert rewriter.rewrite("What is a Roth IRA?", NAV).blend is None  # not rewritten: nothing to blend
    off = make_rewriter("entire_conversation", {"as_asked_weight": 0}, {}).rewrite("Is it taxable?", NAV)
    assert off.rewritten and off.blend is None and off.to_json()["as_asked_weight"] == 0.0
    assert make_rewriter("single_turn", {}, {}).rewrite("Is it taxable?", NAV).blend is None


def test_a_follow_up_on_a_command_the_user_named_and_its_page_answered_is_hedged_less() -> None:
    """ "Can I limit the bandwidth it uses?" after "How do I copy a directory … with scp?" answered from scp(1)
    carries scp, the user's own topic that the documents agreed with: the message as asked, which draws other pages
    ("limit", "uses"), weighs half as much. A command only a cited page named (the user never wrote it), or a
    user's word another page answered, is hedged in full."""
    rewriter = make_rewriter("entire_conversation", {}, {})
    scp = "scp(1): OpenSSH secure file copy"
    asked = _turn("How do I copy a directory to another machine with scp?", "-r: Recursively copy…", titles=(scp,))
    out = rewriter.rewrite("Can I limit the bandwidth it uses?", [asked])
    assert out.follow_up and "scp" in out.carried and out.blend == ("Can I limit the bandwidth it uses?", 0.5)
    unnamed = _turn("How do I copy a directory to another machine?", "-r: Recursively copy…", titles=(scp,))
    assert rewriter.rewrite("Can I limit the bandwidth it uses?", [unnamed]).blend == (out.original, 1.0)
    elsewhere = _turn(
        asked.question, "rsync copies…", titles=("rsync(1): a fast, versatile, remote file-copying tool",)
    )
    assert rewriter.rewrite("Can I limit the bandwidth it uses?", [elsewhere]).blend == (out.original, 1.0)
    assert carries_named_command(["scp"], named_commands([asked], "en")) and not carries_named_command(
        ["directory"], named_commands([asked], "en")
    )


def test_a_command_named_in_a_turn_that_was_not_answered_is_still_the_topic() -> None:
    """ "How do I find files by name ignoring case with find?" refused ("I don't know") with find(1) the first
    result: the follow-up "Without going into subdirectories?" is still about find, not about the question's
    words ("name ignoring"). A first result that is not the page of a command the user wrote lends nothing."""
    rewriter = make_rewriter("entire_conversation", {}, {})
    find = "find(1): search for files in a directory hierarchy"
    refused = MemoryTurn(
        "How do I find files by name ignoring case with find?",
        "How do I find files by name ignoring case with find?",
        outcome="idk",
        first_title=find,
    )
    out = rewriter.rewrite("Without going into subdirectories?", [refused])
    assert out.follow_up and out.carried and out.carried[0] == "find"
    assert carries_named_command(["find"], named_commands([refused], "en"))
    other = dataclasses.replace(refused, first_title="zip(1): package and compress (archive) files")
    assert "zip" not in rewriter.rewrite("Without going into subdirectories?", [other]).carried
    assert not carries_named_command(["zip"], named_commands([other], "en"))


def test_a_follow_up_on_a_command_the_user_named_has_it_as_its_topic() -> None:
    """The topic is the command a carried term is or holds as a word ("tar archive" holds tar), when the user named
    it and its page answered; a command only a cited page named is none, nor is a message that opens a new topic
    or a rewrite by a model (no carried terms)."""
    rewriter = make_rewriter("entire_conversation", {}, {})
    make = "make(1): GNU make utility to maintain groups of programs"
    asked = _turn(
        "How do I run make with several jobs at once?", "-j [jobs]: Specifies the number of jobs…", titles=(make,)
    )
    out = rewriter.rewrite("How do I only see what it would run without running it?", [asked])
    assert out.follow_up and out.topic == "make" and out.to_json()["topic"] == "make"
    tar = "tar(1): an archiving utility"
    added = _turn("How do I add a file to an existing tar archive?", "-r, --append: Append files…", titles=(tar,))
    assert topic_command(["tar archive"], named_commands([added], "en")) == "tar"
    assert rewriter.rewrite("Can it show each file as it goes?", [added]).topic == "tar"
    unnamed = _turn("How do I run several jobs at once?", "-j [jobs]: Specifies the number of jobs…", titles=(make,))
    assert topic_command(["make"], named_commands([unnamed], "en")) is None
    assert rewriter.rewrite("How do I only see what it would run without running it?", [unnamed]).topic is None
    assert rewriter.rewrite("What is a Roth IRA?", [asked]).topic is None  # a question of its own


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.lists(st.text(max_size=120), max_size=4))
def test_the_embedded_rewriter_never_fails_and_keeps_the_message(question: str, previous: list[str]) -> None:
    history = [MemoryTurn(p, p, p) for p in previous]
    result = Rewriter("entire_conversation").rewrite(question, history)
    assert result.query.startswith(question.strip()[:100]) or result.query == question


def test_a_long_history_gives_a_bounded_query() -> None:
    """How fast the rewriter runs is measured by ``bench/conversations.py`` (rewrite p50/p95), not here."""
    query = EmbeddedRewriter().rewrite("Which is more important?", NAV * 20)
    assert "Which is more important?" in query and len(query) <= 2048


# --- LLM rewriter --------------------------------------------------------------------------------------------
def test_llm_rewrite_and_parsing() -> None:
    fake = FakeLLMRewriter('{"query": "Which is more important, Market Cap or NAV?"}')
    result = Rewriter("entire_conversation", fake).rewrite("Which is more important?", NAV)
    assert result.query == "Which is more important, Market Cap or NAV?" and result.method == "llm"
    assert fake.calls == [("Which is more important?", 1)]
    assert parse_rewrite('```json\n{"query": "a b"}\n```', "q") == "a b"
    assert parse_rewrite('Query: "Roth IRA limits"\nbecause...', "q") == "Roth IRA limits"
    for bad in ("", '{"answer": 1}', "x" * 2000):
        with pytest.raises(GeneratorError):
            parse_rewrite(bad, "short question")


@pytest.mark.parametrize(
    "failure, reason",
    [
        (GeneratorError("down", reason="timeout"), "timeout"),
        ("", "bad_response"),
        ('{"nope": true}', "bad_response"),
    ],
)
def test_a_failing_llm_falls_back_to_the_embedded_rewriter(failure: Any, reason: str) -> None:
    result = Rewriter("entire_conversation", FakeLLMRewriter(failure)).rewrite("Which is more important?", NAV)
    assert result.query == "Which is more important? — Market Cap / NAV" and result.method == "fallback"
    assert result.carried == ("Market Cap", "NAV") and result.follow_up is True
    assert result.fallback_reason == reason and result.to_json()["fallback"] is True


def _llm(handler: Any) -> OpenAIRewriter:
    return OpenAIRewriter(
        base_url="http://llm.test/v1",
        model="m",
        api_key="sk-secret",
        timeout=1.0,
        transport=httpx.MockTransport(handler),
    )


def test_openai_rewriter_request_and_answer() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(
            {"url": str(request.url), "auth": request.headers.get("authorization"), "body": json.loads(request.content)}
        )
        return httpx.Response(200, json={"choices": [{"message": {"content": '{"query": "Is NAV taxable?"}'}}]})

    assert _llm(handler).rewrite("Is it taxable?", NAV) == "Is NAV taxable?"
    (req,) = seen
    assert req["url"] == "http://llm.test/v1/chat/completions" and req["auth"] == "Bearer sk-secret"
    body = req["body"]
    assert body["model"] == "m" and body["temperature"] == 0 and body["messages"][0]["role"] == "system"
    assert (
        "Market Cap and NAV" in body["messages"][1]["content"]
        and "Last message: Is it taxable?" in body["messages"][1]["content"]
    )


@pytest.mark.parametrize(
    "response, reason",
    [
        (lambda r: httpx.Response(500, json={}), "http_500"),
        (lambda r: httpx.Response(200, text="not json"), "bad_response"),
        (lambda r: httpx.Response(200, json={"choices": []}), "bad_response"),
    ],
)
def test_openai_rewriter_failures_fall_back(response: Any, reason: str) -> None:
    result = Rewriter("entire_conversation", _llm(response)).rewrite("Is it taxable?", NAV)
    embedded = "Is it taxable? — Market Cap / NAV"
    assert (result.query, result.method, result.fallback_reason) == (embedded, "fallback", reason)


def test_openai_rewriter_timeout_and_connection_errors_fall_back() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    assert Rewriter("entire_conversation", _llm(timeout)).rewrite("Is it?", NAV).fallback_reason == "timeout"
    assert Rewriter("entire_conversation", _llm(refused)).rewrite("Is it?", NAV).fallback_reason == "connect_error"


def test_prompt_keeps_the_last_turns_only() -> None:
    history = [MemoryTurn(f"q{i}", f"q{i}", f"a{i}") for i in range(10)]
    content = build_messages("next?", history, max_turns=3)[1]["content"]
    assert "q6" not in content and "user: q7" in content and "assistant: a9" in content


def test_factory_picks_the_rewriter() -> None:
    assert isinstance(make_rewriter("entire_conversation", {}, {"kind": "extractive"}).primary, EmbeddedRewriter)
    llm = make_rewriter("entire_conversation", {}, {"kind": "openai", "base_url": "http://x/v1", "model": "m"})
    assert isinstance(llm.primary, OpenAIRewriter) and llm.primary.base_url == "http://x/v1"
    own = make_rewriter(
        "entire_conversation",
        {"base_url": "http://y/v1", "model": "small", "timeout_seconds": 2},
        {"kind": "openai", "base_url": "http://x/v1", "model": "m"},
    )
    assert isinstance(own.primary, OpenAIRewriter) and own.primary.model == "small" and own.primary.timeout == 2
    forced = make_rewriter(
        "entire_conversation", {"method": "embedded"}, {"kind": "openai", "base_url": "http://x", "model": "m"}
    )
    assert isinstance(forced.primary, EmbeddedRewriter)
    with pytest.raises(ConfigurationError):
        make_rewriter("entire_conversation", {"method": "llm"}, {"kind": "extractive"})


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Can I see them in VS Code?", ["VS Code"]),
        ("Does GitHub Desktop show stashes too?", ["GitHub Desktop"]),
        ("Who was the mayor of West Berlin in 1961?", ["West Berlin"]),
        ("What about FICA?", ["FICA"]),
        ("How do I push it to the server?", []),
        ("I believe it is", []),
        ("OK. Tell me more about the VPN. Does it work on Linux?", ["VPN", "Linux"]),
        ("東京は？", []),
        # a capitalised unit after a number is no name; a longer word after one is ("Python 3 Release")
        ("Which filesystem suits a disk larger than 8 TiB shared with Windows?", ["Windows"]),
        ("Does it run at 5 GHz on Linux?", ["Linux"]),
        ("What changed in Python 3 Release?", ["Python", "Release"]),
    ],
)
def test_asked_names(question: str, names: list[str]) -> None:
    assert asked_names(question) == names
