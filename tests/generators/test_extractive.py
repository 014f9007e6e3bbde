"""The extractive generator: right sentences, exact citations, lengths, languages, streaming."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from assistant_bridge.core.citations import extractiveness
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.embedders.base import HashingEmbedder
from assistant_bridge.generators import extractive
from assistant_bridge.generators.extractive import ExtractiveGenerator, _antecedent, _off_page, _qualifier
from assistant_bridge.generators.sentences import (
    FRAME_TERMS,
    Candidate,
    asks_path,
    candidates,
    entry_match,
    names_asked_kind,
    names_subject,
    terms,
    text_width,
)

pytestmark = pytest.mark.unit

VPN = Snippet(
    "The VPN client is available for Windows and macOS. To install it, download the installer from the IT "
    "portal. Sign in with your company SSO account after installation. The VPN must be connected before you "
    "open the finance tools. Support is available from 9 am to 5 pm.",
    "VPN setup guide",
    2,
)
EXPENSES = Snippet(
    "Expense reports must be submitted within 30 days. Receipts are required for every item above 25 euros. "
    "Managers approve reports every Friday.",
    "Expense policy",
    5,
)
LUNCH = Snippet("The canteen serves lunch from noon. The menu changes every week.", "Canteen", 7)


def gen(**kw) -> ExtractiveGenerator:  # type: ignore[no-untyped-def]
    return ExtractiveGenerator(HashingEmbedder(64), **kw)


def opening(cands: list[Candidate], prefix: str) -> int:
    """The index of the first candidate whose text opens with ``prefix``."""
    return next(i for i, c in enumerate(cands) if c.text.startswith(prefix))


@pytest.mark.parametrize("embedder", [None, HashingEmbedder(64)])
def test_cites_the_result_that_answers(embedder) -> None:  # type: ignore[no-untyped-def]
    g = ExtractiveGenerator(embedder)
    out = g.generate("How long do I have to submit an expense report?", [VPN, EXPENSES, LUNCH], "concise")
    assert out.text == "Expense reports must be submitted within 30 days."
    assert not out.declined and out.model.startswith("extractive")
    (citation,) = out.citations
    assert citation.search_result_index == 5 and citation.title == "Expense policy"
    assert citation.text == out.text and citation.body == EXPENSES.text


def test_every_sentence_is_cited_exactly_with_valid_exclusive_ranges() -> None:
    out = gen().generate("How do I install the VPN client and sign in?", [VPN, EXPENSES, LUNCH], "verbose")
    assert len(out.citations) >= 3
    covered = 0
    for c in out.citations:
        ((start, end),) = c.ranges
        assert 0 <= start < end <= len(out.text)
        assert out.text[start:end] == c.text  # the exact source sentence
        covered += end - start
    assert covered + len(out.citations) - 1 == len(out.text)  # sentences joined by single spaces
    assert extractiveness(out.text, [VPN.text, EXPENSES.text, LUNCH.text]) == 1.0


def test_sentences_are_in_reading_order() -> None:
    out = gen().generate("VPN install sign in SSO", [VPN], "moderate")
    positions = [VPN.text.index(c.text) for c in out.citations]
    assert positions == sorted(positions)


def test_response_length_orders_concise_moderate_verbose() -> None:
    g = gen()
    snippets = [VPN, EXPENSES, LUNCH]
    q = "What should I know about the VPN client?"
    lengths = [len(g.generate(q, snippets, rl).text) for rl in ("concise", "moderate", "verbose")]
    counts = [len(g.generate(q, snippets, rl).citations) for rl in ("concise", "moderate", "verbose")]
    assert lengths[0] < lengths[1] < lengths[2]
    assert counts == [1, 3, 5]


def test_unknown_response_length_is_rejected() -> None:
    with pytest.raises(ValueError):
        gen().generate("q", [VPN], "long")  # type: ignore[arg-type]


def test_near_duplicate_sentences_from_overlapping_chunks_are_used_once() -> None:
    a = Snippet("Expense reports must be submitted within 30 days. Receipts are required.", "Policy", 0)
    b = Snippet("Expense reports must be submitted within 30 days! Late reports are refused.", "Policy p2", 1)
    out = gen().generate("When must expense reports be submitted?", [a, b], "moderate")
    assert sum("within 30 days" in c.text for c in out.citations) == 1


def test_two_options_whose_entries_share_every_word_are_not_duplicates() -> None:
    """socat(1)'s ``-r`` and ``-R`` say the same words in another order: both answer, each about its direction."""
    page = Snippet(
        "-r <file>: Dumps the raw (binary) data flowing from left to right address to the given file.\n\n"
        "-R <file>: Dumps the raw (binary) data flowing from right to left address to the given file.",
        "socat(1): Multipurpose relay",
        0,
    )
    out = gen().generate("Which socat option dumps the raw data flowing between the addresses?", [page], "moderate")
    assert "-r <file>" in out.text and "-R <file>" in out.text


def test_a_sentence_another_holds_whole_is_not_said_again() -> None:
    """A manual's PDF text joins a paragraph's last sentence to the next paragraph's first, which its HTML form
    keeps apart: the joined sentence repeats the other one, and does not join the answer after it, not even as the
    sentence of another passage that answers about as well."""
    html = Snippet(
        "dh_shlibdeps(1) calcule les dépendances à des bibliothèques partagées pour les paquets binaires.\n\n"
        "dh_perl(1) calcule les dépendances de Perl.",
        "Chapitre 4. Fichiers nécessaires dans le répertoire debian",
        0,
    )
    pdf = Snippet(
        "La dernière fonctionnalité à connaître est ${shlibs:Depends}, etc.\ndh_shlibdeps(1) calcule les "
        "dépendances à des bibliothèques partagées pour les paquets binaires.",
        "Guide du nouveau responsable Debian",
        1,
    )
    query = "Quel outil calcule les dépendances aux bibliothèques partagées des paquets binaires ?"
    out = gen().generate(query, [html, pdf], "moderate")
    assert out.text.count("dh_shlibdeps(1) calcule") == 1
    # case kept: two options that differ in case are two sentences
    z, big_z = candidates(
        [Snippet("It is selected with the -z option.\n\nIt is selected with the -Z option.", "lsof", 0)]
    )
    assert not extractive._near_duplicate(z, big_z)


def test_long_sentence_is_cut_at_a_word_boundary_and_still_cited() -> None:
    long = Snippet("Word " * 200 + "end.", "Long", 0)
    out = gen().generate("word", [long], "concise")
    assert len(out.text) <= 300 and out.text.endswith("…")
    assert out.citations[0].ranges == ((0, len(out.text)),)


def test_no_sentences_declines() -> None:
    out = gen().generate("anything", [Snippet("   ", "Empty", 0)])
    assert out.declined and out.text == "I don't know" and out.citations == ()
    assert gen().generate("anything", []).declined


def test_an_entry_that_holds_none_of_the_asked_words_declines() -> None:
    """ "Which jq option reads YAML input?" over jq(1)'s entries: the only entry left to choose answers another
    question, so the generator declines; an entry that holds one of the words answers."""
    version = Snippet("--version: Output the jq version and exit with zero.", "jq(1)", 0)
    assert gen().generate("Which jq option reads YAML input?", [version]).declined
    raw = Snippet("--raw-input, -R: Don't parse the input as JSON.", "jq(1)", 0)
    assert not gen().generate("Which jq option reads raw input lines?", [raw]).declined
    assert not gen().generate("What does jq do with YAML?", [version]).declined  # not a "which <kind>" question


def test_min_relevance_declines_off_topic_snippets() -> None:
    g = ExtractiveGenerator(None, min_relevance=0.2)
    assert g.generate("quantum chromodynamics lattice", [LUNCH]).declined
    assert not g.generate("When does the canteen serve lunch?", [LUNCH]).declined


def test_chunk_fragments_lose_to_whole_sentences() -> None:
    cut = Snippet("within 30 days for expense reports, as the policy says. Receipts are needed.", "Policy", 0)
    whole = Snippet("Expense reports are due within 30 days of the expense.", "FAQ", 1)
    out = ExtractiveGenerator(None).generate("expense reports within 30 days", [cut, whole], "concise")
    assert out.citations[0].search_result_index == 1


@pytest.mark.parametrize(
    "query, text",
    [
        (
            "Comment installer le VPN ?",
            "Le client VPN est disponible. Pour l'installer, téléchargez-le depuis le portail.",
        ),
        (
            "経費精算書の提出期限は？",
            "経費精算書は30日以内に提出しなければなりません。領収書が必要です。昼食は正午からです。",
        ),
        ("VPN 設定", "VPNの設定はポータルから行います。Then sign in with SSO."),
        ("Как установить VPN?", "Клиент VPN доступен для Windows. Установите его с портала."),
        ("", "Some text. More text."),
        ("???", "!!! ... ???"),
    ],
)
def test_multilingual_and_odd_input_does_not_crash(query: str, text: str) -> None:
    out = gen().generate(query, [Snippet(text, "T", 0)], "moderate")
    for c in out.citations:
        ((start, end),) = c.ranges
        assert 0 <= start < end <= len(out.text)
        assert out.text[start:end] in text or out.text[start:end].endswith("…")


def test_japanese_answer_picks_the_matching_sentence_and_joins_without_spaces() -> None:
    snip = Snippet("昼食は正午からです。経費精算書は30日以内に提出しなければなりません。", "規程", 0)
    out = ExtractiveGenerator(None).generate("経費精算書の提出期限は？", [snip], "concise")
    assert out.text == "経費精算書は30日以内に提出しなければなりません。"
    two = Snippet(snip.text + "提出期限を過ぎた経費精算書は受理されません。", "規程", 0)
    both = ExtractiveGenerator(None).generate("経費精算書の提出期限は？", [two], "moderate")
    # the two relevant sentences, joined without a space; the off-topic lunch sentence is not padding
    assert both.text == "経費精算書は30日以内に提出しなければなりません。提出期限を過ぎた経費精算書は受理されません。"


def test_a_question_without_japanese_is_not_answered_in_japanese() -> None:
    """The Japanese manual page of a program, found beside its English manual, writes the option asked about too."""
    ja = Snippet(
        "--rsyncable: このオプションを用いると、 rsync は変更があったファイルのみを転送できるようになります。",
        "gzip(1)",
        0,
    )
    en = Snippet(
        "--rsyncable: Cater better to the rsync program. The output is about one percent larger.", "GNU Gzip", 1
    )
    out = ExtractiveGenerator(None).generate(
        "How much larger is gzip output made with --rsyncable?", [ja, en], "moderate"
    )
    assert "rsync program" in out.text and "オプション" not in out.text
    only = ExtractiveGenerator(None).generate("What does --rsyncable do?", [ja], "concise")
    assert "rsync" in only.text  # nothing else to answer from
    asked = ExtractiveGenerator(None).generate("--rsyncable オプションは何をしますか？", [ja, en], "concise")
    assert "オプション" in asked.text


