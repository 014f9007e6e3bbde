"""Sentences of real-document snippets: headings, labels, list items, table rows, hard-wrapped PDF text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.core.snippets import Snippet
from assistant_bridge.generators.sentences import (
    announces,
    answer_type_terms,
    asked_coverage,
    asked_unit,
    asked_value_match,
    asked_words,
    base_terms,
    candidates,
    command_terms,
    entry_match,
    entry_term,
    entry_word_share,
    flatten,
    holds_asked_word,
    introduces,
    is_label,
    query_terms,
    terms,
    unknown_words,
)
from assistant_bridge.text import (
    asks_default,
    asks_for_option,
    asks_whether,
    code_names,
    holds_code_names,
    states_default,
)

pytestmark = pytest.mark.unit

MARKDOWN = Snippet(
    "Resetting Your Password\n\nThis article explains how to reset the password of your account.\n\n"
    "Password rules\n\n- At least 14 characters.\n- It must not contain your name.\n\n"
    "Changing a password you still know\n\n1. Sign in to the portal.\n2. Select Security, then Change password.",
    "Resetting Your Password",
    0,
)
PDF = Snippet(
    "VPN Setup Guide\nThis guide explains how to install the VPN client on a company\nlaptop. Personal "
    "computers are not allowed.\n3. Connecting for the first time\nClick the shield icon and enter the portal "
    "address. Sign in with your\ncompany account.",
    "VPN Setup Guide",
    1,
)


def texts(snippet: Snippet) -> list[tuple[str, bool]]:
    return [(c.text, c.label) for c in candidates([snippet])]


def test_markdown_headings_are_labels_and_list_markers_are_removed() -> None:
    got = texts(MARKDOWN)
    assert ("Resetting Your Password", True) in got  # the title
    assert ("Password rules", True) in got
    assert ("Changing a password you still know", True) in got
    assert ("At least 14 characters.", False) in got
    assert ("It must not contain your name.", False) in got
    assert ("Sign in to the portal.", False) in got
    assert not any(text.startswith(("-", "1.", "2.")) for text, _ in got if len(text) > 2)


def test_pdf_heading_lines_are_cut_from_the_paragraph_below_but_wrapped_lines_are_not() -> None:
    got = texts(PDF)
    assert ("VPN Setup Guide", True) in got
    assert ("Connecting for the first time", True) in got
    assert ("This guide explains how to install the VPN client on a company\nlaptop.", False) in got
    assert ("Click the shield icon and enter the portal address.", False) in got
    assert ("Sign in with your\ncompany account.", False) in got


@pytest.mark.parametrize(
    "text, label",
    [
        ("Password rules", True),
        ("Délais de remboursement", True),
        ("■ パスワードを忘れた場合", True),
        ("jeudi 1er janvier | Jour de l'an", True),
        ("2.", True),
        ("Contact:", True),
        ("At least 14 characters.", False),
        ("The reset link is valid for 15 minutes.", False),
        ("再設定用のリンクの有効期限は十五分です。", False),
        ("出張時の交通費と宿泊費（宿泊費の上限は一泊一万二千円、東京二十三区内は一万五千円）", False),
        ("A long line without a full stop that still says a whole lot of things about the policy", False),
        ("6.2.2. Where do these codenames come from?", True),  # a FAQ's question heads its answer
        ("Run the following to test Rich output on your terminal:", False),  # it introduces the answer
        # an operator or a pipe written in a sentence is no table row
        ('The || operator is "concatenate" - it joins together the two strings of its operands.', False),
        ("Use a|b to match either.", False),
        # a table row answers when one of its cells says something; one of names and numbers labels
        ("paperkey | V:1, I:13 | 58 | paperkey(1) | extract just the secret information out of OpenPGP keys", False),
        ("exFAT | cross platform sharing of data on the large hard disk like device", False),
        ("gpgv | V:897, I:999 | 917 | gpgv(1)", True),
        ("Name\tSize\tOwner", True),
        # a PDF's footnote mark after the full stop ends no heading
        ("No binaries may be located under /etc. 2", False),
        ("Binaries go to /usr/bin.⁷", False),
        ("Section 2", True),
    ],
)
def test_is_label(text: str, label: bool) -> None:
    assert is_label(text, "") is label


DEBCONF_TYPES = (
    "Templates hold a type.\n\nType | Description\nstring | Holds any arbitrary string of data.\n"
    'boolean | Holds "true" or "false".\nselect | Holds one of a finite number of possible values.'
)


def test_a_row_of_a_table_with_a_header_row_answers_as_a_sentence_does() -> None:
    """A table that starts inside the passage has its first row as its header: the rows under it say what its
    columns name, so they answer however short their cells; the header itself stays a label."""
    cands = candidates([Snippet(DEBCONF_TYPES, "debconf", 0)])
    rows = {c.text: (c.label, c.header) for c in cands}
    assert rows["Type | Description"] == (True, -1)
    header = next(c.position for c in cands if c.text == "Type | Description")
    assert rows['boolean | Holds "true" or "false".'] == (False, header)
    assert rows["string | Holds any arbitrary string of data."] == (False, header)


@pytest.mark.parametrize(
    "text",
    [
        # the passage opens with rows: the table's header may be in the passage before, so none is guessed
        'string | Holds any arbitrary string of data.\nboolean | Holds "true" or "false".\nselect | Holds one value.',
        # a first row that says something is a row, not the names of the columns
        "Keywords may be quoted:\n\n'keyword' | A keyword in single quotes is a string literal.\n"
        '"keyword" | A keyword in double-quotes is an identifier.\n[keyword] | A keyword in brackets is an identifier.',
        # one row under a line is no table
        "Look it up:\n\nreadelf -d libfoo.so.1 | grep SONAME\nobjdump -p libfoo.so.1 | grep SONAME",
    ],
)
def test_rows_without_a_known_header_row_have_none(text: str) -> None:
    assert all(c.header == -1 for c in candidates([Snippet(text, "t", 0)]))


def test_a_line_that_ends_on_a_function_word_or_in_a_parenthesis_goes_on() -> None:
    """Markdown wrapped before a link leaves short lines ("original (see the", then the link's text "Pragmatism"):
    a line that ends on a function word or inside an open parenthesis is no heading, so the sentence stays whole and
    the one after it ("If you're feeling confident, use --fast.") is a sentence of its own."""
    text = (
        "Black will check that the code is equivalent to the\noriginal (see the\nPragmatism\nsection for "
        "details). If you're feeling confident, use --fast.\n\nUsage\n\nRun black on a file."
    )
    assert texts(Snippet(text, "Black", 0)) == [
        (
            "Black will check that the code is equivalent to the\noriginal (see the\nPragmatism\nsection for details).",
            False,
        ),
        ("If you're feeling confident, use --fast.", False),
        ("Usage", True),
        ("Run black on a file.", False),
    ]


def test_the_snippet_title_is_a_label_even_with_a_full_stop() -> None:
    assert is_label("Remote work policy.", "Remote Work Policy")


def test_flatten_joins_lines_with_one_space_and_cjk_lines_with_none() -> None:
    assert flatten("Sign in with your\n   company account.") == "Sign in with your company account."
    assert flatten("文房具\n私的な飲食代") == "文房具私的な飲食代"
    assert flatten("申請してください。\n領収書を添付します。") == "申請してください。領収書を添付します。"
    assert flatten("안녕하세요\n여러분") == "안녕하세요 여러분"  # Korean puts spaces between words


def test_query_terms_leave_out_question_words_and_japanese_particles() -> None:
    assert query_terms("How do I reset my password?") == {"reset", "passw"}
    assert "いつ" not in query_terms("締め切りはいつですか？")
    assert "締め" in query_terms("締め切りはいつですか？")
    # 何 ("what") and 誰 ("who") are question words: the bigrams they make say nothing of the topic
    japanese = query_terms("パッケージをビルドするコマンドは何ですか？")
    assert {"は何", "何で"}.isdisjoint(japanese) and {"ビル", "コマ"} <= japanese
    assert "誰が" not in query_terms("誰がこのパッケージを管理していますか？")


def test_identifiers_and_capitalised_keywords_are_terms_whole_as_well() -> None:
    assert {"varch", "varchar"} <= query_terms("Which affinity does a VARCHAR column get?")
    assert {"serve", "serveralivecountmax"} <= query_terms("What is ServerAliveCountMax?")
    assert "sqlite" not in query_terms("Is the Sqlite file fast?")  # a plain word: its stem only


def test_a_negated_word_and_an_announcing_following_are_not_the_plain_words() -> None:
    """ "non-negative" is no "negative" ("non" and a term of its own, the same in the query and the passage; a
    question's "not portable" asks for "non-portable" too), and "the following" or "as follows" announce what comes
    next: they are not the verb "follow"."""
    assert "negat" not in terms("If the LIMIT expression evaluates to non-negative value N")
    assert terms("a non-negative value") == terms("a Non-negative value") and "negat" in terms("a negative value")
    assert "non" in terms("a non-profit organization")  # a question says as many words as before
    # a question's "not portable" asks what "non-portable" says too; SQL's NOT is a keyword
    assert "nonpo" in terms("non-portable") and "nonpo" in query_terms("Which option warns about what is not portable?")
    assert not any(t.startswith("nonnu") for t in query_terms("Does a PRIMARY KEY imply NOT NULL?"))
    assert "nonth" not in query_terms("What must /bin/sh be when it is not the POSIX shell?")  # no stop word
    assert "follo" not in terms("The httpcore package has the following dependencies, as follows:")
    assert "follo" in terms("Does httpcore follow redirects?") and "follo" in terms("when following symlinks")


def test_command_line_options_are_terms_as_written() -> None:
    assert {"-P", "rsync"} <= query_terms("What does the rsync option -P do?")
    assert "-p" not in query_terms("What does the rsync option -P do?")  # -p is another option
    assert {"--max-redirs", "redir"} <= set(terms("Limit them with --max-redirs."))
    assert not any(t.startswith("-") for t in terms("An e-mail from a third-party vendor - or two."))


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .\n-•■|:。経費12#")), max_size=120))
def test_every_candidate_is_an_exact_substring_of_its_snippet(text: str) -> None:
    snippet = Snippet(text, "T", 0)
    for c in candidates([snippet]):
        assert snippet.text[c.start : c.end] == c.text and c.text.strip() == c.text and c.text


def test_a_list_number_between_a_heading_and_its_first_step_does_not_hide_the_heading() -> None:
    import numpy as np

    from assistant_bridge.generators.sentences import section_match

    snippet = Snippet(
        "Comment signaler\n\n1. Appelez le centre de sécurité au poste 5000.\n2. Écrivez un courriel.", "T", 0
    )
    cands = candidates([snippet])
    relevance = np.array([1.0 if c.text == "Comment signaler" else 0.0 for c in cands])
    lifted = {c.text: float(v) for c, v in zip(cands, section_match(cands, relevance, [snippet]), strict=False)}
    assert lifted["Appelez le centre de sécurité au poste 5000."] == 1.0
    assert lifted["Écrivez un courriel."] == 0.5


def test_a_line_that_a_sentence_introduces_is_no_heading() -> None:
    """threadpoolctl's README: "pip install threadpoolctl" is what "For users, install … from PyPI:" introduces,
    not a heading over the contributors' line after it; the Installation heading stays theirs, as it does past a
    command at a shell prompt. A line that introduces in its turn ("For a new patch:") is a heading of what follows
    it."""
    import numpy as np

    from assistant_bridge.generators.sentences import section_match

    snippet = Snippet(
        "Installation\n\n- For users, install the last published version from PyPI:\n\n  pip install threadpoolctl\n\n"
        "- For contributors, install from the source repository in developer mode:\n\n"
        "Steps\n\nDo this to make a new release:\n\n- For a new patch:\n\n- name it with dquilt new.",
        "threadpoolctl",
        0,
    )
    cands = candidates([snippet])
    relevance = np.array([{"Installation": 0.5, "pip install threadpoolctl": 2.0}.get(c.text, 0.0) for c in cands])
    relevance[[k for k, c in enumerate(cands) if c.text == "For a new patch:"]] = 1.0
    lifted = {c.text: float(v) for c, v in zip(cands, section_match(cands, relevance, [snippet]), strict=False)}
    assert lifted["For users, install the last published version from PyPI:"] == 0.5
    assert lifted["For contributors, install from the source repository in developer mode:"] == 0.25
    assert lifted["name it with dquilt new."] == 1.0
    # nor is a command at a shell prompt
    extras = Snippet(
        "Extras\n\nThis will install it.\n\n$ pip install 'threadpoolctl[all]'\n\nThis adds extras.", "T", 0
    )
    cands = candidates([extras])
    relevance = np.array([{"Extras": 0.5, "$ pip install 'threadpoolctl[all]'": 2.0}.get(c.text, 0.0) for c in cands])
    lifted = {c.text: float(v) for c, v in zip(cands, section_match(cands, relevance, [extras]), strict=False)}
    assert lifted["This adds extras."] == 0.25


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("-l, --lines: print the newline counts", "-l, --lines"),
        ("--help display this help and exit", "--help"),
        ("-k, --key=KEYDEF: sort via a key; KEYDEF gives location and type", "-k, --key=KEYDEF"),
        ("CARGO_TARGET_DIR — Location of where to place all generated artifacts.", "CARGO_TARGET_DIR"),
        ("opt-level: the optimization level to use", "opt-level"),
        ("-i[SUFFIX], --in-place[=SUFFIX]: edit files in place", "-i[SUFFIX], --in-place[=SUFFIX]"),
        ("-x, --extract, --get: アーカイブからファイルを抽出します。", "-x, --extract, --get"),
        ("-T#, --threads=#: Compress using # working threads (default: 1).", "-T#, --threads=#"),  # "#": a number
        ("-# --fast --best: Regulate the speed of compression", "-# --fast --best"),
        ("ServerAliveCountMax: Sets the number of server alive messages.", "ServerAliveCountMax"),
        ("ifnull(X,Y): The ifnull() function returns a copy of its first non-NULL argument.", "ifnull(X,Y)"),
        ("pi(): Return an approximation for π.", "pi()"),
        (  # an API reference's signature, its parameters with defaults (Sphinx)
            "shutil.which(cmd, mode=os.F_OK | os.X_OK, path=None): Return the path to an executable.",
            "shutil.which(cmd, mode=os.F_OK | os.X_OK, path=None)",
        ),
        (
            "@functools.lru_cache(maxsize=128, typed=False): Decorator to wrap a function.",
            "functools.lru_cache(maxsize=128, typed=False)",
        ),
        (
            "exception json.JSONDecodeError(msg, doc, pos): Subclass of ValueError.",
            "json.JSONDecodeError(msg, doc, pos)",
        ),
        ("class subprocess.CompletedProcess: The return value from run().", "subprocess.CompletedProcess"),
        (
            "fs.readFile(path[, options], callback): Asynchronously reads the entire contents.",
            "fs.readFile(path[, options], callback)",
        ),
        ("Note (see the manual): this is prose with a colon.", ""),
        ("Note: this is a prose sentence with a colon.", ""),
        ("The options below may be used", ""),
        ("--resolve can be used several times in a command line", ""),  # the option is the sentence's subject
        ("-L is ignored when the target is local", ""),
        ("Installation - how to set it up", ""),
    ],
)
def test_definition_entries_name_their_term_and_are_not_labels(text: str, term: str) -> None:
    assert entry_term(text) == term
    if term:
        assert not is_label(text, "")


def test_list_items_are_flagged_but_markdown_headings_are_not() -> None:
    snip = Snippet(
        text="Intro sentence here.\n- First item.\n- Second item.\n## Next section\nMore text.",
        title="T",
        result_index=0,
    )
    flags = {c.text: c.item for c in candidates([snip])}
    assert flags["First item."] and flags["Second item."] and not flags["Intro sentence here."]
    assert not flags.get("Next section", False)


def test_a_dash_opens_a_list_item_as_a_hyphen_does() -> None:
    """French typography and PDF manuals mark list items with an em or en dash: such an item that says something
    is an answer unit without a full stop, not a label."""
    snip = Snippet(
        text="Quelques règles :\n— les paquets Debian ne devraient normalement pas utiliser RPATH ;\n"
        "– les scripts doivent appeler ldconfig dans des circonstances particulières ;",
        title="Guide",
        result_index=0,
    )
    got = {c.text: (c.item, c.label) for c in candidates([snip])}
    assert got["les paquets Debian ne devraient normalement pas utiliser RPATH ;"] == (True, False)
    assert got["les scripts doivent appeler ldconfig dans des circonstances particulières ;"] == (True, False)


def test_each_line_of_a_help_listing_is_one_unit_whatever_its_punctuation() -> None:
    snip = Snippet(
        text="The dot-commands follow:\n\nsqlite> .help\n.archive ...        Manage SQL archives\n"
        ".bail on|off        Stop after hitting an error.  Default OFF\n"
        ".dump ?OBJECTS?     Render database content as SQL\n\n"
        "Options:\n  -h, --help     Show this message and exit.\n  --version      Show the version\n\n"
        "A sentence that wraps\nat the end.  Another one.",
        title="CLI",
        result_index=0,
    )
    got = {c.text: (c.label, c.fragment, c.entry) for c in candidates([snip])}
    for line in (".archive ...        Manage SQL archives", ".dump ?OBJECTS?     Render database content as SQL"):
        assert got[line] == (False, False, "")
    assert got[".bail on|off        Stop after hitting an error.  Default OFF"][0] is False
    assert got["-h, --help     Show this message and exit."] == (False, False, "-h, --help")
    assert "--version      Show the version" in got
    # a lone line with a double space is prose typed so: the sentence is not cut at its line break
    assert "A sentence that wraps\nat the end." in got


@pytest.mark.parametrize(
    ("question", "answers", "others"),
    [
        ("When are expense reports due?", "Reports must be filed within 30 days.", "Reports go to finance."),
        ("When was the first vaccine developed?", "It was developed in 1923.", "It protects children."),
        ("Quand faut-il déclarer les frais ?", "Déclarez-les avant le 15 mars.", "Joignez les reçus."),
        ("経費精算の締め切りはいつですか", "経費は三十日以内に申請してください。", "領収書を添付します。"),
    ],
)
def test_a_question_that_asks_when_prefers_a_date_or_a_length_of_time(question: str, answers: str, others: str) -> None:
    cands = candidates([Snippet(f"{others}\n\n{answers}", "T", 0)])
    match = dict(zip([c.text for c in cands], asked_value_match(question, cands), strict=True))
    assert match[answers] == 1.0 and match[others] == 0.0
    assert not asked_value_match("How do I file expense reports?", cands).any()


@pytest.mark.parametrize(
    "question",
    [
        "Quelle option de grep affiche seulement le nombre de lignes correspondantes ?",
        "Which grep option prints the number of matching lines?",
        "Which scp option sets the port of the remote host?",
    ],
)
def test_a_question_that_asks_which_option_asks_for_no_number(question: str) -> None:
    entry = "-c, --count: Print a count of matching lines for each input file."
    numbered = "-b, --byte-offset: Print the 0-based byte offset of each output line."
    cands = candidates([Snippet(f"{numbered}\n\n{entry}", "grep(1)", 0)])
    assert not asked_value_match(question, cands).any()
    assert asked_value_match("What is the default number of context lines?", cands).any()


@pytest.mark.parametrize(
    "question",
    [
        "Whom should I contact to offer a mirror of the archive?",
        "Where should I send bug reports when filing many bugs on the same subject?",
        "À qui faut-il écrire pour proposer un miroir ?",
        "ミラーの連絡先はどこですか",
    ],
)
def test_a_question_that_asks_whom_to_write_to_prefers_an_email_address(question: str) -> None:
    answer = "Please contact <debian-admin@lists.debian.org>."
    other = "Mirrors are needed, and most of the mirroring is done by scripts."
    cands = candidates([Snippet(f"{other}\n\n{answer}", "T", 0)])
    match = dict(zip([c.text for c in cands], asked_value_match(question, cands), strict=True))
    assert match[answer] == 1.0 and match[other] == 0.0
    for not_asked in ("How do I set up a mirror?", "Where is the configuration file?", "Who wrote the policy?"):
        assert not asked_value_match(not_asked, cands).any()


@pytest.mark.parametrize(
    ("question", "unit", "counted", "other_number"),
    [
        (
            "How many days can an upload wait in the DELAYED queue at most?",
            "day",
            "Uploads go to DELAYED/X-day (X between 0 and 15).",
            "The queue is processed at 10:00 today.",
        ),
        ("Combien de jours faut-il attendre ?", "jour", "Il faut attendre 3 jours.", "Le formulaire 12 est requis."),
        ("何日以内に申請しますか", "日", "申請は30日以内です。", "書類は2部必要です。"),
    ],
)
def test_a_count_prefers_a_number_with_the_unit_it_asks_for(
    question: str, unit: str, counted: str, other_number: str
) -> None:
    assert asked_unit(question) == unit
    cands = candidates([Snippet(f"{other_number}\n\n{counted}", "T", 0)])
    match = dict(zip([c.text for c in cands], asked_value_match(question, cands), strict=True))
    assert match[counted] == 2.0 and match[other_number] == 1.0  # "today" does not count as a day
    assert asked_unit("How much does it cost?") is None and asked_unit("How many are there?") is None
    assert asked_unit("How many times have the Patriots lost to the Giants?") is None  # a count of events


def test_a_count_may_be_written_in_words_with_its_unit_but_not_a_port() -> None:
    cands = candidates([Snippet("There are five algorithms. The life cycle has four phases. It uses port 80.", "", 0)])
    assert asked_value_match("How many algorithms are there?", cands).tolist() == [2.0, 0.0, 1.0]
    assert asked_value_match("Which port does it listen on?", cands).tolist() == [0.0, 0.0, 1.0]


def test_a_default_value_is_a_number_next_to_default_and_a_name_holds_no_number() -> None:
    page = Snippet(
        "Note that many iperf3 parameters have both short and long forms.\n\n"
        "By default, the iperf3 server listens on TCP port 5201 for connections from an iperf3 client.\n\n"
        "-t, --time n: time in seconds to transmit for (default 10 secs)",
        "iperf3(1)",
        0,
    )
    cands = candidates([page])
    assert asked_value_match("How long does an iperf3 test transmit by default?", cands).tolist() == [0.0, 1.0, 2.0]
    assert asked_value_match("How long does an iperf3 test transmit?", cands).tolist() == [0.0, 1.0, 1.0]
    french = candidates([Snippet("Le niveau de compression par défaut est -6.", "gzip(1)", 0)])
    assert asked_value_match("Quel est le niveau de compression par défaut ?", french).tolist() == [2.0]


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Can clients upload files to a module by default?", True),
        ("Quel est le séparateur par défaut ?", True),
        ("既定のポート番号は？", True),
        ("Can clients upload files to a module?", False),
    ],
)
def test_a_question_for_a_default(question: str, asks: bool) -> None:
    assert asks_default(question) is asks


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Is the GLOB operator case sensitive in SQLite?", True),
        ("Can BTS usertags contain underscores?", True),
        ("Peut-on installer un paquet sans droits root ?", True),
        ("Is there one that is more important than the others?", False),
        ("Which operator is case sensitive?", False),
        ("How do I make grep ignore case?", False),
    ],
)
def test_a_question_whether_something_holds(question: str, asks: bool) -> None:
    assert asks_whether(question) is asks


def test_a_sentence_that_states_a_default() -> None:
    assert states_default("The default is for all modules to be read only.")
    assert states_default("Par défaut ‘:’.") and states_default("デフォルトは 500 です。")
    assert not states_default("If it is true then any attempted uploads will fail.")
    # an API reference's signature gives its parameters' defaults; a call in an example does not
    wrap = "textwrap.wrap(text, width=70, *, initial_indent=''): Wraps the single paragraph in text."
    assert states_default(wrap, "What is the default width of textwrap.wrap?")
    assert not states_default(wrap, "What is the default delimiter of the csv module?")  # another parameter's
    assert not states_default(wrap)  # no question: no parameter asked for
    assert not states_default(">>> parser.add_argument('--foo', required=True)", "Is the foo option required?")


def test_an_option_whose_long_name_the_question_spells_out_is_asked_for() -> None:
    page = Snippet(
        "-i or --ignore-case: Causes searches to ignore case.\n\n-d --decompress --uncompress: decompress.\n\n"
        "-n, --normalize: Permit to normalize input file.\n\n--indent n: Use the given number of spaces.",
        "less(1): opposite of more",
        0,
    )
    cands = candidates([page])
    assert [c.entry for c in cands] == ["-i or --ignore-case", "-d --decompress", "-n, --normalize", "--indent"]

    def match(query: str, title: str = page.title) -> list[float]:
        return entry_match(query, cands, [title]).tolist()

    assert match("How do I make less ignore case in searches?") == [1.0, 0.0, 0.0, 0.0]
    assert match("Quelle option de less permet de décompresser ?") == [0.5, 1.0, 0.5, 0.5]  # accents aside
    assert match("How does less search in case of doubt?") == [0.75, 0.0, 0.0, 0.0]  # half the name
    # a name the question holds is no description ("charset-normalizer"); a manual page the question does not
    # name is not asked about
    assert match("What is the command of charset-normalizer in less?") == [0.0, 0.0, 0.0, 0.0]
    assert match("How do I get indented output from orjson?") == [0.0, 0.0, 0.0, 0.0]
    assert match("How do I get indented output from orjson?", "orjson") == [0.0, 0.0, 0.0, 1.0]


def test_a_long_names_generic_verb_alone_does_not_spell_it_out() -> None:
    """mtr(8)'s ``--show-ips`` shares only "show" with "Which mtr option shows numeric IP addresses…": that verb opens
    many long names and names none of them; with another of the name's words it counts as before."""
    page = Snippet(
        "-b, --show-ips: Display both the host names and numeric IP numbers.\n\n"
        "-n, --no-dns: Do not try to resolve host names.",
        "mtr(8): a network diagnostic tool",
        0,
    )
    cands = candidates([page])

    def match(query: str) -> list[float]:
        return entry_match(query, cands, [page.title]).tolist()

    assert match("Which mtr option shows numeric IP addresses instead of resolving host names?") == [0.5, 0.5]
    assert match("Which mtr option shows the ips?") == [1.0, 0.5]


def test_a_page_the_question_names_by_another_name_that_its_passages_write_is_asked_about() -> None:
    """ "Which ripgrep option…" over passages of rg(1) only, which write "ripgrep": the long names count as they do
    when the question names rg. Not when a passage of another document is there, nor when the passages never
    write the program's name (orjson over less(1))."""
    rg = Snippet(
        "-c, --count: This flag suppresses normal output and shows the number of lines that match.\n\n"
        "-n, --line-number: Show line numbers (1-based). ripgrep turns this on for a terminal.",
        "rg(1): recursively search the current directory for lines matching a pattern",
        0,
    )
    cands = candidates([rg])
    query = "Which ripgrep option shows the line number of each match?"
    assert entry_match(query, cands, [rg.title]).tolist() == [0.5, 1.0]
    assert entry_match(query, cands, ["ripgrep-README"]).tolist() == [0.5, 1.0]  # not a manual page: as before
    readme = Snippet("ripgrep is fast.", "orjson-README", 1)
    both = candidates([rg, readme])
    assert entry_match(query, both, [rg.title, readme.title]).tolist()[:2] == [0.5, 0.5]
    unwritten = Snippet(rg.text.replace(" ripgrep turns this on for a terminal.", ""), rg.title, 0)
    assert entry_match(query, candidates([unwritten]), [rg.title]).tolist() == [0.5, 0.5]


def test_a_long_option_spelled_with_one_dash_is_spelled_out_too() -> None:
    """sqlite3(1)'s ``-csv`` is a name as ``--csv`` would be: "…outputs query results as CSV?" asks for it, not
    for ``-html``, whose description holds more of the question's other words. ``-nc`` is letters."""
    page = Snippet(
        "-html: Query results will be output as simple HTML tables.\n\n-csv: Set output mode to CSV.\n\n"
        "-nc: Do not clobber existing files.",
        "sqlite3(1): A command line interface for SQLite version 3",
        0,
    )
    cands = candidates([page])
    got = entry_match("Which sqlite3 command-line option outputs query results as CSV?", cands, [page.title])
    assert got.tolist() == [0.5, 1.0, 0.5]
    assert entry_match("Which sqlite3 option does not clobber files, nc?", cands, [page.title]).tolist()[2] == 0.5


def test_a_question_for_a_default_spells_out_only_an_entry_that_states_one() -> None:
    """ "What is ed's default prompt string?" spells out ``--prompt`` but asks for a value: the entry that sets the
    prompt and says nothing of its default does not answer it; one that states the default in a later sentence
    of the entry does, and a question that asks which option is asked of the option alike."""
    page = Snippet(
        "-p STRING, --prompt=STRING: Specifies a command prompt string. It turns prompting on.\n\n"
        "-d ACTION, --directories=ACTION: Use ACTION for a directory. By default, ACTION is read.",
        "The GNU ed line editor",
        0,
    )
    cands = candidates([page])
    entries = [i for i, c in enumerate(cands) if c.entry]

    def match(query: str) -> list[float]:
        return [entry_match(query, cands, [page.title]).tolist()[i] for i in entries]

    assert match("What is ed's default prompt string?") == [0.0, 0.0]
    assert match("What is the prompt string of ed?") == [1.0, 0.0]
    assert match("Which option sets the default prompt string?") == [1.0, 0.5]
    assert match("What does ed do with directories by default?") == [0.0, 1.0]


def test_a_command_question_asks_for_the_commands_a_page_defines_with_their_synopses() -> None:
    """A question like "Which tmux command renames a window?" asks for one of tmux(1)'s commands, each defined by its synopsis; a
    sentence of prose that happens to say "command" is not one, nor is a question about options."""
    page = Snippet(
        "If -S is given and a window named window-name already exists, the command does nothing.\n\n"
        "rename-window [-t target-window] new-name: (alias: renamew) Rename the current window.",
        "tmux(1): terminal multiplexer",
        0,
    )
    cands = candidates([page])
    assert [c.entry for c in cands] == ["", "rename-window"]
    assert entry_match("Which tmux command renames a window?", cands, [page.title]).tolist() == [0.0, 0.5]
    assert entry_match("Which tmux option renames a window?", cands, [page.title]).tolist() == [0.0, 0.0]
    assert command_terms("Which tmux command renames a window?") == set(terms("command"))


def test_a_command_question_asks_for_the_commands_of_a_help_listing() -> None:
    """A line of the SQLite shell's .help answers "Which sqlite3 dot-command…?" as a command's entry; a question
    about what a named command does ("What does the SQLite ANALYZE command collect?") asks for no command."""
    page = Snippet(
        "sqlite> .help\n.archive ...             Manage SQL archives\n.auth ON|OFF             Show authorizer "
        "callbacks\n.import FILE TABLE       Import data from FILE into TABLE",
        "Command Line Shell For SQLite",
        0,
    )
    cands = candidates([page])
    listed = [c.listed for c in cands]
    assert listed == [False, True, True, True]
    assert entry_match("Which sqlite3 dot-command manages archives?", cands, [page.title]).tolist()[1:] == [0.5] * 3
    assert not entry_match("What does the SQLite ANALYZE command collect?", cands, [page.title]).any()


def test_a_name_in_capitals_is_named_in_capitals() -> None:
    """An argument's entry ("CLOSURE: The address of a ffi_closure object", an Info manual's parameter list) is
    asked about by its name as written, not by the English word: "memory allocated for a closure" is no question
    about it. A message in capitals names it all the same."""
    page = Snippet(
        "CLOSURE: The address of a 'ffi_closure' object.\n\nCIF: The 'ffi_cif' describing the function parameters.",
        "libffi",
        0,
    )
    cands = candidates([page])
    assert entry_match("Which function frees the memory allocated for a closure?", cands, ["libffi"]).tolist()[0] == 0
    assert entry_match("What is the CLOSURE argument of ffi_prep_closure_loc?", cands, ["libffi"]).tolist()[0] == 1
    assert entry_match("WHAT IS CLOSURE?", cands, ["libffi"]).tolist()[0] == 1


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("What separator does group_concat use when I don't give one?", {"group_concat"}),
        ("What is the difference between count(*) and count(X)?", {"count(*)", "count(x)"}),
        ("What does sqlite3_limit() do?", {"sqlite3_limit"}),
        ("What does ifnull() return in SQLite?", {"ifnull"}),
        ("How do I call os.path.join?", {"os.path.join"}),
        ("Which file(s) does it read?", set()),
        ("Is this, e.g. a list, fine?", set()),
        ("What changed in v1.2?", set()),
        ("How do I count lines?", set()),
    ],
)
def test_the_names_a_question_writes_as_code(query: str, names: set[str]) -> None:
    assert code_names(query) == names


