"""The shared text module's helpers that no other test covers directly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant_bridge.text import (
    OPTION_ENTRIES_MAX,
    OPTION_ENTRY_MAX_CHARS,
    asked_kind,
    asked_programs,
    asks_quantity,
    definition_kind,
    document_name,
    documents_name,
    entry_head,
    entry_term,
    join_wrapped,
    match_form,
    named_documents,
    named_manual_pages,
    option_entries,
    overview,
    overview_subject,
    passage_defines,
    pieces_at_spaces,
    synopsis_entry,
    synopsis_line,
    titled_subject,
    titles_subject,
    writes_number,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("left", "right", "joined"),
    [
        ("…必要になる", "が、crontab", "…必要になるが、crontab"),  # Japanese on both sides: no space
        ("検出しない。", "それどころか", "検出しない。それどころか"),  # full stop and kana
        ("cron では", "crontab の", "cron では crontab の"),  # Japanese then Latin: a space
        ("the newline", "counts", "the newline counts"),
        ("한국어는", "띄어 씁니다", "한국어는 띄어 씁니다"),  # Korean puts spaces between words
        ("", "行", "行"),
    ],
)
def test_wrapped_lines_join_with_a_space_except_inside_japanese(left: str, right: str, joined: str) -> None:
    assert join_wrapped(left, right) == joined


@given(st.text(max_size=300), st.integers(min_value=1, max_value=40))
def test_pieces_concatenate_to_the_text_and_stay_small(text: str, size: int) -> None:
    pieces = pieces_at_spaces(text, size)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= size for p in pieces)


def test_pieces_end_at_spaces_where_there_are_any() -> None:
    assert pieces_at_spaces("one two three four", 9) == ["one two ", "three ", "four"]
    assert pieces_at_spaces("abcdefghij", 4) == ["abcd", "efgh", "ij"]


@pytest.mark.parametrize(
    ("message", "subject"),
    [
        ("What does rsync do?", "rsync"),
        ("What is tmux?", "tmux"),
        ("What's zstd?", "zstd"),
        ("What is the attrs library for?", "attrs"),
        ("What does the wget command do?", "wget"),
        ("What is git worktree used for?", "git worktree"),
        ("What is /opt reserved for?", "/opt"),
        ("What is the attrs library meant for?", "attrs"),
        ("Tell me about bisect", "bisect"),
        ("Qu'est-ce que tmux ?", "tmux"),
        ("À quoi sert rsync ?", "rsync"),
        ("Que fait la commande tar ?", "tar"),
        ("tmux とは何ですか？", "tmux"),
        ("git stash とは？", "git stash"),
        ("rsyncは何をするコマンドですか？", "rsync"),
        ("zstdって何？", "zstd"),
        ("tar の用途は？", "tar"),
        ("What is REPLACE in SQLite?", "REPLACE"),
        ("What is the debian-private mailing list for?", "debian-private"),
        ("What does VACUUM do in SQLite?", "VACUUM"),
        ("Qu'est-ce que REPLACE dans SQLite ?", "REPLACE"),
        ("SQLite の REPLACE とは何ですか？", "REPLACE"),
        # questions about something else than what a thing is
        ("What is the default port of PostgreSQL?", None),
        ("What does the rsync option -P do?", None),
        ("What is the largest possible ROWID in SQLite?", None),
        ("What does the SQLite ANALYZE command collect?", None),
        ("What is the difference between merge and rebase?", None),
        ("How do I use rsync?", None),
        ("tar でアーカイブからファイルを抽出するオプションは何ですか？", None),
        ("tmuxは？", None),
        ("What does it do?", None),
        ("Qu'est-ce que c'est ?", None),
        ("What is a very long name of more than three words?", None),
        ("What is new in version 3?", None),
        ("what is the primary subsistence crop in latin america", None),
        ("What is in the box?", None),
    ],
)
def test_the_subject_of_a_question_that_asks_what_a_thing_is(message: str, subject: str | None) -> None:
    assert overview_subject(message) == subject


@pytest.mark.parametrize(
    ("message", "within"),
    [
        ("What is REPLACE in SQLite?", "SQLite"),
        ("Que fait VACUUM dans SQLite ?", "SQLite"),
        ("SQLite の REPLACE とは何ですか？", "SQLite"),
        ("What is REPLACE?", None),
        ("How do I use REPLACE in SQLite?", None),
    ],
)
def test_where_the_subject_of_such_a_question_lives(message: str, within: str | None) -> None:
    found = overview(message)
    assert (found.within if found else None) == within


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Which script helps send the patch of a non-maintainer upload?", "script"),
        ("On which mailing list is a general resolution proposal discussed first?", "mailing list"),
        ("Which pragma lets SQLite reclaim free pages?", "pragma"),
        ("Quelle commande télécharge les sources amont ?", "commande"),
        ("Which command line option of curl follows redirects?", "option"),  # "command line" says which options
        ("Which command lists the packages that were installed manually?", "command"),
        ("Which internal table does SQLite use?", None),  # a table is no named kind
        ("What is the maximum length of a name?", None),
        ("How do I list the packages of a mailing list?", None),
    ],
)
def test_the_kind_of_thing_a_question_asks_the_name_of(message: str, kind: str | None) -> None:
    assert asked_kind(message) == kind


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("What is PostgreSQL?", True),
        ("What does the wget command do?", True),
        ("What is the attrs library for?", True),
        ("À quoi sert la commande file ?", True),
        ("Qu'est-ce que le paquet foo ?", True),
        ("SQLite の REPLACE とは何ですか？", True),
        ("What is a Roth IRA?", False),
        ("What is the expense policy?", False),
        ("Qu'est-ce que l'IRA ?", False),
    ],
)
def test_whether_the_subject_is_a_name_or_a_thing_described(message: str, named: bool) -> None:
    found = overview(message)
    assert found is not None and found.named is named


@pytest.mark.parametrize(
    ("title", "subject"),
    [
        ("git-rebase(1): Reapply commits on top of another base tip", " git rebase "),
        ("tmux(1)", " tmux "),
        ("attrs-README", " attrs "),
        ("Bash Reference Manual", " bash "),
        ("Tomli — a TOML parser", " tomli "),
        ("tqdm: fast progress bars", " tqdm "),
        ("SQLite Foreign Key Support", " sqlite foreign key support "),
        ("README", " readme "),
    ],
)
def test_what_a_documents_title_names(title: str, subject: str) -> None:
    assert titled_subject(title) == subject


@pytest.mark.parametrize(
    ("subject", "sentence", "kind"),
    [
        ("rsync", "rsync - a fast, versatile, local/remote file-copying tool", "name"),
        ("debian-private", "debian-private@lists.debian.org is a special mailing list for private discussions", "what"),
        ("git rebase", "git-rebase - Reapply commits on top of another base tip", "name"),
        ("wget", "Wget - The non-interactive network downloader.", "name"),
        ("rsync", "Rsync is a fast and extraordinarily versatile file copying tool.", "what"),
        ("tmux", "tmux is a terminal multiplexer: it enables a number of terminals to be created.", "what"),
        ("tar", "GNU tar est un programme d'archivage conçu pour stocker plusieurs fichiers dans un seul.", "what"),
        ("tar", "説明: GNU tar は、アーカイブプログラムです。", "what"),
        ("sqlite3", "The sqlite3 command is a terminal-based front-end.", "what"),
        ("ncdu", "ncdu (NCurses Disk Usage) is a curses-based version of the well-known du.", "what"),
        ("less", "Less is a program similar to more(1), but it has many more features.", "what"),
        ("jq", "jq can transform JSON in various ways.", "does"),
        ("gzip", "La commande gzip réduit la taille des fichiers nommés.", "does"),
        ("lsof", "Lsof revision 4.95.0 lists on its standard output file information.", "does"),
        ("lsof", "Lsof was written by Victor A. Abell of Purdue University.", None),
        ("grep", "grep, egrep, fgrep, rgrep - print lines that match patterns", "name"),
        ("gzip", "gzip, gunzip, zcat - compress or expand files", "name"),
        ("HTTPX", "HTTPX requires Python 3.9+.", None),
        ("orjson", "orjson supports CPython 3.10, 3.11 and 3.12.", None),
        ("Rich", "Rich has an inspect function which can produce a report on any Python object.", None),
        ("rsync", "Thus rsync looks for the file.", None),
        ("rsync", "The rsync algorithm is described elsewhere.", None),
        ("Roth IRA", "A Roth IRA is a retirement account funded with income that was already taxed.", "what"),
        ("rsync", "An rsync process can copy files.", None),
        ("rsync", "rsyncd.conf is the configuration file.", None),
        ("rsync", "rsync -aiv host:'a simple file.pdf' /dest/", None),
        ("tmux", "tmux [-2CDluvV] [-c shell-command] [-f file]", None),
        ("/opt", "/opt : Add-on application software packages", "name"),  # a standard's heading
        ("/opt", "Purpose\n/opt is reserved for the installation of add-on application software packages.", "what"),
        ("/opt", "See also\nthe /opt hierarchy", None),
        ("PRAGMA integrity_check", "PRAGMA integrity_check does not find FOREIGN KEY errors.", None),  # a limit
        ("gzip", "gzip ne compresse pas les liens symboliques.", None),
        ("tar", "tar can't append to a compressed archive.", None),
        # a thing of a kind given a quality under a condition defines the quality and the kind together
        ("hot journal", "A rollback journal is said to be hot if it needs to be rolled back.", "what"),
        ("hot journal", "A journal is hot if it exists and is not empty.", "what"),
        ("broken distribution", "The distribution is said to be broken when a package cannot be installed.", "what"),
        ("hot journal", "Before reading, SQLite checks whether the file has a hot journal.", None),
        ("hot journal", "A rollback journal is said to be hot.", None),  # no condition: a statement, not a definition
        ("journal hot", "A journal is hot if it exists.", None),
        ("hot journal", "A journal is hot if...", None),  # the conditions follow in a list: it introduces them
    ],
)
def test_how_a_sentence_says_what_its_subject_is(subject: str, sentence: str, kind: str | None) -> None:
    assert definition_kind(subject, sentence) == kind
    assert passage_defines(subject, sentence) is (kind is not None)
    assert passage_defines(subject, sentence, kinds=("what", "does")) is (kind in ("what", "does"))


@pytest.mark.parametrize(
    ("subject", "passage", "documented"),
    [
        (
            "apt autoremove",
            "apt remove foo | aptitude remove foo\napt autoremove | N/A | remove auto-installed packages",
            True,
        ),
        ("apt autoremove", "apt-get autoremove | remove auto-installed packages", False),  # another row's name
        ("PRAGMA integrity_check", "Notes.\n\nPRAGMA schema.integrity_check;\nPRAGMA schema.integrity_check(N)", True),
        ("PRAGMA integrity_check", "Run the quick_check pragma before PRAGMA integrity_check", False),  # prose
        ("PRAGMA integrity_check", "PRAGMA schema.quick_check;", False),
        (
            "Debian's release goals",
            'The project picks topics. These are known as "Release Goals" and are described.',
            True,
        ),
        (  # its definition entry in an API reference
            "itertools.chain",
            "Roughly equivalent to:\n\nitertools.chain(*iterables): Make an iterator that returns elements.",
            True,
        ),
        ("itertools.chain", "itertools.chain.from_iterable(iterable): Alternate constructor for chain().", False),
        ("PostgreSQL", "SQLite follows interpretation (1), as does PostgreSQL.", False),
        ("PostgreSQL", "Client/server engines such as MySQL or PostgreSQL | port 5432", False),
    ],
)
def test_a_reference_documents_a_name_without_a_sentence_that_defines_it(
    subject: str, passage: str, documented: bool
) -> None:
    assert documents_name(subject, passage) is documented


def test_a_latin_word_glued_to_japanese_text_is_a_word_of_its_own() -> None:
    assert match_form("第5章 debianディレクトリー") == " 第 5 章 debian ディレクトリー "
    assert match_form("Debianパッケージ") == " debian パッケージ "
    assert match_form("U.S. policy") == " us policy "


def test_a_document_is_its_subjects_however_the_name_is_split() -> None:
    assert titles_subject("pyrate_limiter-README", "PyrateLimiter")
    assert titles_subject("git-rebase(1): Reapply commits", "git rebase")
    assert titles_subject("attrs-README", "attrs") and not titles_subject("attrs-README", "cattrs")
    assert not titles_subject("README", "") and not titles_subject("rg(1)", "ripgrep")
    assert definition_kind("PyrateLimiter", "pyrate-limiter is a rate limiter for Python.") == "what"


def test_option_entries_are_an_option_paragraph_and_the_paragraphs_after_it() -> None:
    text = (
        "Options\n\nThe options are:\n\n-a, --all: list all.\n\nExample: ls -a\n\n"
        "ServerAliveInterval: a keyword, not an option\n\n--block-size=SIZE: scale sizes by SIZE\n\n"
        "-z: " + "long " * 400
    )
    spans = option_entries(text)
    assert [text[s:e].split("\n")[0][:18] for s, e in spans] == [
        "-a, --all: list al",
        "--block-size=SIZE:",
        "-z: long long long",
    ]
    assert (
        text[spans[0][0] : spans[0][1]]
        == "-a, --all: list all.\n\nExample: ls -a\n\nServerAliveInterval: a keyword, not an option"
    )
    assert spans[2][1] - spans[2][0] <= OPTION_ENTRY_MAX_CHARS and not text[spans[2][1] - 1].isspace()
    assert option_entries("") == [] and option_entries("No options here.\n\n- a list item") == []
    many = "\n\n".join(f"-x{i}: does thing {i} here" for i in range(OPTION_ENTRIES_MAX + 1))
    assert option_entries(many) == [] and len(option_entries(many[: many.rindex("\n\n")])) == OPTION_ENTRIES_MAX


def test_a_functions_other_forms_above_its_description_are_part_of_its_entry() -> None:
    """SQLite's function pages write each form of a function on a line of its own, the description after the
    last ("count(X)" above "count(*): The count(X) function returns…"): one entry from the first form on. SQLite's
    aggregate-function page writes half of its functions that way: without them it had three entries, fewer than
    the five (NAMED_ENTRIES_MIN) a page of entries needs, and so none."""
    text = "\n\n".join(
        [
            "Built-in Aggregate Functions",
            "avg(X): The avg() function returns the average value of all non-NULL X within a group.",
            "count(X)\ncount(*): The count(X) function returns a count of the number of times that X is not NULL.",
            "group_concat(X)\ngroup_concat(X,Y): The group_concat() function returns a string which is the "
            "concatenation of all non-NULL values of X.",
            "max(X): The max() aggregate function returns the maximum value of all values in the group.",
            "min(X): The min() aggregate function returns the minimum non-NULL value of all values in the group.",
            "sum(X)\ntotal(X): The sum() and total() aggregate functions return the sum of all non-NULL values.",
        ]
    )
    entries = [text[s:e] for s, e in option_entries(text)]
    assert [e.split("\n")[0] for e in entries] == [
        "avg(X): The avg() function returns the average value of all non-NULL X within a group.",
        "count(X)",
        "group_concat(X)",
        "max(X): The max() aggregate function returns the maximum value of all values in the group.",
        "min(X): The min() aggregate function returns the minimum non-NULL value of all values in the group.",
        "sum(X)",
    ]
    assert entry_term("count(X)\ncount(*): The count(X) function returns a count.") == "count(*)"
    assert entry_term("count(X)\ncount(*)") == "" and entry_term("See lower(X)\nupper(X): converts.") == ""


def test_a_page_of_options_keeps_the_commands_it_defines_with_their_synopses() -> None:
    """The Bash Reference Manual defines its builtins as a GNU manual in HTML does: the name, a synopsis line that
    repeats it, the description below; the builtins' own options are entries too. A sentence that opens with
    its term is no synopsis ("simple: simple ASCII characters"), and a page with fewer than
    NAMED_ENTRIES_MIN such commands keeps its options only."""
    builtins = ["unset: unset [-fnv] [name]", "times: times", "source: source filename", "let: let expr [expr …]"]
    text = "\n\n".join(
        [
            "export: export [-fn] [-p] [name[=value]]",
            "Mark each name to be passed to child processes.",
            "-n: No longer mark each name for export.",
            *(f"{b}\n\nDoes what {b.split(':')[0]} does." for b in builtins),
            "simple: simple ASCII characters",
        ]
    )
    entries = [text[s:e] for s, e in option_entries(text)]
    assert entries[:2] == [
        "export: export [-fn] [-p] [name[=value]]\n\nMark each name to be passed to child processes.",
        "-n: No longer mark each name for export.",
    ]
    assert [e.split(":")[0] for e in entries[2:]] == ["unset", "times", "source", "let"]
    assert entries[-1].endswith("simple: simple ASCII characters")
    assert [entry_term(b) for b in builtins] == ["unset", "times", "source", "let"]
    assert entry_term("simple: simple ASCII characters") == "" and not synopsis_line("unset: unset [-f]\n\nRemove.")
    assert synopsis_line(builtins[0])
    assert synopsis_line("mapfile: mapfile [-d delim] [-n count]\n    [-t] [-u fd] [array]")  # an indented second line
    assert not synopsis_line("mapfile: mapfile [-d delim]\nRead lines from the standard input.")
    fewer = text.split("\n\nsource:")[0]
    assert [fewer[s:e].split(":")[0] for s, e in option_entries(fewer)] == ["-n"]


def test_a_page_of_options_keeps_the_commands_its_list_of_commands_defines() -> None:
    """tmux(1) lists its commands after its options: the name and a synopsis that opens with a bracketed flag, the
    description after a colon or after the command's alias. A setting with its values is no command ("status [off |
    on]: …"), nor is a command written without flags."""
    commands = [
        "kill-session [-aC] [-t target-session]: Destroy the given session.",
        "list-sessions [-F format] [-f filter]: (alias: ls) List all sessions managed by the server.",
        "rename-window [-t target-window] new-name: (alias: renamew) Rename the current window.",
        "resize-pane [-DLMRTUZ] [-t target-pane] [adjustment] (alias: resizep) Resize a pane.",
        "swap-pane [-dDUZ] [-s src-pane] [-t dst-pane]: (alias: swapp) Swap two panes.",
    ]
    text = "\n\n".join(
        ["-C: Start in control mode.", "-f file: Specify a configuration file.", *commands, "kill-server: Kill it."]
    )
    entries = [text[s:e] for s, e in option_entries(text)]
    names = ["kill-session", "list-sessions", "rename-window", "resize-pane", "swap-pane"]
    assert [entry_term(e) for e in entries] == ["-C", "-f", *names]
    assert entries[-1].endswith("Swap two panes.\n\nkill-server: Kill it.")
    assert all(synopsis_entry(c) for c in commands) and synopsis_entry("unset: unset [-fnv] [name]")
    assert not synopsis_entry("status [off | on | 2]: Show or hide the status line.")
    assert entry_term("status [off | on | 2]: Show or hide the status line.") == ""
    # an option's long name after the short form's argument: "[jobs]", a lower-case placeholder
    assert entry_term("-j [jobs], --jobs[=jobs]: Specifies the number of jobs.") == "-j [jobs], --jobs[=jobs]"
    assert entry_term("-C dir, --directory=dir: Change to directory dir.") == "-C dir, --directory=dir"
    assert entry_term("-c cipher: Selects the cipher to use.") == "-c"
    fewer = "\n\n".join(["-C: Start in control mode.", *commands[:2]])
    assert [entry_term(fewer[s:e]) for s, e in option_entries(fewer)] == ["-C"]