def test_an_interactive_sessions_lines_answer_how_to_questions_only() -> None:
    """orjson's README: a session shows a call and the error it printed ("Type is not JSON serializable"), and the
    migration notes say what ``dumps`` returns; the session answers how to do something, not what it returns."""
    session = Snippet(
        "To serialize a subclass or arbitrary types, specify default as a callable that returns a supported type.\n\n"
        '>>> orjson.dumps(decimal.Decimal("0.08"))\nJSONEncodeError: Type is not JSON serializable: decimal.Decimal\n'
        '>>> orjson.dumps(decimal.Decimal("0.08"), default=default)\nb\'"0.08"\'',
        "orjson",
        0,
    )
    prose = Snippet(
        "orjson is a fast JSON library for Python. It benchmarks as the fastest Python library for JSON. To migrate "
        "from the standard library, the largest difference is that orjson.dumps returns bytes and json.dumps returns "
        "a str.",
        "orjson",
        1,
    )
    what = ExtractiveGenerator(None).generate("What type does orjson.dumps return?", [session, prose], "concise")
    assert what.text.startswith("To migrate from the standard library, the largest difference is that orjson.dumps")
    how = ExtractiveGenerator(None).generate(
        "How do I serialize a decimal.Decimal with orjson.dumps?", [session, prose], "concise"
    )
    assert ">>> orjson.dumps" in how.text


def test_terms_are_stemmed_and_cjk_bigrams() -> None:
    assert terms("Installing the installers") == ["insta", "the", "insta"]
    assert terms("経費精算") == ["経費", "費精", "精算"]
    assert terms("a 7 is") == ["7"]


def test_stream_yields_the_text_sentence_by_sentence() -> None:
    g = gen()
    stream = g.stream("How do I install the VPN?", [VPN, EXPENSES], "moderate")
    deltas = list(stream)
    result = stream.result()
    assert "".join(deltas) == result.text
    assert len(deltas) == len(result.citations)
    assert result == g.generate("How do I install the VPN?", [VPN, EXPENSES], "moderate")


def test_prompt_tokens_grow_with_snippets_and_warm_up_loads_the_embedder() -> None:
    class Spy(HashingEmbedder):
        warmed = False

        def warm_up(self) -> None:
            self.warmed = True

    spy = Spy()
    g = ExtractiveGenerator(spy)
    assert g.prompt_tokens("q", [VPN]) < g.prompt_tokens("q", [VPN, EXPENSES])
    g.warm_up()
    assert spy.warmed


PASSWORD_DOC = Snippet(
    "Resetting Your Password\n\nThis article explains how the IT help desk handles company accounts.\n\n"
    "Password rules\n\n- At least 14 characters.\n- Passwords expire every 365 days.\n\n"
    "Resetting a forgotten password\n\nIf you forgot your password, open the reset page and enter your email "
    "address. You can then choose a new password. The reset link is valid for 15 minutes.",
    "Resetting Your Password",
    0,
)
VPN_DOC = Snippet(
    "VPN Setup Guide\nThe VPN is required to reach internal systems from outside the office.\n"
    "3. Connecting for the first time\nClick the shield icon and enter the portal address vpn.example.com. "
    "If the connection fails with an authentication error, check that your password has not expired.",
    "VPN Setup Guide",
    1,
)


@pytest.mark.parametrize("embedder", [None, HashingEmbedder(64)])
def test_headings_and_titles_are_never_part_of_the_answer(embedder) -> None:  # type: ignore[no-untyped-def]
    for query in (
        "How do I reset a forgotten password?",
        "What are the password rules?",
        "How do I connect to the VPN?",
    ):
        out = ExtractiveGenerator(embedder).generate(query, [PASSWORD_DOC, VPN_DOC], "moderate")
        for heading in (
            "Resetting Your Password",
            "Password rules",
            "Resetting a forgotten password",
            "VPN Setup Guide",
            "Connecting for the first time",
        ):
            assert heading not in out.text
        assert "- " not in out.text and "3." not in out.text


def test_off_topic_sentences_of_other_results_do_not_pad_the_answer() -> None:
    out = ExtractiveGenerator(None).generate(
        "How do I reset a forgotten password?", [PASSWORD_DOC, VPN_DOC], "moderate"
    )
    assert out.text.startswith("If you forgot your password, open the reset page")
    assert "VPN" not in out.text and "vpn" not in out.text  # the VPN sentence mentions "password" too
    assert {c.search_result_index for c in out.citations} == {0}


def test_a_heading_that_matches_the_query_lifts_the_sentences_below_it() -> None:
    out = ExtractiveGenerator(None).generate("password rules", [PASSWORD_DOC], "concise")
    assert out.text == "At least 14 characters."
    first = ExtractiveGenerator(None).generate("connecting for the first time", [VPN_DOC], "concise")
    assert first.text == "Click the shield icon and enter the portal address vpn.example.com."


def test_a_question_whether_something_holds_is_answered_by_a_sentence_not_lifted_by_its_heading() -> None:
    """The heading names the subject; only a sentence says whether it holds. At the heading's full weight the
    sentence right below it ("The LIKE operator ignores the case…") answers."""
    text = (
        "The LIKE and GLOB operators\n\nThe LIKE operator ignores the case of ASCII characters by default, and its "
        "pattern may hold wildcards.\n\nBoth operators compare a string with a pattern of wildcards.\n\n"
        "Also, GLOB is case sensitive, unlike LIKE."
    )
    snippets = [Snippet(text, "Core functions", 0)]
    gen = ExtractiveGenerator(None)
    assert gen.generate("Is the GLOB operator case sensitive?", snippets, "concise").text == (
        "Also, GLOB is case sensitive, unlike LIKE."
    )
    assert gen.generate("Which operator ignores the case?", snippets, "concise").text.startswith("The LIKE operator")


def test_the_best_snippet_comes_first_then_reading_order() -> None:
    other = Snippet("The reset page is also linked from the intranet home page.", "Intranet", 3)
    out = ExtractiveGenerator(None, min_ratio=0.0).generate(
        "How do I reset a forgotten password?", [other, PASSWORD_DOC], "verbose"
    )
    indexes = [c.search_result_index for c in out.citations]
    assert indexes[0] == 0 and indexes == sorted(indexes, key=lambda i: (i != 0, i))
    positions = [PASSWORD_DOC.text.index(c.text) for c in out.citations if c.search_result_index == 0]
    assert positions == sorted(positions)


def test_wrapped_lines_are_joined_in_the_answer_and_cited_exactly() -> None:
    wrapped = Snippet("Sign in with your\n   company account and approve the push notification.", "VPN", 0)
    out = ExtractiveGenerator(None).generate("approve the push notification", [wrapped], "concise")
    assert out.text == "Sign in with your company account and approve the push notification."
    (citation,) = out.citations
    assert out.text[slice(*citation.ranges[0])] == citation.text


WC = (
    "Print newline, word, and byte counts for each FILE, and a total line if more than one FILE is specified.\n\n"
    "The options below may be used to select which counts are printed, always in the following order: newline, "
    "word, character, byte, maximum line length.\n\n"
    "-c, --bytes: print the byte counts\n\n-m, --chars: print the character counts\n\n"
    "-l, --lines: print the newline counts\n\n--help display this help and exit"
)


GREP_FR = (
    "-c, --count: Ne pas afficher les résultats normaux. À la place, afficher un décompte des lignes correspondant "
    "au motif pour chaque fichier.\n\n-l, --files-with-matches: Ne pas afficher les résultats normaux. À la place, "
    "indiquer le nom des fichiers pour lesquels un résultat aurait été affiché.\n\n-o, --only-matching: N'afficher "
    "que les parties correspondantes des lignes sélectionnées, chaque partie sur une ligne séparée."
)


@pytest.mark.parametrize("length", ["concise", "moderate"])
def test_entries_that_open_alike_are_told_apart_by_their_next_sentence(length: str) -> None:
    """grep(1)'s -c and -l both open with "Ne pas afficher les résultats normaux.": the term line of each counts
    the words of its next sentence, and the answer brings that sentence, whatever its length, and no other entry."""
    snippets = [Snippet(GREP_FR, "grep(1): Afficher les lignes correspondant à un motif", 0)]
    gen = ExtractiveGenerator(None)
    count = gen.generate(
        "Quelle option de grep affiche seulement le décompte des lignes correspondantes ?", snippets, length
    )
    assert count.text == (
        "-c, --count: Ne pas afficher les résultats normaux. À la place, afficher un décompte des lignes "
        "correspondant au motif pour chaque fichier."
    )
    names = gen.generate("Quelle option de grep indique seulement le nom des fichiers ?", snippets, length)
    assert names.text.startswith(
        "-l, --files-with-matches: Ne pas afficher les résultats normaux. À la place, indiquer"
    )
    assert "--only-matching" not in names.text


def test_the_option_asked_about_is_the_answer_by_itself() -> None:
    gen = ExtractiveGenerator()
    snippet = [Snippet(text=WC, title="wc(1): print newline, word, and byte counts for each file", result_index=0)]
    assert (
        gen.generate("Which wc option prints only the newline counts?", snippet).text
        == "-l, --lines: print the newline counts"
    )
    assert gen.generate("What does --chars do?", snippet).text == "-m, --chars: print the character counts"


def test_a_one_letter_option_the_question_names_is_matched_as_written() -> None:
    """``-P`` has no word of three letters: without it as a term, a sentence about options that shares "rsync"
    and "does" with the question outranked the option's own entry."""
    options = "\n\n".join(
        f"--{name}: This option tells rsync to {what}."
        for name, what in [("perms", "preserve permissions"), ("times", "preserve times"), ("owner", "set owners")]
    )
    pages = [
        Snippet(f"{options}\n\nWhat rsync does with this option depends on the sender.", "rsync(1)", 0),
        Snippet(
            'Thus the count still grows.\n\n-P: The -P option is equivalent to "--partial --progress".', "rsync(1)", 1
        ),
    ]
    out = gen().generate("What does the rsync option -P do?", pages, "concise")
    assert out.text.startswith('-P: The -P option is equivalent to "--partial --progress".')


def test_the_option_whose_long_name_the_question_spells_out_answers() -> None:
    """A prose sentence sharing more of the question's words ("gzip", "décompressent") outranked the entry of
    ``--decompress``, whose long name the question says ("décompresser"), accents aside."""
    page = Snippet(
        "Avec gzip, les fichiers créés avec zip, compress ou pack se décompressent aussi.\n\n"
        "-c --stdout: écrire la sortie sur la sortie standard\n\n"
        "-d --decompress --uncompress: décompresser\n\n"
        "-k --keep: conserver les fichiers d'entrée durant la compression ou la décompression.",
        "gzip(1)",
        0,
    )
    out = ExtractiveGenerator().generate("Quelle option de gzip permet de décompresser ?", [page], "concise")
    assert out.text == "-d --decompress --uncompress: décompresser"
    less = Snippet(
        "Searches in less are case-sensitive unless the pattern holds no capitals and you search again.\n\n"
        "-i, --ignore-case: Causes searches to ignore case; that is, uppercase and lowercase are equal.\n\n"
        "-j, --jump-target: Specifies a line on the screen where the target line is to be positioned.",
        "less(1)",
        0,
    )
    out = ExtractiveGenerator().generate("How do I make less ignore case in searches?", [less], "concise")
    assert out.text.startswith("-i, --ignore-case:")