def test_which_passages_write_a_name_the_question_writes_as_code() -> None:
    texts = ["group_concat(X,Y): returns a string", "The separator may be any number of bytes.", "xgroup_concat"]
    assert holds_code_names("What separator does group_concat use?", texts) == [True, False, False]
    assert holds_code_names("What does count(X) return?", ["count(X) counts", "count(*) counts"]) == [True, False]
    assert holds_code_names("What separator does it use?", texts) == [False, False, False]


def test_japanese_writes_a_code_name_against_the_words_around_it() -> None:
    query = "初めてアップロードするとき、orig.tar.gz を含めるために dpkg-buildpackage に付けるオプションは？"
    texts = ["オリジナルのorig.tar.gzソースファイルを含めます。", "foo_1.0.orig.tar.gz", "xorig.tar.gz", "éorig.tar.gz"]
    assert holds_code_names(query, texts) == [True, False, False, False]


@pytest.mark.parametrize(
    ("sentence", "announced"),
    [
        ("Add the following lines to ~/.bashrc.", True),
        ("Ajoutez les lignes suivantes à votre fichier.", True),
        ("以下の行を ~/.bashrc に追加しましょう。", True),
        ("Add a line to ~/.bashrc.", False),
    ],
)
def test_a_sentence_that_announces_a_block(sentence: str, announced: bool) -> None:
    assert announces(sentence) is announced