def test_a_document_is_its_subject_s_by_its_title_or_its_file_name() -> None:
    """A README titled by its heading ("filesystem_spec") is fsspec's by its file name; a file name that says more
    than the subject ("sqlite3-doc-cli.html") does not make the page sqlite3's own."""
    assert titles_subject("filesystem_spec", "fsspec", "fsspec-README.md")
    assert not titles_subject("filesystem_spec", "fsspec")
    assert titles_subject("Thread-pool Controls", "threadpoolctl", "threadpoolctl-README.md")
    assert not titles_subject("Command Line Shell For SQLite", "sqlite3", "sqlite3-doc-cli.html")
    assert titles_subject("rsync(1): a fast, versatile, local/remote file-copying tool", "rsync", "")


def test_the_commands_of_a_help_listing_are_entries_a_line_each() -> None:
    """The SQLite shell's page prints its .help: a line per dot-command, its arguments, two spaces or more, what it
    does. Each line is an entry of its own; a few aligned lines of a program's output quoted apart from each
    other are not a listing, and a listing's options are not commands."""
    listing = (
        ".backup ?DB? FILE        Backup DB to FILE\n"
        ".bail on|off             Stop after hitting an error.  Default OFF\n"
        ".changes on|off          Show number of rows changed by SQL\n"
        "-v, --verbose            Print more\n"
        ".dump ?OBJECTS?          Render database content as SQL\n"
        ".import FILE TABLE       Import data from FILE into TABLE\n"
        ".timer on|off            Turn SQL timer on or off"
    )
    text = f"The shell reads dot-commands.\n\nsqlite> .help\n{listing}\n\nMore prose follows here."
    entries = [text[s:e] for s, e in option_entries(text)]
    assert [e.split()[0] for e in entries] == [".backup", ".bail", ".changes", ".dump", ".import", ".timer"]
    assert entries[-1] == ".timer on|off            Turn SQL timer on or off"
    output = "\n\n".join(f"USER   {i}   PID ACCESS COMMAND\nroot   {i}   F.... rsyslog" for i in range(4))
    assert option_entries(f"Some prose.\n\n{output}") == []
    assert asked_programs("Which sqlite3 dot-command loads data from a file into a table?") == {"sqlite3"}
    assert asked_programs("Which git subcommand shows the history?") == {"git"}