def test_a_sentence_opening_with_this_answers_with_what_it_refers_to() -> None:
    """ "This will install…" answers with the command before it; "In this case, …" with the case the sentence before
    it states."""
    readme = (
        "Install with pip:\n\n$ pip install uvicorn\n\nThis will install uvicorn with minimal dependencies.\n\n"
        "$ pip install 'uvicorn[standard]'\n\nThis will install uvicorn with its optional extras."
    )
    limit = (
        "The LIMIT clause may specify two expressions separated by a comma. In this case, the first expression is "
        "the offset and the second the limit. Programmers should prefer the OFFSET keyword."
    )
    for text, question, start in (
        (
            readme,
            "How do I install uvicorn with its optional extras?",
            "$ pip install 'uvicorn[standard]'\nThis will install uvicorn with its optional extras.",
        ),
        (
            limit,
            "Which expression is the offset when there are two?",
            "The LIMIT clause may specify two expressions separated by a comma. In this case,",
        ),
    ):
        out = gen().generate(question, [Snippet(text, "doc", 0)], "concise")
        assert out.text.startswith(start)
        assert out.citations[0].text == start.partition("\n")[0].partition(" In this")[0]
    for line in ("Installation", "requirements of the package"):  # a heading, even in lower case
        heading = Snippet(f"{line}\n\nThis package needs Python 3.10 or later.", "pkg", 0)
        assert gen().generate("Which Python does the package need?", [heading], "concise").text == (
            "This package needs Python 3.10 or later."
        )


def test_a_description_in_a_definition_list_answers_with_its_term() -> None:
    """An HTML definition list reads as a short list item, then its description's paragraph: the description
    answers with the term it describes first. A short item of a list of short items is no term."""
    page = Snippet(
        "Defined restrictions\n\n- rw-build-tree\n\nThe test(s) needs write access to the built source tree. "
        "Even with this restriction, the test may change nothing.\n\n- breaks-testbed\n\nThe test, when run, is "
        "liable to break the testbed system.",
        "Autopkgtest",
        0,
    )
    out = gen().generate("Which restriction says that a test needs write access to the built source tree?", [page])
    assert out.text.startswith("rw-build-tree\nThe test(s) needs write access to the built source tree.")
    assert out.citations[0].text == "rw-build-tree"
    listed = Snippet("Tools:\n\n- lintian\n- piuparts\n\nThe test runner builds the source tree first.", "T", 0)
    assert gen().generate("What does the test runner build first?", [listed], "concise").text == (
        "The test runner builds the source tree first."
    )


def test_a_sentence_that_introduces_a_list_answers_with_its_items() -> None:
    text = (
        "libffi is missing a few features. We welcome patches to add support for these.\n"
        "- Variadic closures.\n- There is no support for bit fields in structures.\n"
        "- The raw API is undocumented.\n\nSee the manual for more."
    )
    out = ExtractiveGenerator().generate(
        "Which features is libffi missing?", [Snippet(text=text, title="Missing", result_index=0)]
    )
    assert out.text.startswith("libffi is missing a few features.")
    assert "Variadic closures." in out.text and "The raw API is undocumented." in out.text
    assert "See the manual" not in out.text
    assert all(out.text[a:b] for c in out.citations for a, b in c.ranges)


@pytest.mark.parametrize(
    ("text", "question", "answer"),
    [
        (  # a command after it: the introducing line and the command answer
            "Install it with pip.\n\nRun the following to test Rich output on your terminal:\n\npython -m rich\n\n"
            "Rich Print\n\nTo add rich output to your application, import the rich print method.",
            "How do I test Rich output in my terminal?",
            "Run the following to test Rich output on your terminal:\npython -m rich",
        ),
        (  # sentences after it: they answer, not the introducing line
            "When using the Debian mailing lists, please follow these rules:\nDo not send spam.\n\n"
            "debian-private is a special mailing list for private discussions amongst Debian developers.",
            "What is the debian-private mailing list for?",
            "debian-private is a special mailing list",
        ),
    ],
)
def test_an_introducing_line_brings_the_command_after_it_but_not_sentences(
    text: str, question: str, answer: str
) -> None:
    assert gen().generate(question, [Snippet(text, "Docs", 0)], "concise").text.startswith(answer)


def test_a_faq_question_is_not_the_answer_but_lifts_the_one_below_it() -> None:
    faq = (
        "6.2.1. Which other codenames have been used in the past?\nbuzz, rex, bo, hamm and slink.\n"
        "6.2.2. Where do these codenames come from?\nSo far they have been characters taken from the Toy Story "
        "movies by Pixar."
    )
    text = gen().generate("Where do Debian release codenames come from?", [Snippet(faq, "FAQ", 0)], "concise").text
    assert "Toy Story" in text and "?" not in text


def test_the_entry_a_question_names_answers_with_its_own_further_sentences() -> None:
    page = Snippet(
        "ServerAliveInterval: Sets a timeout interval in seconds. The default is 0.\n"
        "ServerAliveCountMax: Sets the number of server alive messages which may be sent. The default value is 3.\n"
        "SetEnv: Directly specify one or more environment variables.",
        "ssh_config(5)",
        0,
    )
    out = gen().generate("What is the default value of ServerAliveCountMax?", [page], "moderate")
    assert out.text.startswith("ServerAliveCountMax: Sets the number") and "The default value is 3." in out.text
    assert "ServerAliveInterval" not in out.text and "SetEnv" not in out.text


def test_the_same_options_entry_in_another_passage_does_not_displace_the_entrys_own_sentences() -> None:
    """gzip's manual describes --rsyncable over three sentences, its help listing in one line: the listing says
    again what the first sentence says, the third says what "How much larger…?" asks."""
    manual = Snippet(
        "--rsyncable: Cater better to the rsync program by periodically resetting the internal structure of the "
        "compressed data stream. This lets the rsync program take advantage of similarities in the input. The "
        "cost: the compressed output is usually about one percent larger.",
        "Gzip",
        0,
    )
    listing = Snippet("-r, --recursive   operate recursively\n--rsyncable   make rsync-friendly archive", "Gzip", 1)
    out = ExtractiveGenerator().generate("How much larger is gzip output made with --rsyncable?", [manual, listing])
    assert "about one percent larger" in out.text and "rsync-friendly" not in out.text


def test_an_entry_runs_on_over_its_paragraphs_up_to_the_next_entry() -> None:
    """A rendered man page loses the indentation that tells an entry's further paragraphs from the page's own:
    they belong to the entry up to the next entry or heading."""
    page = Snippet(
        "ServerAliveCountMax: Sets the number of server alive messages which may be sent. If this threshold is "
        "reached, ssh will disconnect from the server.\n\n"
        "It is important to note that server alive messages differ from TCPKeepAlive.\n\n"
        "The default value is 3.\n\n"
        "ServerAliveInterval: Sets a timeout interval in seconds. The default value is 0.\n\n"
        "FILES\n\nThe default value of the file is unknown.",
        "ssh_config(5)",
        0,
    )
    out = gen().generate("What is the default value of ServerAliveCountMax?", [page], "moderate")
    assert out.text.startswith("ServerAliveCountMax: Sets the number") and "The default value is 3." in out.text
    assert "ServerAliveInterval" not in out.text and "The default value is 0." not in out.text
    assert "unknown" not in out.text


def test_an_option_is_answered_by_its_entry_when_a_later_sentence_of_it_says_what_was_asked() -> None:
    """The sentence that matches the question is the second of the option's entry and names no option: the
    answer opens with the entry's term, not with the neighbouring options the question's words also match."""
    page = Snippet(
        "-h, --help: Print the summary of command line argument options.\n\n"
        "-v, --version: Print the installed version of mtr.\n\n"
        "-r, --report: This option puts mtr into report mode. When in this mode, mtr will run for the number "
        "of cycles specified by the -c option, and then print statistics and exit.\n\n"
        "-w, --report-wide: This option puts mtr into wide report mode.",
        "mtr(8): a network diagnostic tool",
        0,
    )
    query = "Which mtr option runs a number of cycles and then prints statistics and exits?"
    out = gen().generate(query, [page], "concise")
    assert out.text.startswith("-r, --report: This option puts mtr into report mode. When in this mode")
    assert "--help" not in out.text and "--version" not in out.text
    # a question that asks for no option is answered by the sentence itself
    plain = gen().generate("What does mtr do in report mode?", [page], "concise")
    assert not plain.text.startswith("-h")


def test_the_answer_keeps_its_lead_in_but_not_the_pages_preamble() -> None:
    snip = Snippet(
        "This page is about the VPN for staff. Badges are required in the building. "
        "Laptops leaving the office need the client. Install the VPN client from the portal, then sign in.",
        "VPN",
        0,
    )
    out = ExtractiveGenerator(None).generate("How do I install the VPN client?", [snip], "moderate")
    assert out.text.startswith("Laptops leaving the office need the client. Install the VPN client")
    assert "This page is about" not in out.text


def test_a_passage_the_dense_search_found_far_less_similar_must_match_much_better() -> None:
    """Wikipedia-style passages of one topic: the first result answers, a later one repeats the question's
    words about something else. With the dense search's similarities the first wins; without them (a lexical
    search, a custom search server) the later one's closer wording does, as before."""
    query = "When was the first vaccine for diphtheria developed?"
    answer = Snippet(
        "Emil von Behring developed an antitoxin in 1890, and a diphtheria toxoid followed in the 1920s.",
        "Diphtheria",
        0,
    )
    other = Snippet(
        "The first vaccine for Lyme disease was developed in 1998 and withdrawn in 2002.", "Lyme disease", 1
    )
    scored = [Snippet(s.text, s.title, s.result_index, sim) for s, sim in ((answer, 0.88), (other, 0.81))]
    plain = ExtractiveGenerator(None).generate(query, [answer, other], "concise")
    assert plain.citations[0].search_result_index == 1
    weighed = ExtractiveGenerator(None).generate(query, scored, "concise")
    assert weighed.citations[0].search_result_index == 0
    off = ExtractiveGenerator(None, w_similarity_gap=0.0).generate(query, scored, "concise")
    assert off.citations[0].search_result_index == 1
    partial = [scored[0], other]  # one passage without a similarity: no common scale, no preference
    assert ExtractiveGenerator(None).generate(query, partial, "concise").citations[0].search_result_index == 1


def test_a_whether_question_holds_a_less_similar_passage_back_less() -> None:
    """The search ranks passages by the question's topic; the sentence that says whether it holds may lie in one
    it found a little less similar. A question asking how, worded alike, keeps the whole similarity gap."""
    topic = Snippet(
        "Transactions that involve changes against multiple attached databases are atomic for each individual "
        "database. A database can be attached more than once.",
        "ATTACH DATABASE",
        0,
        0.86,
    )
    says = Snippet(
        "WAL does not work over a network filesystem. If the journal mode is WAL, transactions continue to be "
        "atomic within each individual database file, but not across them.",
        "Write-Ahead Logging",
        1,
        0.84,
    )
    whether = "Are transactions over several attached databases atomic when the journal mode is WAL?"
    out = ExtractiveGenerator(None).generate(whether, [topic, says], "concise")
    assert out.citations[0].search_result_index == 1
    assert "continue to be atomic" in out.text
    whole = ExtractiveGenerator(None, whether_gap_share=1.0).generate(whether, [topic, says], "concise")
    assert whole.citations[0].search_result_index == 0
    how = "How atomic are transactions over several attached databases when the journal mode is WAL?"
    assert ExtractiveGenerator(None).generate(how, [topic, says], "concise").citations[0].search_result_index == 0


def test_a_reference_pages_entries_are_not_weighed_by_their_chunks_similarity() -> None:
    """A man page's chunk lists many options: its similarity to the question says nothing of the one asked."""
    query = "Which option of find selects files modified n days ago?"
    first = Snippet(
        "-atime n: File was last accessed n days ago.\n-amin n: File was last accessed n minutes ago.",
        "find(1)",
        0,
        0.86,
    )
    later = Snippet(
        "-mtime n: File's data was last modified n days ago.\n-newer file: File was modified more recently than file.",
        "find(1)",
        1,
        0.80,
    )
    out = ExtractiveGenerator(None).generate(query, [first, later], "concise")
    assert out.text.startswith("-mtime n")