@pytest.mark.parametrize(
    ("line", "introducing"),
    [
        ("Run the following to test Rich output on your terminal:", True),
        ("ソースディレクトリーで次のコマンドを実行します：", True),
        ("Build it with ssh:", True),
        # a URL's scheme cut from its address at a line break introduces nothing
        ("Compile them with Security Hardening Build Flags (https:", False),
        ("See http:", False),
    ],
)
def test_a_line_that_ends_with_a_colon_introduces_what_follows(line: str, introducing: bool) -> None:
    assert introduces(line) is introducing


def test_a_functions_entry_answers_a_question_that_names_the_function() -> None:
    """A reference page defines a function by its call ("ifnull(X,Y): The ifnull() function returns…"): a question
    that names the function, with or without its parentheses, names that entry; another function's entry is not
    named."""
    snippet = Snippet(
        "ifnull(X,Y): The ifnull() function returns a copy of its first non-NULL argument.\n\n"
        "instr(X,Y): The instr(X,Y) function finds the first occurrence of string Y within string X.",
        "Built-In Scalar SQL Functions",
        0,
    )
    cands = candidates([snippet])
    assert [c.entry for c in cands] == ["ifnull(X,Y)", "instr(X,Y)"]
    for question in ("What does ifnull() return in SQLite?", "What does ifnull return?"):
        assert entry_match(question, cands).tolist() == [1.0, 0.0]