def test_an_option_entry_ends_where_the_next_section_starts() -> None:
    """The last option of a section is not followed by the prose of the next one ("9.2 Merge Commands" after
    sdiff's options), in a numbered manual or under a Markdown heading; a command line on its own is no
    heading."""
    text = (
        "9.1 Options to 'sdiff'\n\n-a, --text: Treat all files as text.\n\n--left-column\n--minimal\n\n"
        "9.2 Merge Commands\n\nThe output file gets each group of lines the user keeps.\n\n"
        "## Usage\n\n-o FILE: Put merged output into FILE.\n\n$ sdiff -o merged a b\n\nThen edit the file."
    )
    entries = [text[s:e] for s, e in option_entries(text)]
    assert entries == [
        "-a, --text: Treat all files as text.\n\n--left-column\n--minimal",
        "-o FILE: Put merged output into FILE.\n\n$ sdiff -o merged a b\n\nThen edit the file.",
    ]


def test_an_entry_head_is_its_term_and_first_two_sentences() -> None:
    entry = "-S, --size size: Limit results by size. Units are k, m and g. Example: fd -S +1m\n\nSee also --type."
    assert entry_head(entry) == "-S, --size size: Limit results by size. Units are k, m and g."
    assert entry_head("-x: Exclude.") == "-x: Exclude." and entry_head("") == ""