def test_the_name_of_a_page_the_question_names_is_said_by_each_of_its_sentences() -> None:
    """Every sentence of iperf3(1) is about iperf3: the one that happens to write "iperf3" does not outrank the
    one that says what is asked ("data")."""
    page = Snippet(
        "The iperf3 client can connect to the server on another port.\n\n"
        "-R, --reverse: the server transmits data to the client.",
        "iperf3(1): perform network throughput tests",
        0,
    )
    question = "How do I make the iperf3 server send data to the client?"
    assert ExtractiveGenerator().generate(question, [page], "concise").text.startswith("-R, --reverse")
    other = Snippet(page.text, "Network tools", 0)  # no page the question names: the name is a word like others
    assert ExtractiveGenerator().generate(question, [other], "concise").text.startswith("The iperf3 client")


def test_a_sentence_that_introduces_a_command_answers_with_it() -> None:
    """The Debian FAQ's "…, execute the command" has no colon and its command is a block of its own, a line
    too short to answer alone: a sentence that joins the best one from another passage brings its command
    along."""
    guide = Snippet("The command dpkg-query lists the packages installed on a Debian system.", "Chapter 2", 0)
    faq = Snippet(
        "Packages can be removed at any time.\n"
        "To learn the status of all the packages installed on a Debian system, execute the command\n\n"
        "dpkg --list\n\n"
        "This prints out a one-line summary for each package.",
        "The Debian GNU/Linux FAQ",
        1,
    )
    out = ExtractiveGenerator().generate("Which command lists the packages installed on a Debian system?", [guide, faq])
    assert out.text.startswith("The command dpkg-query")
    assert "execute the command\ndpkg --list" in out.text


def test_a_how_to_question_is_answered_with_the_shell_line_after_the_sentence() -> None:
    """The Debian Reference says how to split a file in a sentence that neither ends with a colon nor announces
    anything, and shows it on the shell prompt's line after it: a question asking how gets the line too; one
    asking why does not."""
    text = (
        "Backups of large files need care.\n\n"
        "When a data is too big to backup as a single file, you can backup its content after splitting it into, "
        "e.g. 2000MiB chunks and merge those chunks back into the original file.\n\n"
        "$ split -b 2000m large_file\n$ cat x* >large_file\n\n"
        "Caution: make sure you do not have any files starting with x."
    )
    passage = Snippet(text, "Chapter 10. Data management", 0)
    how = ExtractiveGenerator().generate("How do I split a large file into 2000MiB chunks for backup?", [passage])
    assert "$ split -b 2000m large_file" in how.text
    why = ExtractiveGenerator().generate("Why would I split a large file into 2000MiB chunks for backup?", [passage])
    assert "When a data is too big" in why.text
    assert "$ split" not in why.text


def test_the_sentence_between_two_chosen_ones_of_a_paragraph_links_them() -> None:
    """patch's manual: the first and the third sentence of a paragraph answer best, with a later one; the one
    between the first two ("In those cases, …") names the option, and joins them in its place. Not across
    paragraphs, and not a sentence that does not point back at the one before it."""
    lead = "Sometimes the file names given in a patch contain leading directories, but you keep your files in a "
    lead += "directory different from the one given in the patch."
    link = "In those cases, you can use the '--strip=NUMBER' ('-pNUMBER') option to set the file name strip count."
    count = "The strip count tells 'patch' how many slashes, along with the directory names between them, to strip "
    count += "from the front of file names. A sequence of one or more adjacent slashes is counted as a single slash."
    default = "By default, 'patch' strips off all leading directories, leaving just the base file names."
    question = "How do I tell patch to strip leading directories from the file names in a patch?"
    manual = Snippet(f"Applying patches.\n\n{lead} {link} {count} {default}", "patch", 0)
    out = ExtractiveGenerator().generate(question, [manual], "moderate").text
    assert out.startswith(f"{lead} {link} The strip count")
    apart = Snippet(f"Applying patches.\n\n{lead} {link}\n\n{count} {default}", "patch", 0)
    split = ExtractiveGenerator().generate(question, [apart], "moderate").text
    assert split.startswith(f"{lead} The strip count") and link not in split
    # a sentence between that does not point back at the one before it is another fact, not a link
    plain = link.replace("In those cases, you can", "You can")
    other = Snippet(f"Applying patches.\n\n{lead} {plain} {count} {default}", "patch", 0)
    assert plain not in ExtractiveGenerator().generate(question, [other], "moderate").text


def test_a_sentence_that_announces_a_command_brings_it_from_the_next_chunk() -> None:
    """The Debian Reference's "The following is the safe way to clear the contents of the file." ends its chunk and
    announces the command with a full stop; the next chunk of the same document (another snippet, overlapping by
    that sentence) goes on with "$ :>file_to_be_cleared". The sentence joins the best one and brings the command."""
    why = "In order to clear the contents of a file such as a log file, do not use rm to delete the file and then "
    why += "create a new empty file, because the file may still be accessed in the interval between commands."
    following = "The following is the safe way to clear the contents of the file."
    title = "Chapter 9. System tips"
    end = Snippet(f"Log files grow.\n\n{why} {following}", title, 0, document_id="d9", position=3)
    after = "$ :>file_to_be_cleared\n\nDummy files\n\nThe following commands create dummy files."
    nxt = Snippet(f"{following}\n\n{after}", title, 1, document_id="d9", position=4)
    question = "What is the safe way to clear the contents of a log file that may still be in use?"
    out = ExtractiveGenerator().generate(question, [end, nxt])
    assert out.text.startswith("In order to clear")
    assert out.text.endswith(f"{following} $ :>file_to_be_cleared")
    unplaced = [Snippet(end.text, end.title, 0), Snippet(nxt.text, nxt.title, 1)]
    assert ":>file_to_be_cleared" not in ExtractiveGenerator().generate(question, unplaced).text


def test_a_list_item_that_ends_with_a_colon_answers_with_the_command_after_it() -> None:
    """The Japanese maintainers' guide's autobuilder list: its last item goes on with "and runs this command in the
    source directory:", and the command is a block of its own after the list. The item brings its block, as a
    sentence ending with a colon does; an item is not followed by the list it belongs to."""
    build = Snippet(
        "Architecture: any のパッケージは、オートビルダーシステムによって再ビルドされます。それは、以下を確実にインストールします。\n\n"
        "- build-essential パッケージ\n\n"
        "- Build-Depends に挙げられているパッケージ : そして、ソースディレクトリーで次のコマンドを実行します:\n\n"
        "$ dpkg-buildpackage -B\n\n"
        "これは、別のアーキテクチャー上で、アーキテクチャー依存のバイナリーパッケージを生成する作業をすべて行ってくれます。",
        "第6章 パッケージのビルド",
        0,
    )
    out = ExtractiveGenerator().generate("オートビルダーはソースディレクトリーでどのコマンドを実行しますか？", [build])
    assert out.text.endswith("次のコマンドを実行します:\n$ dpkg-buildpackage -B")


def test_a_question_about_what_a_thing_is_answers_with_the_sentence_that_says_it() -> None:
    """Every sentence of rsync's page names rsync; the one that says what it is answers, with the rest of its
    paragraph, not an option's sentence that happens to match better, nor the NAME line when prose says it."""
    options = Snippet(
        "If you use rsync with the --old-args option, rsync lets your script handle the extra escaping.",
        "rsync(1): a fast, versatile, local/remote file-copying tool",
        0,
    )
    opening = Snippet(
        "rsync - a fast, versatile, local/remote file-copying tool\n\nSynopsis\n\nLocal: rsync [OPTION...] SRC\n\n"
        "Description\n\nRsync is a fast and extraordinarily versatile file copying tool. It can copy locally or "
        "to a remote host. It offers a large number of options.\n\nGeneral\n\nRsync copies files.",
        "rsync(1): a fast, versatile, local/remote file-copying tool",
        1,
    )
    out = ExtractiveGenerator().generate("What does rsync do?", [options, opening])
    assert out.text == (
        "Rsync is a fast and extraordinarily versatile file copying tool. It can copy locally or to a remote "
        "host. It offers a large number of options."
    )
    assert {c.search_result_index for c in out.citations} == {1}
    name_only = Snippet("Wget - The non-interactive network downloader.\n\nSynopsis", "wget(1)", 0)
    other = Snippet("With wget you can download files over HTTP. Wget retries.", "wget(1)", 1)
    out = ExtractiveGenerator().generate("What does the wget command do?", [other, name_only])
    assert out.text.startswith("Wget - The non-interactive network downloader.")


def test_what_a_readme_says_its_project_is_answers_what_it_is() -> None:
    """No manual page: "What is fsspec?" is answered by the line under the README's name, not by a sentence under
    the command line of its install section that names fsspec and matches that line."""
    readme = Snippet(
        "filesystem_spec\n\nA specification for pythonic filesystems.\n\nInstall\n\npip install fsspec\n\nwould "
        "install the base fsspec. Use pip install fsspec[full] for all known extra dependencies.",
        "filesystem_spec",
        0,
        filename="fsspec-README.md",
    )

    class Install:
        """Finds the install sentence closest to the question, as the sentence encoder did."""

        name = "install"

        def warm_up(self) -> None: ...

        def embed_queries(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0] for _ in texts])

        def embed_passages(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0] if "install" in t else [0.0, 1.0] for t in texts])

    out = ExtractiveGenerator(Install(), w_embed=1.0).generate("What is fsspec?", [readme], "moderate")  # type: ignore[arg-type]
    assert out.text.startswith("A specification for pythonic filesystems.")


def test_what_a_name_does_is_said_under_its_syntax_line_not_by_what_it_does_not_do() -> None:
    """A reference writes a pragma's syntax lines, then "This pragma does…": that says what "PRAGMA
    integrity_check" does; "PRAGMA integrity_check does not find FOREIGN KEY errors" opens with the name but
    states a limit."""
    limit = Snippet(
        "PRAGMA integrity_check does not find FOREIGN KEY errors. Use PRAGMA foreign_key_check instead.",
        "Pragma statements supported by SQLite",
        0,
    )
    syntax = Snippet(
        "The columns are listed in order.\n\nPRAGMA schema.integrity_check;\nPRAGMA schema.integrity_check(N)\n\n"
        "This pragma does a low-level formatting and consistency check of the database. The integrity_check "
        "pragma looks for entries that are out of sequence.",
        "Pragma statements supported by SQLite",
        1,
    )
    out = ExtractiveGenerator().generate("What does PRAGMA integrity_check do in SQLite?", [limit, syntax])
    assert out.text.startswith("This pragma does a low-level formatting and consistency check")