def test_an_entry_holds_a_share_of_the_querys_words_weighed_by_their_rarity_among_the_entries() -> None:
    entries = [
        "-r file: Read packets from file (which was created with the -w option).",
        "-w file: Write the raw packets to file rather than parsing and printing them out.",
        "-c count: Exit after receiving count packets.",
    ]
    held = [frozenset(terms(e)) for e in entries]
    share = entry_word_share("Which tcpdump option reads packets from a saved capture file?", "tcpdump", held)
    assert share.argmax() == 0 and share[0] > share[1] > 0  # "read" is rare among them; "packets", "file" are not
    assert entry_word_share("Which tcpdump option encrypts the capture?", "tcpdump", held).max() < 0.3
    assert entry_word_share("Which tcpdump option?", "tcpdump", held).tolist() == [0.0, 0.0, 0.0]  # no words left
    # an entry whose words are held with their inflections (base_terms) holds the query's in another one:
    # "saves" and "saved", "name" and "named" (curl's -O, --remote-name)
    remote = "-O, --remote-name: Write output to a local file named like the remote file. The file is saved here."
    question = "Which curl option saves the download under the remote file's name?"
    plain = entry_word_share(question, "curl", [frozenset(terms(e)) for e in [*entries, remote]])
    share = entry_word_share(question, "curl", [frozenset(terms(e)) | base_terms(e) for e in [*entries, remote]])
    assert share.argmax() == 3 and share[3] > plain[3] + 0.15
    assert asks_for_option("Which tcpdump option reads packets?") and asks_for_option("Quelle option de grep …")
    assert not asks_for_option("How does tcpdump read packets?")