def test_a_page_of_named_settings_lists_them_as_its_entries() -> None:
    """ssh_config(5) defines keywords, not options: "HashKnownHosts: Indicates that…" is an entry when the page
    defines several such names and no option; a note defines nothing, one name in prose is no list, and a page of
    options keeps its options only."""
    keywords = ["AddressFamily", "BatchMode", "ConnectionAttempts", "HashKnownHosts", "LogLevel"]
    text = "Description\n\nThe keywords are:\n\n" + "\n\n".join(
        f"{k}: Specifies what {k} does here.\n\nThe default is no." for k in keywords
    )
    text += "\n\nNOTE: this says nothing of a keyword."
    spans = option_entries(text)
    assert [text[a:b].split(":")[0] for a, b in spans] == keywords
    assert text[spans[-1][0] : spans[-1][1]].endswith("The default is no.\n\nNOTE: this says nothing of a keyword.")
    assert option_entries("\n\n".join(f"{k}: Specifies what {k} does here." for k in keywords[:4])) == []
    options = text + "\n\n-v, --verbose: say more about what is done"
    assert [options[a : a + 2] for a, _ in option_entries(options)] == ["-v"]
    # a keyword of one capitalised word is one of them on such a page, a label of prose elsewhere
    port = text.replace("HashKnownHosts: ", "Port: Specifies the port number.\n\nHashKnownHosts: ")
    assert "Port" in [port[a:b].split(":")[0] for a, b in option_entries(port)]
    prose = "\n\n".join(f"Example: Run the command number {i} here." for i in range(6))
    assert option_entries(prose) == []