def test_a_section_of_another_document_says_what_a_thing_is_for_when_no_document_is_its_own() -> None:
    """No snippet's title names /opt: the standard's sentence that opens with the name and says what it is for
    answers, not a sentence about its subdirectories that matches more of the question's words. A sentence that
    names the thing after an article ("The VACUUM INTO command is transactional…") tells a detail instead."""
    subdirs = Snippet(
        "The directories /opt/bin, /opt/doc and /opt/man are reserved for local system administrator use.",
        "Filesystem Hierarchy Standard",
        0,
    )
    section = Snippet(
        "3.13. /opt : Add-on application software packages\n3.13.1. Purpose\n/opt is reserved for the installation "
        "of add-on application software packages.",
        "Filesystem Hierarchy Standard",
        1,
    )
    out = ExtractiveGenerator().generate("What is /opt reserved for?", [subdirs, section])
    assert out.text.startswith("/opt is reserved for the installation of add-on application software packages.")
    backup = Snippet(
        "The VACUUM command with an INTO clause is an alternative to the backup API for generating backup copies.",
        "VACUUM",
        0,
    )
    detail = Snippet(
        "The VACUUM INTO command is transactional in the sense that the output database is a consistent snapshot.",
        "VACUUM",
        1,
    )
    out = ExtractiveGenerator().generate("What is VACUUM INTO used for?", [backup, detail])
    assert out.text.startswith("The VACUUM command with an INTO clause is an alternative to the backup API")


def test_a_name_line_answers_what_a_command_does_when_no_sentence_of_its_page_says_it() -> None:
    """A manual page's NAME line has no full stop (a label, never an answer by itself), but when no sentence
    of the page says what the command does, it is the answer, not a sentence of another page that names it."""
    page = Snippet(
        "Nom\n\ndiff - Comparer des fichiers ligne à ligne\n\nSynopsis\n\ndiff [option] ... fichiers\n\n"
        "Description\n\nComparer les fichiers ligne à ligne.",
        "diff(1)",
        0,
    )
    guide = Snippet(
        "Vous pouvez comparer deux fichiers diff.gz avec la commande interdiff(1). C'est utile pour les paquets.",
        "Chapitre 7. Contrôle des erreurs du paquet",
        1,
    )
    out = ExtractiveGenerator().generate("Que fait la commande diff ?", [page, guide])
    assert out.text == "diff - Comparer des fichiers ligne à ligne"
    assert {c.search_result_index for c in out.citations} == {0}


def test_a_manual_pages_name_line_opens_the_answer_unless_its_sentence_says_the_same() -> None:
    """ "What does strace do?": the NAME line is the page's own one-line summary, so it opens the answer, on a
    line of its own, before the sentence that says what strace is, which does not say it; an option's sentence
    that holds more of the question's words does not answer. "What is parted?": the sentence says what the NAME
    line says ("a partition manipulation program"), so it answers alone."""
    opening = Snippet(
        "Name\n\nstrace - trace system calls and signals\n\nSynopsis\n\nstrace [-ACdff] [-o file] command\n\n"
        "Description\n\nstrace is a useful diagnostic, instructional, and debugging tool. System administrators "
        "will find it invaluable.",
        "strace(1): trace system calls and signals",
        0,
    )
    options = Snippet(
        "-f: Trace child processes as they are created by currently traced processes. What strace does with "
        "them depends on -o.",
        "strace(1): trace system calls and signals",
        1,
    )
    out = ExtractiveGenerator().generate("What does strace do?", [options, opening])
    assert out.text == (
        "strace - trace system calls and signals\nstrace is a useful diagnostic, instructional, and debugging tool. "
        "System administrators will find it invaluable."
    )
    assert [c.text for c in out.citations][0] == "strace - trace system calls and signals"
    parted = Snippet(
        "Name\n\nparted - a partition manipulation program\n\nDescription\n\nparted is a program to manipulate "
        "disk partitions. It supports multiple partition table formats.",
        "parted(8): a partition manipulation program",
        0,
    )
    out = ExtractiveGenerator().generate("What is parted?", [parted])
    assert out.text.startswith("parted is a program to manipulate disk partitions.")


def test_a_part_that_ends_no_sentence_is_followed_by_a_line_break() -> None:
    """Table rows, NAME lines and commands have no full stop: what follows them in an answer starts on a new
    line instead of running on ("paperkey | extract the secret … keys\nsigning-party | …")."""
    table = Snippet(
        "Package | Popcon | Description\n\npaperkey | 12 | extract just the secret information out of OpenPGP "
        "secret keys\n\nsigning-party | 30 | various OpenPGP related tools for signing the keys of others",
        "Debian Reference",
        0,
    )
    out = ExtractiveGenerator().generate("Which packages help with OpenPGP secret keys and signing keys?", [table])
    assert "secret keys\nsigning-party" in out.text
    for c in out.citations:
        start, end = c.ranges[0]
        assert out.text[start:end] == c.text


def test_a_sentence_that_qualifies_the_best_one_comes_with_it() -> None:
    """ "Unfortunately, … this is not the case in SQLite." is what the best sentence means in SQLite; and when
    the best sentence ends its chunk, its copy at the start of the next chunk (chunks overlap) is read with what
    follows it there."""
    end = Snippet(
        "The PRIMARY KEY clause must contain only column names. If a table has a single column primary key, the "
        "column is known as an INTEGER PRIMARY KEY. According to the SQL standard, PRIMARY KEY should always "
        "imply NOT NULL.",
        "CREATE TABLE",
        0,
    )
    start = Snippet(
        "According to the SQL standard, PRIMARY KEY should always imply NOT NULL. Unfortunately, due to a bug in "
        "some early versions, this is not the case in SQLite. A table may have at most one primary key.",
        "CREATE TABLE",
        1,
    )
    out = ExtractiveGenerator().generate("Does a PRIMARY KEY column imply NOT NULL in SQLite?", [end, start])
    assert out.text.startswith(
        "According to the SQL standard, PRIMARY KEY should always imply NOT NULL. Unfortunately, due to a bug"
    )
    assert out.citations[0].search_result_index == 1
    alone = Snippet(start.text.replace("Unfortunately, due", "Due"), "CREATE TABLE", 0)
    assert "Due to a bug" not in ExtractiveGenerator().generate("Does a PRIMARY KEY imply NOT NULL?", [alone]).text


def test_what_qualifies_the_best_sentence_is_read_on_in_the_next_chunk_of_its_document() -> None:
    """The best sentence ends its chunk and the next chunk of the same document, another snippet, goes on with
    "Instead, …" and "However, …": both come with it, a qualifier qualified in its turn. Without the chunks'
    places (a custom search server's passages) nothing tells that the second passage goes on from the first."""
    bug = "cron requires that each entry in a crontab end in a newline character, but neither crontab nor cron "
    bug += "will detect the mistake when an entry does not."
    end = Snippet("crontab is the program used to install a table for cron. " + bug, "crontab(1)", 0, None, "", "d1", 4)
    nxt = Snippet(
        "Instead, crontab will appear to load normally. However, the command will never run. Put a blank line at "
        "the end of the file to be safe.",
        "crontab(1)",
        1,
        None,
        "",
        "d1",
        5,
    )
    question = "What happens when a crontab entry does not end in a newline?"
    out = ExtractiveGenerator().generate(question, [end, nxt])
    assert out.text.index(bug) < out.text.index("Instead, crontab") < out.text.index("However, the command will never")
    assert {c.search_result_index for c in out.citations} == {0, 1}
    unplaced = [Snippet(end.text, "crontab(1)", 0), Snippet(nxt.text, "crontab(1)", 1)]
    assert "never run" not in ExtractiveGenerator().generate(question, unplaced).text
    elsewhere = [end, Snippet(nxt.text, "crontab(1)", 1, None, "", "d1", 9)]  # not the next chunk
    assert "never run" not in ExtractiveGenerator().generate(question, elsewhere).text


def test_what_this_refers_to_is_read_in_the_chunk_before_when_that_is_a_snippet() -> None:
    """The best sentence opens its chunk with "This…"; what "this" is, the last sentence of the chunk before it,
    comes with it when that chunk is a snippet too, and not when the two passages have no places."""
    before = Snippet(
        "The client sends data to the server by default. The direction is reversed by specifying the -R flag on "
        "the client.",
        "iperf3(1)",
        1,
        None,
        "",
        "d2",
        7,
    )
    this = Snippet(
        "This causes data to be sent from the server to the client. The port is 5201 unless told otherwise.",
        "iperf3(1)",
        0,
        None,
        "",
        "d2",
        8,
    )
    question = "How do I make iperf3 send the data from the server to the client?"
    out = ExtractiveGenerator().generate(question, [this, before])
    assert out.text.index("specifying the -R flag on the client.") < out.text.index("This causes data to be sent")
    unplaced = [Snippet(this.text, "iperf3(1)", 0), Snippet(before.text, "iperf3(1)", 1)]
    assert ExtractiveGenerator().generate(question, unplaced).text.startswith("This causes data")


def test_a_sentence_that_says_how_to_do_what_the_best_one_says_comes_with_it() -> None:
    """ "It is possible to make SQLite treat NULLs as distinct…" restates the question; "To do so, …" that follows
    it answers it, though it shares few of the question's words."""
    page = Snippet(
        "SQLite was modified to work the same as Oracle. This involved making NULLs indistinct for SELECT DISTINCT "
        "and for the UNION operator in a SELECT. This seems somewhat arbitrary, but compatibility outweighed that "
        "objection. It is possible to make SQLite treat NULLs as distinct for SELECT DISTINCT and UNION. To do so, "
        "one should change the value of the NULL_ALWAYS_DISTINCT #define in the sqliteInt.h source file and "
        "recompile. Update 2003-07-13: some of the engines tested have been updated since.",
        "NULL Handling in SQLite",
        0,
    )
    out = ExtractiveGenerator().generate(
        "How can SQLite be made to treat NULLs as distinct for SELECT DISTINCT?", [page]
    )
    assert "It is possible to make SQLite treat NULLs as distinct" in out.text and "NULL_ALWAYS_DISTINCT" in out.text
    # a question that asks whether, not how: "To do so" does not answer it
    whether = ExtractiveGenerator().generate(
        "Can SQLite be made to treat NULLs as distinct for SELECT DISTINCT?", [page]
    )
    assert "NULL_ALWAYS_DISTINCT" not in whether.text


def test_a_sentence_whose_subject_is_what_the_best_one_spoke_of_comes_with_it() -> None:
    """ "Les Autotools sont les outils de construction GNU." matches the question; "Ils comprennent Autoconf,
    Automake, Libtool et gettext." right after it says what they are, in none of the question's words."""
    page = Snippet(
        "Ces outils de construction doivent être utilisés pour créer les Makefile. Les Autotools sont les outils "
        "de construction GNU. Ils comprennent Autoconf, Automake, Libtool et gettext. La première étape du travail "
        "des Autotools est généralement faite par les auteurs amont qui exécutent autoreconf dans le répertoire "
        "des sources.",
        "Chapitre 2. Premiers pas",
        0,
    )
    assert (
        "Autoconf, Automake, Libtool"
        in ExtractiveGenerator().generate("Quels outils forment les Autotools ?", [page]).text
    )
    cands = candidates([page])
    best = opening(cands, "Les Autotools")
    assert _qualifier(cands, best) == best + 1
    assert _qualifier(cands, best + 1) is None  # "La première étape…" speaks of something else
    # "In this case, …" says what holds in the case the best one states
    limit = Snippet(
        "Instead of a separate OFFSET clause, the LIMIT clause may specify two scalar expressions separated by a "
        "comma. In this case, the first expression is used as the OFFSET expression and the second as the LIMIT "
        "expression. This reversal is intentional.",
        "SELECT",
        0,
    )
    cands = candidates([limit])
    best = opening(cands, "Instead of")
    assert _qualifier(cands, best) == best + 1