def test_command_line_before_option_names_the_kind_of_thing_asked_for() -> None:
    """ "Which command line option of curl follows redirects?" asks for an option; "command line" says what kind,
    and the answering entry ("-L, --location: …") need not say it. Elsewhere "command line" is asked of the text."""
    assert answer_type_terms("Which command line option of curl follows redirects?") >= set(terms("command line"))
    assert answer_type_terms("Quelle option de ligne de commande de curl suit les redirections ?") >= set(
        terms("ligne de commande")
    )
    assert not answer_type_terms("How do I change the kernel command line?")


def test_a_question_for_another_kind_of_thing_asks_with_its_setting_words() -> None:
    """ "Which bash builtin moves the positional parameters to the left?" asks for a builtin; "parameters" is what
    it moves, a word the answering entry holds ("shift [n]: Shift the positional parameters to the left by n.")."""
    question = "Which bash builtin moves the positional parameters to the left?"
    assert not answer_type_terms(question)
    shift = ["shift: shift [n] Shift the positional parameters to the left by n."]
    assert asked_coverage(question, shift) == pytest.approx(3 / 6)  # posit, param, left of move, bash, builtin too
    assert answer_type_terms("Which rsync parameter sets the port?") >= set(terms("parameter"))


def test_the_verb_that_frames_an_option_question_is_not_asked_of_the_entry() -> None:
    """ "Quelle option de gzip permet de décompresser ?": "permet" frames the question; an entry that happens to
    say it ("cette option permet à rsync…") is not the answer, the one that says "décompresser" is."""
    entries = [
        "--rsyncable: Lors de la synchronisation, cette option permet à rsync de ne transférer que les changements.",
        "-d --decompress --uncompress: décompresser",
        "-k --keep: conserver les fichiers d'entrée durant la compression ou la décompression.",
    ]
    held = [frozenset(terms(e)) for e in entries]
    assert entry_word_share("Quelle option de gzip permet de décompresser ?", "gzip", held).argmax() == 1
    assert set(terms("lets")) <= answer_type_terms("Which ssh option lets me forward a local port?")
    assert not answer_type_terms("Does SQLite allow NULL values in a column?")  # no entry asked for: kept