def test_a_command_names_the_manual_page_of_its_configuration_file() -> None:
    titles = ["ssh(1): remote login", "ssh_config(5): client configuration", "rsyncd.conf(5): daemon", "wget(1): x"]
    assert named_manual_pages("How many times does ssh try to connect?", titles) == {"ssh", "ssh_config"}
    assert named_manual_pages("Which rsync daemon parameter limits connections?", titles) == {"rsyncd.conf"}
    assert "ssh_config" in named_manual_pages("What does ssh_config set?", titles)
    # a name written only as a part of a longer one is not named by itself
    assert named_manual_pages("Which ssh_config keyword sets the port?", titles) == {"ssh_config"}
    assert named_manual_pages("Does ssh read ssh_config first?", titles) == {"ssh", "ssh_config"}
    assert named_manual_pages("How do I download with wget?", titles) == {"wget"}
    # a word inside a file name or a path names no command, unless the page's name is written so
    assert named_manual_pages("Which option includes the sources orig.tar.gz?", ["tar(1): x"]) == set()
    assert named_manual_pages("Which tar option makes a .tar.gz archive?", ["tar(1): x"]) == {"tar"}
    assert named_manual_pages("Which rsyncd.conf parameter limits connections?", titles) == {"rsyncd.conf"}


def test_a_number_in_words_other_than_one_is_written() -> None:
    assert writes_number("There are five conflict resolution algorithm choices") and writes_number("deux fois")
    assert writes_number("It holds 3 items") and not writes_number("one of the options")
    assert not writes_number("iperf3 and ext4") and not writes_number("統一された形式")


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("find(1): search for files in a directory hierarchy", "find"),
        ("GNU Gzip: General file (de)compression", "gzip"),  # an Info manual's top heading
        ("GNU ‘sed’", "sed"),
        ("Bash Reference Manual", "bash"),
        ("libffi", "libffi"),
        ("Comparing and Merging Files", None),  # several words: no one program
        ("file: Déterminer le type d'un fichier", None),  # a manual page without its header, named as before
    ],
)
def test_the_program_a_manual_is_of(title: str, name: str | None) -> None:
    assert document_name(title) == name