def test_the_sentence_that_names_the_option_comes_with_the_one_that_matches_a_which_option_question() -> None:
    """ "By default, dpkg-buildpackage will include the original source tar file if and only if…" matches the
    question; "This behavior may be modified by using -sa to always include it" right after it names the option
    it asks for."""
    page = Snippet(
        "Subsequently, this very same tar file should be used to build the new diffs and .dsc files, and will not "
        "need to be re-uploaded. By default, dpkg-genchanges and dpkg-buildpackage will include the original source "
        "tar file if and only if the current changelog entry has a different upstream version from the preceding "
        "entry. This behavior may be modified by using -sa to always include it or -sd to always leave it out. If "
        "no original source is included in the upload, the original source tar-file used when building the upload "
        "must be byte-for-byte identical with the one already in the archive.",
        "Managing Packages",
        0,
    )
    question = "Which dpkg-buildpackage option always includes the original source tar file in an upload?"
    assert "-sa" in ExtractiveGenerator().generate(question, [page], "moderate").text
    # for a question that asks no option, the sentence is no qualifier (it may still be chosen on its own score)
    cands = candidates([page])
    best = opening(cands, "By default")
    assert _qualifier(cands, best, asks_option=True) == best + 1
    assert _qualifier(cands, best, asks_option=False) is None


def test_the_sentence_that_states_the_default_comes_with_the_best_one_for_a_default_question() -> None:
    """ "read only: This parameter determines whether clients will be able to upload files or not." matches the
    question; "Its default is yes." three sentences later in its paragraph answers it, though it shares none of
    the question's words."""
    page = Snippet(
        "read only: This parameter determines whether clients will be able to upload files or not. If it is true "
        "then any attempted uploads will fail. If it is false then uploads are possible where file permissions "
        "allow them. Its default is yes.\n\nwrite only: This parameter determines whether clients will be able to "
        "download files or not.",
        "rsyncd.conf(5)",
        0,
    )
    answer = ExtractiveGenerator().generate("Can clients upload files to a module by default?", [page], "moderate")
    assert "upload files or not" in answer.text and "Its default is yes." in answer.text
    other = ExtractiveGenerator().generate("Can clients upload files to a module?", [page], "moderate")
    assert "default" not in other.text
    # an item's default may be stated in the paragraph after its first one, not under the next item
    limits = Snippet(
        "- Maximum Depth Of An Expression Tree: SQLite parses expressions into a tree for processing. During code "
        "generation, SQLite walks this tree recursively.\n\nThe SQLITE_MAX_EXPR_DEPTH parameter determines the "
        "maximum expression tree depth. If the value is 0, then no limit is enforced. The current implementation "
        "has a default value of 1000.\n\nThe maximum depth of an expression tree can be lowered at run-time using "
        "the sqlite3_limit() interface. In other words, the maximum expression depth can be lowered at run-time "
        "if there is already a compile-time limit on the expression depth.\n\n- Maximum Number Of Arguments On A "
        "Function: The default value of this limit is 100.",
        "Implementation Limits For SQLite",
        0,
    )
    question = "What is the default maximum depth of an expression tree in SQLite?"
    assert "default value of 1000" in ExtractiveGenerator().generate(question, [limits], "moderate").text


def test_a_sentence_opening_with_this_speaks_of_its_antecedents_subject() -> None:
    """ "This is useful when…" names no REINDEX, but the sentence before it does: for "When is it useful to run
    REINDEX?" it matches more than the same sentence about something else ("Tuning is useful when…")."""

    def relevance(second: str) -> float:
        page = Snippet(
            f"The REINDEX command is used to delete and recreate indices from scratch. {second} is useful when the "
            "definition of a collation sequence has changed. You can run REINDEX on one table.",
            "REINDEX",
            0,
        )
        return float(ExtractiveGenerator()._scored("When is it useful to run REINDEX?", [page]).relevance[1])

    assert relevance("This") > relevance("Tuning") > 0


def test_a_french_sentence_opening_with_il_speaks_of_the_one_before_unless_it_is_impersonal() -> None:
    """ "Il utilise le fichier /etc/dput…" answers with the sentence that says what "il" is; "Il n'y a pas de barre
    oblique…" refers to nothing, and nothing comes before it."""
    page = Snippet(
        "Le paquet dput fournit plus de fonctionnalités que dupload. Il utilise le fichier /etc/dput pour la "
        "configuration globale et le fichier ~/.dput.cf pour la configuration par utilisateur. Il est préférable "
        "de vérifier le paquet avant. Il n'y a pas de barre oblique au début des noms de répertoire du fichier dirs.",
        "Chapitre 9",
        0,
    )
    cands = candidates([page])
    uses = opening(cands, "Il utilise")
    slash = opening(cands, "Il n'y a")
    assert _antecedent(cands, uses) == uses - 1
    assert _antecedent(cands, slash) is None
    assert _qualifier(cands, uses) is None  # "Il est préférable…" does not go on about dput


def test_a_remark_in_parentheses_answers_with_what_it_remarks_on() -> None:
    """ "(初心者向けメーリングリストです。)" says which list is for beginners only with the item before it, in that
    item: it answers with it. A sentence that only holds parentheses keeps its own place elsewhere."""
    page = Snippet(
        "- debian-mentors@lists.debian.org メーリングリスト。 (初心者向けメーリングリストです。)\n\n"
        "- debian-devel@lists.debian.org メーリングリスト。 (上級者向けメーリングリストです。)\n\n"
        "The list (see below) is open to everyone.",
        "第1章",
        0,
    )
    cands = candidates([page])
    remark = opening(cands, "(初心者")
    open_ = opening(cands, "The list")
    assert _antecedent(cands, remark) == remark - 1
    assert cands[remark - 1].text.startswith("debian-mentors@")
    assert _antecedent(cands, open_) is None


def test_a_short_japanese_name_line_is_long_enough_to_answer() -> None:
    """A CJK character counts twice against ``min_chars``: "diff - ファイルの行単位での比較" (19 characters) says
    as much as "diff - compare files line by line"."""
    page = Snippet(
        "名前\n\ndiff - ファイルの行単位での比較\n\n書式\n\ndiff [OPTION]... FILES\n\n関連項目\n\n"
        "diff の完全なドキュメントは Texinfo マニュアルとしてメンテナンスされています。",
        "diff(1): ファイルの行単位での比較",
        0,
    )
    assert ExtractiveGenerator().generate("diff とは何ですか？", [page]).text == "diff - ファイルの行単位での比較"
    assert text_width("diff - ファイルの行単位での比較") == 31 and text_width("diff") == 4


def test_a_readme_says_what_its_project_is_in_the_line_under_its_name() -> None:
    """ "PyrateLimiter" / "A fast, async-friendly rate limiter…": the line under a README's name says what the
    project is, though it does not name it; what the project requires does not."""
    readme = Snippet(
        "PyrateLimiter\n\nA fast, async-friendly rate limiter for Python, with pluggable backends.\n\n"
        "Installation\n\nPyrateLimiter requires Python 3.10+.\n\npip install pyrate-limiter",
        "PyrateLimiter",
        0,
    )
    out = ExtractiveGenerator().generate("What is PyrateLimiter?", [readme])
    assert out.text.startswith("A fast, async-friendly rate limiter for Python")


def test_a_readme_titled_by_another_name_is_its_project_s_by_its_file_name() -> None:
    """fsspec's README is titled "filesystem_spec", threadpoolctl's "Thread-pool Controls": their file names say
    whose they are, and the line under the title says what the project is or does; a later passage that says
    what it does ("fsspec uses GitHub Actions for CI.") tells a detail. Without the file name the line under
    the title is nobody's."""
    opening = Snippet(
        "filesystem_spec\n\nA specification for pythonic filesystems.\n\nInstall\n\npip install fsspec",
        "filesystem_spec",
        0,
        filename="fsspec-README.md",
    )
    later = Snippet(
        "Develop\n\nfsspec uses GitHub Actions for CI. Environment files can be found in the ci/ directory.",
        "filesystem_spec",
        1,
        filename="fsspec-README.md",
    )
    out = gen().generate("What is fsspec?", [opening, later])
    assert out.text.startswith("A specification for pythonic filesystems.")
    nameless = [replace(opening, filename=""), replace(later, filename="")]
    assert not gen().generate("What is fsspec?", nameless).text.startswith("A specification")


def test_a_command_line_that_holds_every_word_of_the_question_answers_it() -> None:
    """ "pip install threadpoolctl" is short and a label, yet it is the answer to "How do I install
    threadpoolctl?", with the line that introduces it; a heading that holds the same words is not."""
    readme = Snippet(
        "Installation\n\nFor users, install the last published version from PyPI:\n\npip install threadpoolctl\n\n"
        "For contributors, install from the source repository in developer mode:\n\npip install -r dev-requirements.txt",
        "threadpoolctl-README",
        0,
    )
    other = Snippet("threadpoolctl can be installed on any platform where Python runs, as many packages can.", "FAQ", 1)
    out = ExtractiveGenerator().generate("How do I install threadpoolctl?", [readme, other])
    assert out.text.startswith("For users, install the last published version from PyPI:\npip install threadpoolctl")
    heading = Snippet("Installing threadpoolctl\n\nIt works on Linux and macOS.", "Guide", 0)
    assert not ExtractiveGenerator().generate("How do I install threadpoolctl?", [heading]).text.startswith("Install")


def test_a_command_line_need_not_hold_the_function_words_of_the_question() -> None:
    """ "How do I install markdown-it-py with its plugins?" is answered by "pip install markdown-it-py[plugins]",
    which holds none of "with" and "its"; "What is annotated-types?" is not answered by "pip install
    annotated-types", which does not say what it is."""
    readme = Snippet(
        "This is a Python port of markdown-it, and some of its associated plugins.\n\nInstallation\n\nPIP\n\n"
        "pip install markdown-it-py[plugins]\n\nConda\n\n"
        "conda install -c conda-forge markdown-it-py linkify-it-py mdit-py-plugins",
        "markdown-it-py",
        0,
    )
    out = ExtractiveGenerator().generate("How do I install markdown-it-py with its plugins?", [readme])
    assert "pip install markdown-it-py[plugins]" in out.text
    types = Snippet(
        "annotated-types\n\nReusable constraint types to use with typing.Annotated.\n\nInstall\n\n"
        "pip install annotated-types",
        "annotated-types",
        0,
    )
    assert not ExtractiveGenerator().generate("What is annotated-types?", [types]).text.startswith("pip install")


def test_a_command_line_that_holds_every_word_of_the_question_follows_the_sentence_before_it() -> None:
    readme = Snippet(
        "Install Rich with pip or your favorite PyPI package manager.\n\npython -m pip install rich\n\n"
        "Rich works with Jupyter notebooks with no additional configuration required.",
        "rich-README",
        0,
    )
    out = ExtractiveGenerator().generate("How do I install Rich?", [readme])
    assert out.text.startswith(
        "Install Rich with pip or your favorite PyPI package manager. python -m pip install rich"
    )


def test_a_passage_that_writes_the_name_the_question_writes_as_code_answers() -> None:
    """ "group_concat" is written as code: the passage that writes it answers, though another passage about
    separators matches the question's words better and the search ranked it higher."""
    other = Snippet(
        "--path-separator SEPARATOR: Set the path separator to use.\n\nThe separator may be any number of bytes.",
        "rg(1): recursively search",
        0,
        similarity=0.88,
    )
    functions = Snippet(
        "group_concat(X)\ngroup_concat(X,Y): The group_concat() function returns the concatenation of all non-NULL "
        "values of X. A comma is used as the separator if Y is omitted.",
        "Built-in Aggregate Functions",
        1,
        similarity=0.84,
    )
    out = ExtractiveGenerator().generate(
        "What separator does group_concat use when I don't give one?", [other, functions]
    )
    assert "comma" in out.text
    assert {c.search_result_index for c in out.citations} == {1}