def test_the_words_of_a_question_a_page_never_uses_are_counted() -> None:
    page = frozenset(terms("-z, --zstd: compress the archive with zstd. -k: keep the files."))
    assert len(asked_words("Which zstd option encrypts the compressed file with a password?", "zstd") - page) == 2
    assert len(asked_words("Which zstd option keeps the files?", "zstd") - page) == 0  # "keeps" and "keep" are one
    assert len(asked_words("Which zstd option encrypts the compressed file with a password?", "zstd")) == 4
    assert len(asked_words("Which parted command encrypts a partition?", "parted")) == 2
    # "makes … stop" frames the question as "lets … stop" does: sqlite3(1)'s "-bail: Stop after hitting an error."
    stop = asked_words("Which sqlite3 command-line option makes the shell stop at the first error?", "sqlite3")
    assert "stop" in stop and not set(terms("makes")) & stop


@pytest.mark.parametrize(
    ("question", "text", "holds"),
    [
        ("Which jq option reads YAML input?", "--version: Output the jq version and exit with zero.", False),
        ("Which xargs option sends the output by e-mail?", "--help: Print a summary of the options to 'xargs'.", False),
        ("Which jq option reads YAML input?", "--raw-input, -R: Don't parse the input as JSON.", True),
        ("Which less option keeps reading a file as it grows?", "+F: Read forward as the file is growing.", True),
        ("How do I make jq read YAML?", "--version: Output the jq version.", True),  # asks no kind
    ],
)
def test_an_answer_to_which_kind_holds_one_of_the_asked_words(question: str, text: str, holds: bool) -> None:
    assert holds_asked_word(question, text) is holds