def test_a_message_names_the_program_of_a_manual_that_is_no_manual_page() -> None:
    gzip, tar, bzip2, readline = (
        "GNU Gzip: General file (de)compression",
        "tar(1): an archiving utility",
        "bzip2 and libbzip2, version 1.0.8",
        "GNU Readline Library",
    )
    titles = [gzip, tar, bzip2, readline, "Time", "Datatypes In SQLite"]
    assert named_documents("Which gzip option checks the integrity of a file?", titles) == {gzip}
    assert named_documents("Which tar option lists an archive?", titles) == {tar}
    # the program the question asks an option or a variable of opens the title
    assert named_documents("Which bzip2 option reduces memory usage?", titles) == {bzip2}
    assert named_documents("Which readline variable sets the bell style?", titles) == {readline}
    assert named_documents("Quelle option de bzip2 garde les fichiers ?", titles) == {bzip2}
    assert named_documents("Which SQLite function returns the changes?", titles) == set()  # ends the title
    assert named_documents("Which option shows the version?", titles) == set()


def test_a_message_that_asks_an_option_of_one_of_two_programs_names_that_ones_manuals() -> None:
    gzip, rsync, tar = "GNU Gzip: General file (de)compression", "rsync(1): a fast file-copying tool", "tar(1): tar"
    titles = [gzip, rsync, tar]
    assert named_documents("Which gzip option makes the output friendlier to rsync?", titles) == {gzip}
    assert named_documents("Quelle option de tar compresse l'archive avec gzip ?", titles) == {tar}
    assert named_documents("Which tar option writes to an rsync server?", titles) == {tar}
    assert named_documents("How does rsync compare with gzip?", titles) == {gzip, rsync}  # asks of neither