def test_the_entry_a_question_names_answers_from_a_lower_ranked_passage() -> None:
    """bc's "quit: When the 'quit' statement is read…" answers a question that names quit, though the search
    ranked a passage about terminating execution blocks well above it."""
    errors = Snippet(
        "The execution block is terminated by an end of line after a complete sequence of statements. Any "
        "runtime error will terminate the execution of the current execution block.",
        "bc-bc",
        0,
        similarity=0.874,
    )
    statements = Snippet(
        "print list: The print statement provides another method of output.\n\nquit: When the 'quit' statement "
        "is read, the 'bc' processor is terminated, regardless of where the 'quit' statement is found.",
        "bc-bc",
        1,
        similarity=0.860,
    )
    out = ExtractiveGenerator().generate(
        "Does bc's quit statement terminate bc inside an if branch?", [errors, statements]
    )
    assert out.text.startswith("quit: When the 'quit' statement is read")


def test_a_sentence_that_speaks_of_the_credit_line_before_it_answers_with_it() -> None:
    """ "These are the copyright dates of the original Debian Perl Policy." speaks of the credit line above it,
    which names the authors; a heading above such a sentence is not brought along."""
    front = Snippet(
        "Debian Perl Policy\n\nCopyright © 1999, 2001 Raphaël Hertzog, Brendan O'Dea\n\nThese are the copyright "
        "dates of the original Debian Perl Policy. Since then it has been updated by many others.",
        "Debian Perl Policy",
        0,
    )
    out = ExtractiveGenerator().generate("Who wrote the Debian Perl Policy?", [front])
    assert out.text.startswith("Copyright © 1999, 2001 Raphaël Hertzog, Brendan O'Dea")
    heading = Snippet("Copyright dates\n\nThese are the copyright dates of the policy.", "Policy", 0)
    assert not ExtractiveGenerator().generate("Who wrote the policy?", [heading]).text.startswith("Copyright dates")


def test_a_sentence_that_announces_a_block_answers_with_it() -> None:
    """ "Add the following lines to ~/.bashrc." ends with a full stop, and one more sentence comes before the
    block it announces; the block's lines are too short to answer alone, yet they are the answer."""
    guide = Snippet(
        "Set up quilt first.\n\nTo use it for Debian packages, add the following lines to ~/.bashrc to create "
        "the dquilt alias. The second line gives dquilt the same completion as quilt:\n\n"
        'alias dquilt="quilt --quiltrc=${HOME}/.quiltrc-dpkg"\ncomplete -F _quilt_completion dquilt\n\n'
        "Then create ~/.quiltrc-dpkg.",
        "Chapter 3. Modifying the source",
        0,
    )
    out = ExtractiveGenerator().generate("How do I define the dquilt alias?", [guide])
    assert 'alias dquilt="quilt --quiltrc=${HOME}/.quiltrc-dpkg"' in out.text


def test_a_question_that_names_its_page_as_code_is_not_answered_by_the_pages_name_line() -> None:
    """ "Which rsyncd.conf parameter…" names rsyncd.conf(5): its NAME line is no entry the question names, and the
    passages that write "rsyncd.conf" are no closer to it than the page's others."""
    title = "rsyncd.conf(5): configuration file for rsync in daemon mode"
    opening = Snippet(
        "Name\n\nrsyncd.conf - configuration file for rsync in daemon mode\n\nSynopsis\n\nrsyncd.conf\n\n"
        "The online version of this manpage is available at https://download.samba.org/pub/rsync/rsyncd.conf.5",
        title,
        0,
    )
    entries = Snippet(
        "max connections: This parameter allows you to specify the maximum number of simultaneous connections "
        "you will allow.\n\nlock file: This parameter specifies the file to use.",
        title,
        1,
    )
    question = "Which rsyncd.conf parameter sets the maximum number of simultaneous connections?"
    out = gen().generate(question, [opening, entries], "concise")
    assert out.text.startswith("max connections: This parameter allows you to specify the maximum number")


def test_a_readmes_opening_line_is_no_entry_of_the_name_the_question_asks_about() -> None:
    """ "HTTPX - A next-generation HTTP client for Python." opens httpx's README as a NAME line opens a manual
    page: a question about what HTTPX can do is answered by the line that says it."""
    readme = Snippet(
        "HTTPX - A next-generation HTTP client for Python.\n\nHTTPX is a fully featured HTTP client library for "
        "Python 3.\n\nFeatures\n\n- A broadly requests-compatible API.\n"
        "- Ability to make requests directly to WSGI applications or ASGI applications.\n- Strict timeouts everywhere.",
        "httpx-README",
        0,
    )
    question = "Can HTTPX send requests directly to a WSGI application?"
    assert entry_match(question, candidates([readme]), [readme.title]).tolist()[0] == 0.0
    out = gen().generate(question, [readme], "concise")
    assert out.text.startswith("Ability to make requests directly to WSGI applications")


def test_a_sentence_that_writes_the_option_the_question_names_answers_it() -> None:
    """A README's list item about ``--reload`` answers a question about it, over a sentence that shares more of
    the question's other words."""
    readme = Snippet(
        "The standard install of uvicorn brings Cython-based dependencies where possible.\n\n"
        "- the websocket protocol will be handled by websockets.\n"
        "- the --reload flag in development mode will use watchfiles.",
        "uvicorn-README",
        0,
    )
    question = "Which package does uvicorn use for the --reload flag in its standard install?"
    out = gen().generate(question, [readme], "concise")
    assert out.text == "the --reload flag in development mode will use watchfiles."
    off = ExtractiveGenerator(HashingEmbedder(64), w_option=0.0).generate(question, [readme], "concise")
    assert off.text.startswith("The standard install of uvicorn")


def test_a_sentence_whose_subject_is_a_name_answers_which_tool() -> None:
    """ "Which tool…" is answered by the sentence that names the tool as its subject, as a manual writes a
    command in lower case, over one that shares more of the question's words and only talks about tools."""
    overview = Snippet(
        "There are multiple tools that are used to manage Debian packages and convert packages.\n\n"
        "alien converts binary packages between various packaging formats, including Debian and RPM.",
        "Overview of Debian Maintainer Tools",
        0,
    )
    question = "Which tool converts RPM packages into Debian packages?"
    out = gen().generate(question, [overview], "concise")
    assert out.text.startswith("alien converts")
    off = gen(w_name=0.0).generate(question, [overview], "concise")
    assert off.text.startswith("There are multiple tools")
    # a question that asks no tool's name, or a sentence that starts with the name the question writes, is not
    # weighed so
    cands = candidates([overview])
    assert names_subject(question, cands).tolist() == [0.0, 1.0]
    assert not names_subject("How do I convert RPM packages into Debian packages?", cands).any()
    assert not names_subject("Which alien command converts RPM packages?", cands).any()
    assert names_subject("Quel outil convertit des paquets RPM ?", cands).any()


def test_a_sentence_that_writes_a_path_answers_which_file() -> None:
    """ "Which file holds the hostname…?" is answered by the sentence that writes a path (a file's name), even in a
    passage the dense search ranked below the best one, over sentences that share as many of its words and name no
    file."""
    packages = Snippet(
        "Debian asks for the hostname of the machine during the installation, before the first boot.",
        "The Debian FAQ",
        0,
        similarity=0.88,
    )
    hostname = Snippet(
        "The kernel maintains the system hostname. A systemd unit sets the system hostname at boot time to the name "
        'stored in "/etc/hostname".',
        "The system initialization",
        1,
        similarity=0.85,
    )
    question = "Which file holds the hostname that Debian sets at boot?"
    out = gen().generate(question, [packages, hostname], "concise")
    assert "/etc/hostname" in out.text
    off = gen(w_name=0.0).generate(question, [packages, hostname], "concise")
    assert "/etc/hostname" not in off.text
    assert names_asked_kind(question, candidates([hostname])).tolist() == [0.0, 1.0]
    for asks in ("Quel fichier de configuration global utilise dupload ?", "Where are the logs stored?"):
        assert asks_path(asks)
    for other in (
        "What does the file command do?",
        "Which file format does tar use?",
        "Where does SQLite put it?",
        "How can I find out which package a file on my system came from?",  # asks for a package
        "Which Files stanza applies when several match?",  # a stanza named Files
        "Quel champ du fichier control contient la liste ?",  # a field of a file
    ):
        assert not asks_path(other)
    # a URL is no path
    url = candidates([Snippet("See http://www.debian.org/ports/ and/or the FAQ.", "Ports", 0)])
    assert not names_asked_kind(question, url).any()


def test_a_name_written_beside_the_asked_kind_answers_which_kind() -> None:
    """ "On which mailing list…" is answered by the sentence that writes a list's name beside "mailing list",
    even in a passage the dense search ranked well below the best one (the similarity gap does not hold it back),
    over sentences that share more of the question's words and name none."""
    duties = Snippet(
        "Any developer may propose a general resolution: a general resolution proposal is discussed first among "
        "the developers.",
        "Debian Developer's duties",
        0,
        similarity=0.88,
    )
    vote = Snippet(
        "Each proposal is first discussed on the debian-vote@lists.debian.org mailing list and it requires "
        "several endorsements before it is voted on.",
        "Debian Developer's duties",
        1,
        similarity=0.80,
    )
    question = "On which mailing list is a general resolution proposal discussed first?"
    out = gen().generate(question, [duties, vote], "concise")
    assert out.text.startswith("Each proposal is first discussed on the debian-vote")
    off = gen(w_name=0.0).generate(question, [duties, vote], "concise")
    assert not off.text.startswith("Each proposal")
    cands = candidates([vote])
    assert names_asked_kind(question, cands).tolist() == [1.0]
    assert not names_asked_kind("Is a general resolution discussed on a mailing list?", cands).any()
    script = candidates(
        [
            Snippet(
                "The nmudiff script in the devscripts package might be helpful. You must also send an nmudiff to "
                "the bug. The following script sends the patch. Use the script nmu-send.sh for that.",
                "Handling packages",
                0,
            )
        ]
    )
    assert names_asked_kind("Which script helps send the patch of an NMU?", script).tolist() == [1.0, 0.0, 0.0, 1.0]
    # an option's or a command's name is its entry's (entry_match), and "the low level tools" names no tool
    assert not names_asked_kind("Which option enables it?", candidates([Snippet("Use the -x option.", "T", 0)])).any()
    tools = candidates([Snippet("There are the low level tools used to install packages.", "T", 0)])
    assert not names_asked_kind("Which tool converts RPM packages?", tools).any()
    # a shell's builtins, an operator, an upload queue are named as scripts are
    jobs = candidates(
        [
            Snippet(
                "Without options, remove each jobspec from the table of active jobs. It should be removed from the "
                "jobs table with the disown builtin.",
                "Bash",
                0,
            )
        ]
    )
    assert names_asked_kind("Which bash builtin removes a job from the table of active jobs?", jobs).tolist() == [0, 1]