def test_a_word_the_page_uses_in_another_inflection_is_known() -> None:
    """less(1) says "read" and "growing"; "keeps reading a file as it grows" uses no word it lacks, though the
    five-letter cut makes "readi" and "grow" of the question's words. A word the page never uses in any form
    stays unknown."""
    text = "F: Scroll forward, and keep trying to read at the end of file, like tail -f. The file is growing."
    page, bases = frozenset(terms(text)), base_terms(text)
    question = "Which less command keeps reading a file as it grows, like tail -f?"
    asked = asked_words(question, "less")
    assert asked - page == {"readi", "grow"} and unknown_words(question, asked, page, bases) == 0
    encrypt = "Which less command encrypts a file?"
    assert unknown_words(encrypt, asked_words(encrypt, "less"), page, bases) == 1


def test_coverage_is_the_share_of_the_question_one_sentence_holds() -> None:
    texts = ["Accra is the capital of Ghana. Ghana became independent in 1957.", "Cocoa is grown in the south."]
    assert asked_coverage("What is the capital of Ghana?", texts) == 1.0
    assert asked_coverage("What is the population of Ghana's capital?", texts) == pytest.approx(2 / 3)
    assert asked_coverage("Who won the 1998 football world cup?", texts) < 0.5
    assert asked_coverage("What is it?", texts) == 1.0  # nothing asked of the passages


def test_a_folder_is_what_documentation_calls_a_directory() -> None:
    """Users say "folder", documentation "directory" (zip(1): "To zip up an entire directory…"); French pages say
    "répertoire", Japanese ones ディレクトリ: the words are one term."""
    assert terms("Folders") == terms("directory") and terms("dossier") == terms("répertoires")
    assert terms("フォルダー") == terms("ディレクトリ")
    texts = ["To zip up an entire directory, the command zip -r foo foo creates the archive foo.zip."]
    assert asked_coverage("How do I zip a folder?", texts) == 1.0
    assert "folde" not in terms("a manila folder") and terms("unfolded")[0] == "unfol"  # whole words only