def test_a_question_for_versions_asks_for_a_number() -> None:
    assert asks_quantity("Which Python versions does orjson support?")
    assert asks_quantity("Quelles versions de Python sont prises en charge ?")
    assert not asks_quantity("Quelle option de tar exclut les fichiers du gestionnaire de versions ?")


@pytest.mark.parametrize(
    ("message", "programs"),
    [
        ("Which bzip2 option reduces memory usage?", {"bzip2"}),
        ("Which Libgpg-error function compresses a buffer?", {"libgpg-error"}),
        ("Which find test matches empty files?", {"find"}),
        ("Quelle option de gzip compresse le plus ?", {"gzip"}),
        ("Which option shows the version?", set()),
        ("How do I change the kernel command line?", {"kernel"}),  # named, but opens no manual's title
        # function words, flags, verbs after a kind and one-letter commands name no program
        ("Which bash builtin removes a variable or function?", {"bash"}),
        ("Which bash variable holds commands to run before the prompt?", {"bash"}),
        ("Does time's --output option overwrite the file?", set()),
        ("How many commands can ed's u command undo?", set()),
        ("How do I test the integrity of a compressed file with zstd?", set()),
        ("Quelle option de xargs lit les arguments depuis un fichier ?", {"xargs"}),
        # a Japanese question opens with the program, before で or の; a program named later is what it does
        ("tar で gzip 圧縮するオプションは？", {"tar"}),
        ("bc の起動時の歓迎メッセージを表示しないオプションは？", {"bc"}),
        ("lintian の出力で I: は何を意味しますか？", set()),  # asks no option, command or variable
    ],
)
def test_the_program_a_question_asks_an_entry_of(message: str, programs: set[str]) -> None:
    assert asked_programs(message) == programs