def test_a_sentence_that_writes_a_command_line_answers_which_command() -> None:
    page = Snippet(
        "A Debian archive file contains the executable files, libraries, and documentation of a program.\n\n"
        "Determine what files are contained in a Debian archive file: dpkg-deb --contents foo_VVV-RRR.deb\n\n"
        "Use the --reload flag in development.",
        "The Debian FAQ",
        0,
    )
    cands = candidates([page])
    assert names_subject("Which command shows the files contained in a .deb archive file?", cands).tolist() == [
        0.0,
        1.0,
        0.0,  # "the --reload flag": a stop word is no program
    ]


# the best passage of the runner-up tests: three sentences on where bug reports go, which fill a moderate answer
BUG_REPORTS = Snippet(
    "Bug reports on many packages go to the debian-devel list. Such bug reports on packages go out by hand. "
    "Such bug reports on packages go out by mail.",
    "Reporting bugs",
    0,
)


def test_another_passage_that_answers_about_as_well_follows_the_best_one() -> None:
    """When the second best sentence comes from another passage and scores nearly as well as the best, it follows
    the best passage's sentences, one more than the length's count: the answer shows both candidates. A weaker one
    does not join, nor does any in a concise answer. (The passage bonus is raised so that the best passage fills
    the count by itself.)"""
    generator = ExtractiveGenerator(same_snippet_bonus=2.0)
    best = BUG_REPORTS
    other = Snippet("Bug reports on many packages go to the maintonly address.", "Bug tracking", 1)
    weaker = Snippet("Bug reports go to the maintainer.", "Bug tracking", 1)
    question = "Where do bug reports on many packages go?"
    answer = generator.generate(question, [best, other], "moderate")
    assert answer.text.startswith("Bug reports on many packages go to the debian-devel list.")
    assert answer.text.endswith("go to the maintonly address.") and answer.text.count("Such bug reports") == 2
    assert {c.search_result_index for c in answer.citations} == {0, 1}
    assert "maintainer" not in generator.generate(question, [best, weaker], "moderate").text
    assert "maintonly" not in generator.generate(question, [best, other], "concise").text


@pytest.mark.parametrize("size", ["moderate", "verbose"])
def test_a_joining_sentence_that_introduces_brings_what_it_introduces(size: str) -> None:
    """A sentence of another passage that joins the answer and ends with a colon ("Currently there are three
    versions of Debian GNU/Linux:") brings what it introduces, the lines up to the next blank line, whether it joins
    as the runner-up (moderate) or as one of the best sentences (verbose): the answer does not end on a colon. When
    not even the first line fits the length, the introducing sentence stays out."""
    generator = ExtractiveGenerator(same_snippet_bonus=2.0)
    best = BUG_REPORTS
    other = Snippet(
        "Bug reports on many packages go to two addresses:\n\n"
        "    maintonly@bugs.debian.org  reaches the maintainer only\n"
        "    submit@bugs.debian.org  opens a new bug\n\nSee the list of addresses.",
        "Bug tracking",
        1,
    )
    question = "Where do bug reports on many packages go?"
    answer = generator.generate(question, [best, other], size)
    assert answer.text.endswith(
        "go to two addresses:\nmaintonly@bugs.debian.org reaches the maintainer only\nsubmit@bugs.debian.org opens a new bug"
    )
    assert [c.text for c in answer.citations[-2:]] == [
        "maintonly@bugs.debian.org reaches the maintainer only",
        "submit@bugs.debian.org opens a new bug",
    ]
    long_line = "maintonly@bugs.debian.org  reaches " + "the maintainer and " * 80 + "nobody else"
    crowded = Snippet(other.text.replace("maintonly@bugs.debian.org  reaches the maintainer only", long_line), "B", 1)
    assert generator.generate(question, [best, crowded], size).text.endswith("go out by mail.")


def test_a_sentence_that_says_when_a_thing_has_a_quality_defines_the_two_together() -> None:
    """ "What is a hot journal?" is answered by "A rollback journal is said to be hot if…", which defines it in a page
    about something else (file locking), not by the sentences that only mention hot journals."""
    page = Snippet(
        "Before reading from a database file, SQLite always checks to see if that database file has a hot journal. "
        "If the file does have a hot journal, then the journal is rolled back before the file is read.\n\n"
        "Each rollback journal also contains the name of the super-journal. A rollback journal is said to be hot if "
        "it needs to be rolled back in order to restore the integrity of its database.",
        "File Locking And Concurrency In SQLite Version 3",
        0,
    )
    answer = gen().generate("What is a hot journal in SQLite?", [page], "concise")
    assert answer.text.startswith("A rollback journal is said to be hot if it needs to be rolled back")


def test_a_table_row_answers_under_its_header_row() -> None:
    """A row of a table answers a question its cells answer, under the table's header row (the row says what the
    header's columns name), each row on its own line: "route(8) | ip route | routing table entry" names the command
    that replaces route, though the sentence that introduces the table holds more of the question's words."""
    page = Snippet(
        "Iproute2 commands offer complete low-level network configuration capabilities. Here is a translation "
        "table from obsolete net-tools commands to new iproute2 etc. commands.\n\n"
        "obsolete net-tools | new iproute2 etc. | manipulation\n"
        "ifconfig(8) | ip addr | protocol (IP or IPv6) address on a device\n"
        "route(8) | ip route | routing table entry\n"
        "arp(8) | ip neigh | ARP or NDISC cache entry\n\nSee ip(8).",
        "Network setup",
        0,
    )
    answer = gen().generate("Which iproute2 command replaces the obsolete route command?", [page], "moderate")
    assert answer.text.endswith(
        "obsolete net-tools | new iproute2 etc. | manipulation\nroute(8) | ip route | routing table entry"
    )
    assert "ifconfig" not in answer.text


def test_a_command_a_sentence_introduces_comes_with_the_lines_of_its_block() -> None:
    """A sentence that joins the answer and shows commands ("Utilisez la commande dpkg comme ceci pour les essayer :")
    brings its block of command lines, not only the first; a PDF's text has no blank line, so the block ends at
    the next sentence that introduces another."""
    page = Snippet(
        "Si le paquet utilise des scripts du responsable non triviaux, veuillez les essayer pour la suppression et "
        "la purge. Utilisez la commande dpkg comme ceci pour les essayer\u00a0:\n\n$ sudo dpkg -r gentoo\n"
        "$ sudo dpkg -P gentoo\n$ sudo dpkg -i gentoo_version-révision_i386.deb\n"
        "Les séquences suivantes devraient être essayées\u00a0:\n— installation de la version précédente ;\n— purge ;",
        "Chapitre 7",
        0,
    )
    answer = gen().generate("Quelle commande dpkg purge un paquet pour essayer ses scripts ?", [page], "moderate")
    assert (
        "$ sudo dpkg -r gentoo\n$ sudo dpkg -P gentoo\n$ sudo dpkg -i gentoo_version-révision_i386.deb" in answer.text
    )
    assert "séquences" not in answer.text


def test_a_command_question_is_answered_with_the_command_s_synopsis_entry() -> None:
    """tmux(1) defines its commands by their synopses; "Which tmux command renames a window?" answers with
    rename-window's, not with prose that says "window", "named" and "command"."""
    page = Snippet(
        "If -S is given and a window named window-name already exists, the command does nothing.\n\n"
        "rename-window [-t target-window] new-name: (alias: renamew) Rename the current window.",
        "tmux(1): terminal multiplexer",
        0,
    )
    answer = gen().generate("Which tmux command renames a window?", [page], "concise")
    assert answer.text.startswith("rename-window [-t target-window] new-name")


def test_a_sentence_of_the_named_manual_page_answers_before_an_as_good_one_of_another_page() -> None:
    """The word "tree" names tree(1): its ``--prune`` answers, not rsync(1)'s sentence that happens to say "leave empty
    directories" a little better, which the loop would refuse as off the question's subject. A page that does
    not answer at all is not chosen for being named (the penalty is small)."""
    rsync = Snippet(
        "--prune-empty-dirs, -m: This option tells the receiving rsync to get rid of empty directories.\n\n"
        "This option can still leave empty directories on the receiving side of the output.",
        "rsync(1): a fast, versatile, local/remote file-copying tool",
        0,
    )
    tree = Snippet(
        "--prune: Makes tree prune empty directories from the output.",
        "tree(1): list contents of directories in a tree-like format.",
        1,
    )
    query = "How do I make tree leave empty directories out of its output?"
    assert _off_page(query, [rsync, tree]).tolist() == [1.0, 0.0]
    assert _off_page(query, [rsync]).tolist() == [0.0]  # no passage of the named page: nothing to prefer
    assert _off_page("How do I leave empty directories out?", [rsync, tree]).tolist() == [0.0, 0.0]
    penalty = extractive.Tuning().w_off_page
    _, scores = gen().score(query, [rsync, tree])
    _, plain = gen(w_off_page=0.0).score(query, [rsync, tree])
    assert 0 < penalty < 0.5 and (plain - scores).tolist() == pytest.approx([penalty, penalty, 0.0])


def test_the_words_that_frame_a_question_weigh_half_their_idf() -> None:
    """ "Which rows does an UPDATE without a WHERE clause modify?": documents seldom write "which" or "does", so
    among the candidate sentences their idf is high, and a sentence about which rows fall within the LIMIT would
    match the question through them; they weigh ``frame_term_weight`` (0.5) of their idf."""
    page = Snippet(
        text="The ORDER BY clause determines which rows fall within the LIMIT. "
        "Without a WHERE clause, all rows in the table are modified by the UPDATE.",
        title="UPDATE",
        result_index=0,
    )
    question = "Which rows does an UPDATE without a WHERE clause modify?"
    cands, scores = gen().score(question, [page])
    _, flat = gen(frame_term_weight=1.0).score(question, [page])
    decoy, answer = opening(cands, "The ORDER BY"), opening(cands, "Without a WHERE")
    assert scores[answer] - scores[decoy] > flat[answer] - flat[decoy]
    assert {"which", "doe", "what", "happe", "many"} <= FRAME_TERMS


def test_a_sentence_of_an_options_description_answers_after_its_option() -> None:
    """ "With it, curl skips the verification step" tells how only with the option it describes: the answer opens
    with "-k, --insecure: …", though the question asks for no option."""
    page = Snippet(
        "-j, --junk-session-cookies: (HTTP) When curl is told to read cookies from a given file, this option makes "
        "it discard all session cookies.\n\n-k, --insecure: (TLS SFTP SCP) By default, every secure connection curl "
        "makes is checked before the transfer takes place. The check reads the CA bundle of the system. With it, curl "
        "skips the verification step and goes on without it.",
        "curl(1): transfer a URL",
        0,
    )
    out = ExtractiveGenerator().generate("How do I make curl skip the verification step?", [page])
    assert out.text.startswith("-k, --insecure:")
    assert "skips the verification step" in out.text


def test_the_entry_before_an_entrys_term_line_is_no_lead_in() -> None:
    """iperf3's "-t, --time n" answers how long a test transmits; the line above it ends the entry of another
    option, "--no-fq-socket-pacing: This option is deprecated…", which is no lead-in of it."""
    page = Snippet(
        "--no-fq-socket-pacing: This option is deprecated and will be removed. It is kept for compatibility.\n\n"
        "-t, --time n: time in seconds to transmit for (default 10 secs). The test stops after that time.",
        "iperf3(1): perform network throughput tests",
        0,
    )
    out = ExtractiveGenerator().generate("How long does an iperf3 test transmit by default?", [page])
    assert out.text.startswith("-t, --time n:") and "deprecated" not in out.text