def test_a_sentence_of_the_manual_page_the_question_names_holds_the_page_name() -> None:
    """scp(1)'s "-r" entry says nothing of scp by name, yet answers "How do I copy a directory to another machine
    with scp?" as the generator reads it (:func:`page_terms`); a page the question does not name lends nothing."""
    question = "How do I copy a directory to another machine with scp?"
    texts = ["-r      Recursively copy entire directories.  Note that scp follows symbolic links."]
    assert asked_coverage(question, texts) < 0.5
    assert asked_coverage(question, texts, ["scp(1): OpenSSH secure file copy"]) >= 0.5
    assert asked_coverage(question, texts, ["cp(1): copy files and directories"]) < 0.5
    assert asked_coverage(question, texts, ["Copying files"]) < 0.5  # not a manual page


def test_an_english_sentence_holds_only_the_names_a_japanese_question_writes_in_latin_letters() -> None:
    """The question "iperf3 で UDP を使うオプションは？" asks with two names, both in iperf3(1)'s English entry; "Debian の次のリリースの
    予定日は？" asks with two kanji and katakana words no English sentence can hold, besides "Debian"."""
    english = ["-u, --udp: use UDP rather than TCP for iperf3.", "Debian is a free operating system."]
    assert asked_coverage("iperf3 で UDP を使うオプションは？", english) == 1.0
    assert asked_coverage("Debian の次のリリースの予定日はいつですか？", english) == pytest.approx(1 / 3)
    assert asked_coverage("バックアップを作るオプションは？", english) == 0.0  # no name at all
    assert asked_coverage("リリースの予定日は？", ["リリースの予定日は未定です。"]) == 1.0


def test_a_synopsis_line_and_the_first_sentence_of_its_description_are_one_unit() -> None:
    """A command defined with its synopsis on a line of its own (the Bash Reference Manual's builtins) answers
    with its description: "unset: unset [-fnv] [name]" alone says nothing of removing variables."""
    snip = Snippet(
        text="unset: unset [-fnv] [name]\n\nRemove each variable or function name. Readonly ones may not be unset.\n\n"
        "times: times\n\nPrint the user and system times.",
        title="Bash Reference Manual",
        result_index=0,
    )
    got = {c.text: c.entry for c in candidates([snip])}
    assert got["unset: unset [-fnv] [name]\n\nRemove each variable or function name."] == "unset"
    assert got["Readonly ones may not be unset."] == ""
    assert got["times: times\n\nPrint the user and system times."] == "times"


def test_a_plain_word_a_manual_defines_is_an_entry_of_a_question_that_names_it() -> None:
    """bc's Info manual defines its statements as "quit: When the 'quit' statement is read…": the entry the
    question names, not a sentence of the snippet the search ranked first. A message ("xargs: warning: …"), a
    note, or a word the question does not name is no entry."""
    snip = Snippet(
        "quit: When the 'quit' statement is read, the 'bc' processor is terminated, regardless of where it is.\n\n"
        "halt: The 'halt' statement is an executed statement.\n\nxargs: warning: options are mutually exclusive\n\n"
        "note: Quit is a statement.",
        "bc-bc",
        0,
    )
    cands = candidates([snip])
    got = entry_match("Does bc's quit statement terminate bc even in an if branch?", cands, [snip.title]).tolist()
    assert got == [1.0, 0.0, 0.0, 0.0]
    assert entry_match("Does xargs warn about options?", cands, [snip.title]).tolist() == [0.0] * 4
    assert entry_match("What does a note say?", cands, [snip.title]).tolist() == [0.0] * 4


def test_a_word_several_entries_define_is_their_arguments_placeholder() -> None:
    """sed(1) writes its a, i and c commands' argument as "text: Append text…", "text: Insert text…", "text:
    Replace the selected lines with text…": "replace text in a file in place" names the word, not an entry, and the
    option whose long name it spells out answers."""
    snip = Snippet(
        "-i[SUFFIX], --in-place[=SUFFIX]: edit files in place (makes backup if SUFFIX supplied)\n\n"
        "text: Append text, which has each embedded newline preceded by a backslash.\n\n"
        "text: Insert text, which has each embedded newline preceded by a backslash.\n\n"
        "text: Replace the selected lines with text, which has each embedded newline preceded by a backslash.",
        "sed(1): stream editor for filtering and transforming text",
        0,
    )
    cands = candidates([snip])
    got = entry_match("How do I replace text in a file in place with sed?", cands, [snip.title]).tolist()
    assert got == [1.0, 0.0, 0.0, 0.0]


def test_an_options_long_name_after_its_short_forms_argument_is_read() -> None:
    """make(1) writes "-j [jobs], --jobs[=jobs]" and "-C dir, --directory=dir": the long names after the short
    option's argument are the entry's too, and "several jobs at once" spells out --jobs."""
    snip = Snippet(
        "-j [jobs], --jobs[=jobs]: Specifies the number of jobs (commands) to run simultaneously.\n\n"
        "-n, --just-print, --dry-run, --recon: Print the commands that would be executed, but do not execute them.",
        "make(1): GNU make utility to maintain groups of programs",
        0,
    )
    cands = candidates([snip])
    assert [c.entry for c in cands] == ["-j [jobs], --jobs[=jobs]", "-n, --just-print, --dry-run, --recon"]
    assert entry_match("How do I run make with several jobs at once?", cands, [snip.title]).tolist() == [1.0, 0.75]


def test_a_japanese_question_is_measured_by_the_pairs_inside_its_words() -> None:
    """ "gzip で伸長するオプションは何ですか？" asks with one word, 伸長: the pairs that straddle a particle ("で伸",
    "るオ") are no words of it, and the entry that holds 伸長 holds every word it asks with."""
    entries = [
        "-d --decompress --uncompress: 伸長します。",
        "-V --version: バージョン番号とコンパイルオプションを表示します。",
    ]
    share = entry_word_share("gzip で伸長するオプションは何ですか？", "gzip", [frozenset(terms(e)) for e in entries])
    assert share.tolist() == [1.0, 0.0]