def test_an_info_definition_of_an_option_is_an_entry_of_that_option() -> None:
    assert entry_term("Option: -xdev, -mount: Don't descend directories on other filesystems.") == "-xdev, -mount"
    assert (
        entry_term("Test: -empty: True if the file is empty and is either a regular file or a directory.") == "-empty"
    )
    assert entry_term("Function: void sha256_init (struct sha256_ctx *CTX): Initialize the SHA256 state.") == ""


@pytest.mark.parametrize(
    ("message", "counted"),
    [
        ("What is the maximum number of triggers one SQLite table can have?", ("trigg",)),
        ("What's the default maximum number of columns in a table?", ("colum",)),
        ("Which find option limits the maximum number of levels?", ()),
        ("What is the maximum length of a file name?", ()),
    ],
)
def test_what_is_the_maximum_number_of_things_counts_those_things(message: str, counted: tuple[str, ...]) -> None:
    from assistant_bridge.text import counted_thing

    assert counted_thing(message) == counted


@pytest.mark.parametrize(
    ("message", "count"),
    [
        ("How many architectures does Debian run on?", True),
        ("On how many architectures does Debian run?", True),
        ("From how many possible completions does readline ask first?", True),
        ("And how much does it cost?", True),
        ("Do you know how many there are?", True),
        ("Which mtr option sets how many pings are sent in report mode?", False),
        ("Which SQLite function returns how many rows the last statement changed?", False),
        ("How much faster is it?", False),
    ],
)
def test_a_count_is_asked_where_how_many_opens_the_question_or_a_clause(message: str, count: bool) -> None:
    from assistant_bridge.text import asks_count, counted_thing

    assert asks_count(message) is count
    if not count:
        assert counted_thing(message) == ()
