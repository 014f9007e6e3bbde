"""Sentences of snippets as the extractive generator sees them: terms, headings and labels, list items.

Snippets cut from real documents are not prose: a Markdown or HTML page keeps its headings as short lines
("Resetting a forgotten password", "■ パスワードを忘れた場合"), lists keep their bullets and numbers, tables
their rows, and PDF text is hard-wrapped with a heading on the line right above the paragraph it names. The
:func:`candidates` of a snippet are its sentences (:func:`~assistant_bridge.text.sentence_spans`)
further cut at the line breaks that end a heading, a label or a list item, without their list markers; each
is flagged as a **label** (:func:`is_label`: a heading, list label, table row or the snippet's title) when it
has no sentence of its own. Labels are never an answer by themselves, but a heading that matches the query
tells which sentences below it answer it (:func:`section_match`).

Invariant: every candidate is an exact substring of its snippet (``snippet.text[start:end] == text``).
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from assistant_bridge.core.language import STOPWORDS
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.text import (
    ASKS_COMMAND,
    ASKS_NAME,
    ASKS_OPTION,
    BULLETS,
    CJK_CHARS,
    HIRAGANA_ONLY,
    ITEM_DASHES,
    KANJI_DIGITS,
    KIND_PREFIX,
    OPTION_WORD,
    TABLE_CELL,
    asked_kind,
    asked_programs,
    asked_unit,
    asks_default,
    asks_quantity,
    definition_kind,
    documents_name,
    entry_term,
    holds_number,
    listing_lines,
    manual_page_name,
    match_form,
    named_manual_pages,
    names_unit,
    overview_subject,
    says_quality,
    sentence_spans,
    states_default,
    states_default_number,
    synopsis_entry,
    synopsis_line,
    titles_subject,
    unwrap_unspaced,
    without_accents,
    word_term,
    writes_number,
)

_TERM = re.compile(rf"[{CJK_CHARS}]+|[^\W_{CJK_CHARS}]+")
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]")


def text_width(text: str) -> int:
    """How long ``text`` reads, in Latin characters: a CJK character counts twice ("diff - ファイルの行単位での比較",
    19 characters, says as much as "diff - compare files line by line")."""
    return len(text) + len(_CJK_RUN.findall(text))


# a sentence's end, a note's number after it allowed ("No binaries may be located under /etc. 2", "…RPATH.⁷": a
# PDF's footnote marks)
ENDS_SENTENCE = re.compile(r"[.!?…。！？][\"'”’»)\]」』）]*(?:\s?(?:\d{1,2}|[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,2}|\[\d{1,3}\]))?$")
# not a URL's scheme cut from its address at a line break ("… Build Flags (https:")
_INTRODUCES = re.compile(r"(?<!\bhttps)(?<!\bhttp)(?<!\bftp)[:：]\s*$")
_BREAK = re.compile(r"[ \t]*\n\s*|[ \t]{2,}")


@dataclass(frozen=True)
class Candidate:
    snippet: int
    position: int
    start: int
    end: int
    text: str
    terms: frozenset[str]
    fragment: bool
    label: bool = False  # a heading, list label, table row or the snippet's title: never an answer by itself
    entry: str = ""  # the term of a definition entry ("-l, --lines" of "-l, --lines: print the newline counts")
    item: bool = False  # a list item (its bullet or number removed)
    pairs: frozenset[tuple[str, str]] = frozenset()  # its adjacent terms, in order (phrase matching)
    listed: bool = False  # a line of a help listing (:func:`~assistant_bridge.text.listing_lines`)
    header: int = -1  # a row of a table with a header row: that row's position in the snippet (:func:`_table_headers`)


# identifiers, kept whole as well: "ServerAliveCountMax" and "threadpool_limits" are not "server" and "limits",
# and a keyword in capitals ("VARCHAR", "RETURNING") is not just its stem "varch"
_IDENTIFIER_TERM = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*|\b[A-Z][A-Z0-9]{5,}\b"
)


STEM_CHARS = 5  # a word's term is its first five characters


def _stem(word: str) -> str:
    """A word's term: its first :data:`STEM_CHARS` characters, after the final "s" of a word of four or five
    letters ("sorts" and "sort", "lists" and "list", "files" and "file" are one term; "options" and "option" are one
    by the cut alone)."""
    if 4 <= len(word) <= STEM_CHARS and word.endswith("s") and not word.endswith("ss") and word[:-1].isalpha():
        word = word[:-1]
    return word[:STEM_CHARS]


# the word a user says for what documentation calls otherwise: "How do I zip a folder with everything inside
# it?" and zip(1)'s "To zip up an entire directory"; the corpus of the real-documents benchmark writes "directory"
# 1,714 times and "folder" 11 times, French pages "répertoire" 264 times and "dossier" 7, Japanese ones
# ディレクトリ 158 times and フォルダ never
_USER_WORDS = re.compile(r"\b(folder|dossier)s?\b|(フォルダ)ー?", re.IGNORECASE)
_DOCUMENTATION_WORDS = {"folder": "directory", "dossier": "répertoire", "フォルダ": "ディレクトリ"}


def _documentation_word(m: re.Match[str]) -> str:
    """The documentation's word for a :data:`_USER_WORDS` match (a plural as its singular: one term either way)."""
    return _DOCUMENTATION_WORDS[(m.group(1) or m.group(2)).casefold()]


# "non-negative" is "non" and a word of its own, not "negative": "If the LIMIT expression evaluates to non-negative
# value N…" does not answer "What happens when the LIMIT expression evaluates to a negative value?" ("non" stays a
# term, as before, so that a question says as many words)
_NEGATED = re.compile(r"\bnon-(?=[^\W\d_])", re.IGNORECASE)
# "not" as a word, not SQL's NOT ("NOT NULL", "IF NOT EXISTS")
_NOT_WORD = re.compile(r"\bnot\s+([^\W\d_]{3,})")
# "the following" and "as follows" announce what comes next: not the verb "follow" ("Does httpcore follow redirects?"
# is not answered by "The httpcore package has the following dependencies...")
_ANNOUNCING = re.compile(r"\b(the|as) follow(?:ing|s)\b")


def terms(text: str) -> list[str]:
    """Matching terms of ``text``, in order: stemmed words (3+ chars, cut to five characters), numbers, CJK
    bigrams, and whole identifiers (``ServerAliveCountMax``, ``threadpool_limits``, ``typer.run``, keywords of six
    or more capitals such as ``VARCHAR``) and command-line options as written (``-P``, ``--partial``) besides
    their stemmed parts. A word users say for what documentation calls otherwise is read as documentation's word
    (:data:`_USER_WORDS`: "folder" as "directory")."""
    normal = _USER_WORDS.sub(_documentation_word, unicodedata.normalize("NFKC", text))
    out: list[str] = []
    for token in _TERM.findall(_NEGATED.sub("non non", _ANNOUNCING.sub(r"\1", normal.casefold()))):
        if _CJK_RUN.match(token):
            out.extend(token[i : i + 2] for i in range(max(1, len(token) - 1)))
        elif token.isdigit() or len(token) > 2:
            out.append(_stem(token))
    out.extend(m.casefold() for m in _IDENTIFIER_TERM.findall(normal) if len(m) > 5)
    out.extend(OPTION_WORD.findall(normal))
    return out


# list bullets, Markdown heading marks, "3." / "3)" numbering, Japanese heading marks
_MARKER = re.compile(rf"(?:[-{ITEM_DASHES}*+{BULLETS}・※#]+|\d{{1,2}}[.)])(?=\s|[^\x00-\x7f])\s*")
_WORDS = re.compile(r"[^\W_]+")
# Question words are rare in documents, so their idf is high, yet a sentence that contains "how" or "when" is
# no better an answer for it; they are left out of the query's terms (stems as :func:`terms` cuts them).
QUESTION_WORDS = frozenset("how who whom whose why when where comme quand pourq combi quel quell quels".split())
_JA_QUESTION_KANJI = frozenset("何誰")  # a bigram holding one is a question word's, not the topic's
_LABEL_WORDS = 10  # a line of at most this many words without a full stop is a heading or a label
_QUESTION_LINE = re.compile(r"[?？][\"'”’»)\]」』）]*$")
_QUESTION_WORDS_MAX = 30
_ITEM_WORDS = 5
_INTRODUCER_WORDS = 6  # a line of this many words ending with a colon is a sentence ("Here's an example:" is not)
_LABEL_CJK_CHARS = 24


def _fold(text: str) -> str:
    return " ".join(_WORDS.findall(unicodedata.normalize("NFKC", text).casefold()))


def writes_cjk(text: str) -> bool:
    """``text`` holds a Chinese or Japanese character."""
    return _CJK_RUN.search(text) is not None


def is_cjk_text(text: str) -> bool:
    """``text`` is written mostly in Chinese or Japanese characters (more than half of them)."""
    return len(_CJK_RUN.findall(text)) * 2 > len(text.strip())


# "add the following lines", "comme suit", "les lignes suivantes", "以下の行を", "次のように": the sentence announces
# a block that follows it, though it ends with a full stop
_ANNOUNCES = re.compile(
    r"\b(?:the following|as follows)\b|\b(?:comme suit|ci-dessous)\b|\bsuivante?s?\b|以下の|次の(?:よう|行|コマンド)",
    re.IGNORECASE,
)


def announces(text: str) -> bool:
    """The sentence announces a block that follows it (:data:`_ANNOUNCES`)."""
    return _ANNOUNCES.search(text) is not None


def introduces(text: str) -> bool:
    """The line ends with a colon: it introduces what follows it (a list, a command, a code sample)."""
    return _INTRODUCES.search(text) is not None


# a table row as ingestion writes it: cells joined by " | " ("exFAT | cross platform sharing…"); not the
# operator of "The || operator is "concatenate"…" nor a pipe written without spaces ("a|b")
_ROW_CELL_WORDS = 5
_TABLE_CELLS = re.compile(rf"{re.escape(TABLE_CELL)}|^\| | \|$")


def is_label(text: str, title: str) -> bool:
    """A heading, a list label or a table row: no sentence of its own (no full stop and short), the title,
    or a question (a FAQ's question heads its answer; it answers nothing). A definition entry
    (:func:`entry_term`) is not a label."""
    if entry_term(text):
        return False
    folded = _fold(text)
    if not any(ch.isalpha() for ch in folded) or (title and folded == _fold(title)):
        return True
    if _TABLE_CELLS.search(text) or "\t" in text.strip():
        # a row whose cell says something ("exFAT | cross platform sharing of data on the large hard disk like
        # device…") answers as a sentence does; one of names and numbers only labels
        return not any(len(_fold(cell).split()) >= _ROW_CELL_WORDS for cell in re.split(r" \| |\t", text))
    if _QUESTION_LINE.search(text) and len(folded.split()) <= _QUESTION_WORDS_MAX:
        return True  # "6.2.2. Where do these codenames come from?": a question asks; it heads its answer
    if ENDS_SENTENCE.search(text):
        return False
    if introduces(text) and len(folded.split()) >= _INTRODUCER_WORDS:
        # "Run the following to test Rich output on your terminal:" introduces its answer
        # (:func:`candidates` keeps it a label when sentences follow it rather than a command or code)
        return False
    if is_cjk_text(text):
        return len(text.strip()) <= _LABEL_CJK_CHARS
    return len(folded.split()) <= _LABEL_WORDS


# a line that ends inside its sentence, whatever the next line starts with: on a function word or inside an open
# parenthesis ("…equivalent to the\noriginal (see the\nPragmatism\nsection for details).", Markdown wrapped before a
# link), which no heading ends with
_ENDS_MIDWAY = re.compile(
    r"\b(?:the|an?|of|to|and|or|in|on|for|with|by|from|see|le|la|les|de|des|du|et|ou|à)\s*$|\([^()]*$"
)


def _lines(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Cut one sentence span at the line breaks that end a heading, a label or a list item; each piece says
    whether it was a list item."""
    bounds: list[tuple[int, int]] = []
    cursor = start
    while True:
        newline = text.find("\n", cursor, end)
        if newline < 0:
            bounds.append((cursor, end))
            break
        bounds.append((cursor, newline))
        cursor = newline + 1
    pieces: list[tuple[int, int]] = []
    piece_start = bounds[0][0]
    for (s, e), (ns, ne) in zip(bounds, bounds[1:], strict=False):
        line, nxt = text[s:e].strip(), text[ns:ne].strip()
        if not line or not nxt:
            continue
        breaks = (
            _MARKER.match(nxt) is not None
            or "|" in line
            or "|" in nxt
            or (
                not nxt[0].islower()
                and not ENDS_SENTENCE.search(line)
                and is_label(line, "")
                and not _ENDS_MIDWAY.search(line)
            )
        )
        if breaks:
            pieces.append((piece_start, e))
            piece_start = ns
    pieces.append((piece_start, end))
    out = []
    for s, e in pieces:
        while s < e and text[s].isspace():
            s += 1
        marker = _MARKER.match(text, s, e)
        item = bool(marker and marker.end() < e and not marker.group().startswith("#"))  # "## Title": a heading
        if marker and item:
            s = marker.end()
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e, item))
    return out


def _without(
    pieces: Sequence[tuple[int, int, bool]], text: str, cut: Sequence[tuple[int, int]]
) -> list[tuple[int, int, bool]]:
    """The parts of ``pieces`` outside the spans ``cut``, trimmed of spaces."""
    out = []
    for s, e, item in pieces:
        bits = [(s, e)]
        for cs, ce in cut:
            bits = [b for bs, be in bits for b in ((bs, min(be, cs)), (max(bs, ce), be)) if b[0] < b[1]]
        for bs, be in bits:
            while bs < be and text[bs].isspace():
                bs += 1
            while be > bs and text[be - 1].isspace():
                be -= 1
            if bs < be:
                out.append((bs, be, item))
    return out


def _units(text: str) -> tuple[list[tuple[int, int, bool]], set[int]]:
    """A snippet's answer units: its sentences, cut by :func:`_lines`, and each line of a listing whole (the
    second value: where those start)."""
    pieces = [piece for s, e in sentence_spans(text) for piece in _lines(text, s, e)]
    listing = listing_lines(text)
    if not listing:
        return pieces, set()
    return sorted([*_without(pieces, text, listing), *((s, e, False) for s, e in listing)]), {s for s, _ in listing}


def _with_descriptions(text: str, units: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
    """``units`` with a command's synopsis line (:func:`~assistant_bridge.text.synopsis_line`: "unset: unset
    [-fnv] [name]") joined to the sentence after it, the first of its description ("Remove each variable or
    function name."): one answer unit, as an option's term and its description on one line are."""
    out: list[tuple[int, int, bool]] = []
    skip = False
    for i, (start, end, item) in enumerate(units):
        if skip:
            skip = False
            continue
        if (
            i + 1 < len(units)
            and synopsis_line(text[start:end])
            and not entry_term(text[units[i + 1][0] : units[i + 1][1]])
        ):
            out.append((start, units[i + 1][1], item))
            skip = True
        else:
            out.append((start, end, item))
    return out


def _prose_follows(text: str, end: int) -> bool:
    """The next non-blank line after ``end`` is a sentence (it ends like one), not a command or code."""
    following = next((line.strip() for line in text[end:].split("\n") if line.strip()), "")
    return bool(ENDS_SENTENCE.search(following))


def candidates(snippets: Sequence[Snippet]) -> list[Candidate]:
    """Every sentence of every snippet, in order, cut at headings and list items, list markers removed."""
    out: list[Candidate] = []
    for k, snippet in enumerate(snippets):
        spans, listed = _units(snippet.text)
        spans = _with_descriptions(snippet.text, spans)
        headers = _table_headers([snippet.text[start:end] for start, end, _ in spans])
        for position, (start, end, item) in enumerate(spans):
            text = snippet.text[start:end]
            first_char = text[0]
            fragment = start not in listed and (
                (position == 0 and first_char.isalpha() and first_char.islower())
                or (position == len(spans) - 1 and len(spans) > 1 and not ENDS_SENTENCE.search(text))
            )
            # a list item that says something ("Follows the CommonMark spec for baseline parsing") is an
            # answer unit even without a full stop, and so is a line of a listing (".dump ?OBJECTS?   Render
            # database content as SQL"); a short item ("The Live demo") stays a label
            # a row of a table with a header row says what the header's columns name ("Type | Description" over
            # "boolean | Holds "true" or "false"."): it answers as a sentence does, however short its cells
            label = (
                is_label(text, snippet.title)
                and not (item and len(_fold(text).split()) >= _ITEM_WORDS)
                and start not in listed
                and position not in headers
            )
            if not label and introduces(text) and _prose_follows(snippet.text, end):
                label = True  # "please follow these rules:" before sentences: the sentences answer, not it
            toks = terms(text)
            out.append(
                Candidate(
                    k,
                    position,
                    start,
                    end,
                    text,
                    frozenset(toks),
                    fragment,
                    label,
                    entry_term(text),
                    item,
                    frozenset(itertools.pairwise(toks)),
                    start in listed,
                    headers.get(position, -1),
                )
            )
    return out


_TABLE_ROWS_MIN = 2  # a table's rows under its header row: one row under a line is no table ("ls | grep foo")


def _header_row(row: str) -> bool:
    """Each cell of ``row`` is a few words: the names of a table's columns."""
    return all(len(_fold(cell).split()) < _ROW_CELL_WORDS for cell in row.split(TABLE_CELL))


def _table_headers(units: Sequence[str]) -> dict[int, int]:
    """The rows of the tables ``units`` (a passage's units, in order) hold, each with its table's header row: a
    table is a run of units with the same number of cells (ingestion writes :data:`~assistant_bridge.text.TABLE_CELL`
    between a row's cells) that starts after a unit of the passage, so that its first row is the one the document
    put first (a passage that opens with rows may have been cut from a table whose header is elsewhere); its header
    is that first row when it reads as one, each cell a few words ("Type | Description", not
    "'keyword' | A keyword in single quotes is a string literal."), and it needs at least :data:`_TABLE_ROWS_MIN`
    rows under it. ``{row position: header position}``."""
    out: dict[int, int] = {}
    cells = [u.count(TABLE_CELL) + 1 if TABLE_CELL in u else 0 for u in units]
    start = 1
    while start < len(units):
        end = start
        while end < len(units) and cells[end] and cells[end] == cells[start]:
            end += 1
        if cells[start] and not cells[start - 1] and end - start > _TABLE_ROWS_MIN and _header_row(units[start]):
            out.update((row, start) for row in range(start + 1, end))
        start = max(end, start + 1)
    return out


def section_match(cands: Sequence[Candidate], relevance: np.ndarray, snippets: Sequence[Snippet]) -> np.ndarray:
    """How well the heading above each sentence matches the query, fading with the distance to it.

    A heading names what the sentences under it are about ("Resetting a forgotten password", "■ パスワードを
    忘れた場合"); the answer to a question that matches it is usually the first sentences below it. The
    document's title is not a section heading (it is above everything), nor is a line that a sentence ending with a
    colon introduces ("For users, install the last published version from PyPI:" then ``pip install threadpoolctl``),
    unless it introduces in its turn ("Voici ce que vous devez faire… :" then "pour un nouveau correctif :"), nor
    a command at a shell prompt (``$ pip install 'uvicorn[standard]'``)."""
    out = np.zeros(len(cands))
    heading, distance = 0.0, 0
    for i, c in enumerate(cands):
        first = i == 0 or c.snippet != cands[i - 1].snippet
        if first:
            heading, distance = 0.0, 0
        if c.label:
            folded = _fold(c.text)
            # list numbers ("1.") and table rows are not headings; the title is above everything; what a sentence
            # introduces is what it says, not a heading
            introduced = not first and introduces(cands[i - 1].text) and not introduces(c.text)
            prompted = c.text.startswith("$ ")  # a command at a shell prompt: what the text says to type
            if (
                any(ch.isalpha() for ch in folded)
                and "|" not in c.text
                and folded != _fold(snippets[c.snippet].title)
                and not (introduced or prompted)
            ):
                heading, distance = max(0.0, float(relevance[i])), 0
            continue
        distance += 1
        out[i] = heading / distance
    return out


def flatten(text: str) -> str:
    """One line: line breaks and indentation become one space, a line break between two Japanese or Chinese
    characters none (:func:`~assistant_bridge.text.unwrap_unspaced`)."""
    return _BREAK.sub(" ", unwrap_unspaced(text))


def query_terms(query: str) -> set[str]:
    """The query's :func:`terms` without question words, all-hiragana bigrams (Japanese particles and endings
    such as ですか) and bigrams holding a Japanese question word's kanji (何 "what", 誰 "who": "は何", "何で")."""
    # "not portable" asks what "non-portable" says too (:data:`_NEGATED`)
    negated = {_stem(f"non{w}") for word in _NOT_WORD.findall(query) if (w := word.casefold()) not in STOPWORDS}
    return {
        t
        for t in terms(query)
        if t not in QUESTION_WORDS and not HIRAGANA_ONLY.match(t) and not any(c in _JA_QUESTION_KANJI for c in t)
    } | negated


_WHICH = frozenset({"which", "what", "quel", "quell", "quels"})  # "which option…": asks, does not describe
# "Which option lets me…", "Quelle option permet de…", "Which option makes the shell stop…": the verb that frames
# the question, not what the option does
_FRAME_VERBS = re.compile(r"\b(?:lets?|allows?|makes?|permet(?:tent)?|permettre)\b", re.IGNORECASE)


def _option_names(term: str) -> set[str]:
    """The options ``term`` names; :data:`OPTION_WORD` stops before "=NUM" and "[=WHEN]"."""
    return set(OPTION_WORD.findall(term))


def same_option(a: str, b: str) -> bool:
    """Two entry terms name an option in common ("--rsyncable" and "--rsyncable"; "-x, --one-file-system" and
    "--one-file-system")."""
    return bool(_option_names(a) & _option_names(b))


def answer_type_terms(query: str) -> set[str]:
    """The :func:`terms` of the words by which the query asks for a kind of entry ("option", "flag",
    "variable"…) and of the verb that frames such a question ("lets", "allows", "permet de"): a sentence that
    only talks about options holds them, the entry that answers may not ("cette option permet à rsync…" is not
    the answer to "Quelle option de gzip permet de décompresser ?"). A query that asks for another kind of thing
    asks with none of them: "Which bash builtin moves the positional parameters to the left?" asks for a builtin,
    and the parameters are what it moves."""
    kind = asked_kind(query)
    if kind is not None and not (ASKS_OPTION.search(kind) or ASKS_NAME.search(kind)):
        return set()
    found = ASKS_OPTION.findall(query) + ASKS_NAME.findall(query)
    return _terms_of(found + _FRAME_VERBS.findall(query)) | _WHICH if found else set()


def command_terms(query: str) -> set[str]:
    """The :func:`terms` of the words by which the query asks for a command or a keyword ("Which tmux command…")."""
    return _terms_of(ASKS_COMMAND.findall(query))


def _terms_of(words: Iterable[str]) -> set[str]:
    """The :func:`terms` of each of ``words``, together."""
    return {t for word in words for t in terms(word)}


_NAME_WORD = re.compile(r"\w[-_.]\w|[a-z][A-Z]")  # "charset-normalizer", "orjson.dumps", "ServerAlive"


def page_terms(query: str, titles: Sequence[str]) -> list[frozenset[str]]:
    """Per snippet (``titles``, one each), the terms every sentence of it says without writing them: the name
    of the manual page it comes from, when the query names that page. "How do I make the iperf3 server send
    data to the client instead?" is about iperf3 in each sentence of iperf3(1), not most in the ones that
    happen to write "iperf3" ("If the iperf3 server is running on a non-default TCP port…")."""
    named = named_manual_pages(query, titles)
    return [
        frozenset(terms(page)) if (page := manual_page_name(title)) is not None and page in named else frozenset()
        for title in titles
    ]


def entry_word_share(query: str, page: str, held: Sequence[frozenset[str]]) -> np.ndarray:
    """For each entry of a page (``held``: the :func:`terms` of each), the share of the query's words it holds,
    each word weighed by its idf among the page's entries. The words by which the query asks for an entry
    ("which option") and the page's name (``page``: "tcpdump") are not counted: every entry is an option of it.
    "Which tcpdump option reads packets from a saved capture file?" holds "read" in ``-r file: Read packets from
    file`` and not in ``-w file: Write the raw packets to file``, which a dense vector of either ranks alike."""
    wanted = _asked_words(query, page)
    bases = _word_bases(query)
    forms = {t: {t} | bases.get(t, set()) for t in wanted}
    count = len(held)
    holds = {t: [bool(f & h) for h in held] for t, f in forms.items()}
    idf = {t: max(0.0, math.log((count + 1) / (sum(holds[t]) + 0.5))) for t in wanted}
    total = sum(idf.values())
    if total <= 0:
        return np.zeros(count)
    return np.array([sum(idf[t] for t in wanted if holds[t][i]) / total for i in range(count)], dtype=np.float64)


_STOP_TERMS = frozenset(_terms_of(STOPWORDS))
# the words that frame a question rather than say what it is about ("What happens when…", "Which … does …", "How
# many…", "What does … give?"): documents seldom write them, so their idf among the candidate sentences is high,
# yet a sentence that holds them answers no better; they weigh ``Tuning.frame_term_weight`` of their idf in the
# coverage.
# Chosen on the real-documents questions of the older splits (the words their questions write and their answering
# sentences seldom do; ``bench/sentence_weights.py``)
FRAME_TERMS = frozenset(
    _terms_of("what which does their its they them there you your happen happens give given make many get".split())
)


def asked_coverage(query: str, texts: Sequence[str], titles: Sequence[str] = ()) -> float:
    """The largest share of the query's terms (stop words and the words by which it asks for a kind of thing
    aside) that one sentence of ``texts`` holds: 1.0 when a sentence says every word the question says, low when
    the passages are about its subject but no sentence speaks of what it asks ("What is the population of
    Ghana's capital?" over a paragraph on Ghana's history). 1.0 for a query without such terms.

    ``titles`` (one per text, optional): a sentence of a manual page the query names holds that page's name
    without writing it (:func:`page_terms`, as the generator reads it): "-r  Recursively copy entire
    directories." in scp(1) holds "scp" of "How do I copy a directory to another machine with scp?"."""
    asked = query_terms(query) - _STOP_TERMS - answer_type_terms(query)
    if not asked:
        return 1.0
    implied = page_terms(query, titles) if len(titles) == len(texts) else [frozenset()] * len(texts)
    cands = candidates([Snippet(text, "", i) for i, text in enumerate(texts)])
    # a Japanese question's words are its kanji and katakana words and the names it writes in Latin letters; a
    # sentence without Chinese or Japanese characters holds at most the names, each of its other words counts as
    # one word it lacks, not as the character pairs it is matched by: "iperf3 で UDP を使うオプションは？" asks
    # with "iperf3" and "UDP" alone, which iperf3(1)'s "-u, --udp: use UDP rather than TCP" holds
    latin = {t for t in asked if not _CJK_RUN.match(t)}
    words = max(1, len(latin) + len(_content_runs(query))) if latin != asked else len(asked)
    return max(
        (
            len(asked & (c.terms | implied[c.snippet])) / len(asked)
            if writes_cjk(c.text)
            else len(latin & (c.terms | implied[c.snippet])) / words
            for c in cands
        ),
        default=0.0,
    )


def asked_words(query: str, page: str) -> frozenset[str]:
    """The words that say what the query asks of a page: its terms but stop words, the words by which it asks for
    an entry and the page's name (``page``): "encrypts", "compressed", "file" and "password" for "Which zstd
    option encrypts the compressed file with a password?" and zstd(1). Those a page never uses (none of the
    :func:`terms` of its whole text) say it lacks what was asked ("encrypts" and "password" there)."""
    return frozenset(_asked_words(query, page) - _STOP_TERMS)


# an English inflection a word of the query and a word of a page may differ by: "reading" and "read", "grows"
# and "growing", which the five-letter cut of :func:`terms` keeps apart ("readi" and "read", "grow" and "growi")
_INFLECTION = re.compile(r"(?<=[a-z]{3})(?:ing|ed|es|(?<!s)s)$")
_SILENT_E = re.compile(r"(?<=[a-z]{2})e$")  # "save" and "saved", "file" and "files": "sav", "fil"


def _base(word: str) -> str:
    """The term of a word without one English inflection (:data:`_INFLECTION`)."""
    return "~" + _stem(_SILENT_E.sub("", _INFLECTION.sub("", word)))


def _word_bases(query: str) -> dict[str, set[str]]:
    """Each term of the query's words (:func:`_stem`) with the forms of those words without an inflection
    (:func:`_base`): "saves" gives "save" and "~sav"."""
    out: dict[str, set[str]] = {}
    for word in _WORDS.findall(unicodedata.normalize("NFKC", query).casefold()):
        out.setdefault(_stem(word), set()).add(_base(word))
    return out


def base_terms(text: str) -> frozenset[str]:
    """The terms of ``text``'s words without one English inflection (:data:`_INFLECTION`): "grow" for "grows"
    and "growing" alike, "read" for "reads" and "reading"."""
    return frozenset(_base(w) for w in _WORDS.findall(unicodedata.normalize("NFKC", text).casefold()))


def unknown_words(query: str, asked: frozenset[str], page_terms: frozenset[str], page_bases: frozenset[str]) -> int:
    """How many of the ``asked`` words of ``query`` (:func:`asked_words`) a page never uses: neither their term is
    among the ``page_terms`` (:func:`terms` of its whole text) nor their form without an inflection among its
    ``page_bases`` (:func:`base_terms`): "keeps reading a file as it grows" and less(1)'s "read" and "growing"
    share every word."""
    missing = asked - page_terms
    if not missing:
        return 0
    bases = _word_bases(query)
    return sum(1 for t in missing if not bases.get(t, set()) & page_bases)


def holds_asked_word(query: str, text: str) -> bool:
    """For a query that asks the name of a kind of thing (:func:`~assistant_bridge.text.asked_kind`: "Which jq
    option reads YAML input?"), whether ``text`` holds one of the words it asks with (:func:`asked_words`, less
    the programs it names), in any inflection: "--version: Output the jq version and exit with zero." holds none
    of "reads", "YAML" and "input", and answers another question. True for any other query, and for one that asks
    with no such word."""
    if asked_kind(query) is None:
        return True
    named = {t for program in asked_programs(query) for t in terms(program)}
    asked = asked_words(query, "") - named
    return not asked or unknown_words(query, asked, frozenset(terms(text)), base_terms(text)) < len(asked)


# a Japanese word that says something: a run of kanji ("暗号化", "整合性") or of katakana ("パスワード"); hiragana
# writes the grammar between them
_CONTENT_RUN = re.compile(r"[\u4e00-\u9fff々〆]{2,}|[\u30a1-\u30fa\u30fc]{2,}")


def _content_runs(query: str) -> list[str]:
    """The kanji and katakana words of a Japanese query (:data:`_CONTENT_RUN`), without the words by which it asks
    for an entry ("オプション", "変数")."""
    plain = unicodedata.normalize("NFKC", query)
    for asks in (ASKS_OPTION, ASKS_NAME, ASKS_COMMAND):
        plain = asks.sub(" ", plain)
    return _CONTENT_RUN.findall(plain)


def unknown_runs(query: str, normal_page: str) -> tuple[int, int]:
    """For a Japanese query, how many of its kanji and katakana words (:data:`_CONTENT_RUN`) a page never writes
    (``normal_page``: its whole text, NFKC), and how many it has, leaving out the words by which it asks for an
    entry ("オプション", "変数"): "gzip でファイルをパスワードで暗号化するオプションは？" has two of three ("パスワード",
    "暗号化"; gzip(1) writes "ファイル"). Japanese writes no spaces between words, so the runs stand for words; a
    page writes a word the query shares whole."""
    runs = set(_content_runs(query))
    return sum(run not in normal_page for run in runs), len(runs)


def _asked_words(query: str, page: str) -> set[str]:
    """The query's terms that say what it asks of a page's entries: not the words by which it asks for an entry
    or a command, nor the page's name. Of a Japanese query, only the character pairs inside its words
    (:func:`_content_runs`: "伸長", not "で伸" or "るオ", which straddle a particle)."""
    asked = query_terms(query) - answer_type_terms(query) - command_terms(query) - set(terms(page))
    if not writes_cjk(query):
        return asked
    pairs = {run[i : i + 2] for run in _content_runs(query) for i in range(len(run) - 1)}
    return {t for t in asked if not _CJK_RUN.match(t) or t in pairs}


# "Which tool converts RPM packages…?", "What program…", "Quel outil…", "…するツールは？": the answer is a thing's name
_ASKS_TOOL = re.compile(
    r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:tools?|programs?|utilit(?:y|ies)|scripts?|commands?|packages?|"
    r"helpers?|daemons?)\b|\bquel(?:le)?s?\s+(?:outils?|commandes?|programmes?|utilitaires?|scripts?|paquets?)\b|"
    r"(?:ツール|コマンド|プログラム|ユーティリティ|スクリプト)(?:は|を使)",
    re.IGNORECASE,
)
# a sentence whose subject is a name written in lower case: "alien converts binary packages…", "dpkg-repack
# creates…", "duck, the Debian Url ChecKer, processes…", ".dump renders…"
_NAME_SUBJECT = re.compile(r"\.?[a-z][\w.+-]*(?=[\s,:(])")
# a command line written in a sentence: a lower-case name, not a stop word ("the --reload flag"), and an option
# ("…in a Debian archive file: dpkg-deb --contents foo_VVV-RRR.deb")
_WRITES_COMMAND = re.compile(r"(?<![\w./-])([a-z][\w.+-]*)\s+--?[A-Za-z]")


def names_subject(query: str, cands: Sequence[Candidate]) -> np.ndarray:
    """For a query that asks which tool, program, script, package or command does something
    (:data:`_ASKS_TOOL`), 1.0 for each sentence whose subject is a name written in lower case, as a manual
    writes a command ("alien converts binary packages between various packaging formats, including Debian,
    RPM…"), and not a name the query writes itself, nor a stop word ("will extract the package…" goes on after
    a line of code), nor a sentence cut by the chunk's start; and for each sentence that writes a command line
    (:data:`_WRITES_COMMAND`: "Determine what files are contained in a Debian archive file: dpkg-deb --contents
    foo_VVV-RRR.deb"), whatever program it runs; else 0. Such a sentence answers with the name; "There are
    multiple tools that are used to manage Debian packages" only talks about tools."""
    if not _ASKS_TOOL.search(unicodedata.normalize("NFKC", query)):
        return np.zeros(len(cands))
    asked = query.casefold()
    words = {_bare(w) for w in _NAME_TOKEN.findall(asked)}
    out = np.zeros(len(cands))
    for i, c in enumerate(cands):
        match = _NAME_SUBJECT.match(c.text)
        name = match.group() if match else ""
        if name and name not in STOPWORDS and not c.fragment and not c.label and name.casefold() not in asked:
            out[i] = 1.0
        elif c.header >= 0 and any(
            (m := _NAME_SUBJECT.match(cell + " ")) and m.group() not in STOPWORDS and m.group() not in words
            for cell in c.text.split(TABLE_CELL)
        ):
            # a table row names a thing in any of its cells ("route(8) | ip route | routing table entry"), a name
            # the query does not write as a word of its own ("ip", though "iproute2" holds it)
            out[i] = 1.0
        elif not c.label and any(m.group(1) not in STOPWORDS for m in _WRITES_COMMAND.finditer(c.text)):
            out[i] = 1.0
    return out


# a word of a sentence as a name can be written: "nmudiff", "debian-vote@lists.debian.org", "$TMPDIR", "`uscan`"
_NAME_TOKEN = re.compile(r"[^\s,;:()\[\]\"“”‘’«»]+")
# a name written as one: with a hyphen, an underscore, a dot, a digit, a sigil or a capital after its first letter
_IDENTIFIER = re.compile(r"[-_.@$/\d]|.[A-Z]")
# words that qualify a kind without naming one: "the following script", "a helper package", "la même commande"
_NOT_A_NAME = frozenset(
    "following same new other separate special whole given first second last next previous appropriate relevant "
    "correct right proper official default standard main useful helpful additional extra single multiple several "
    "many various different specific particular existing old current latest above below such only own good best "
    "simple small large public private internal external normal regular optional required shell helper wrapper "
    "maintainer this that these those each every any some another its their your our suivante même nouvelle "
    "nouveau autre".split()
)


_ARTICLES = frozenset("the a an le la les l' un une".split())
_ENTRY_KIND = re.compile(rf"{KIND_PREFIX}?(?:option|command|keyword|directive|commande|variable)", re.IGNORECASE)


def _bare(word: str) -> str:
    """A word without the quotes and the punctuation around it and without its "'s" ("`uscan`", "Debian's")."""
    return word.strip("`'.!?").removesuffix("'s")


def _qualified_name(word: str, asked: set[str]) -> bool:
    """``word``, beside the kind a question asks for, names one: not a word of the question, a stop word or a
    qualifier (:data:`_NOT_A_NAME`)."""
    core = _bare(word)
    folded = core.casefold()
    return (
        len(core) > 1
        and folded not in asked
        and folded not in STOPWORDS
        and folded not in _NOT_A_NAME
        and any(ch.isalpha() for ch in core)
    )


def names_asked_kind(query: str, cands: Sequence[Candidate]) -> np.ndarray:
    """For a query that asks the name of a kind of thing (:func:`~assistant_bridge.text.asked_kind`: "Which script
    helps send the patch of a non-maintainer upload?", "On which mailing list…"), 1.0 for each sentence that
    writes a name beside that kind: right before it ("The nmudiff script in the devscripts package might be
    helpful.", "…discussed on the debian-vote@lists.debian.org mailing list", "the auto_vacuum pragma", a word the
    query writes skipped; a plain word only after an article), or right after it when written as one name ("the
    script nmu-send.sh"); else 0. Such a sentence answers with the name; "the salvage bug… send an nmudiff" only
    mentions one. An option, a command, a keyword or a variable is asked of its entry (:func:`entry_match`): 0.
    A file's or a directory's name is its path: for a query that asks which file or directory, or where something
    is kept (:func:`asks_path`: "Which file holds the hostname…?"), 1.0 for each sentence that writes an absolute
    or home path ("…the name stored in "/etc/hostname"."), not a URL's."""
    if asks_path(query):
        return np.array([1.0 if _PATH.search(c.text) else 0.0 for c in cands])
    kind = asked_kind(query)
    if kind is None or _ENTRY_KIND.match(kind):
        return np.zeros(len(cands))
    asked = {_bare(w).casefold() for w in _NAME_TOKEN.findall(query)}
    stem = kind.casefold().split()[-1].rstrip("s")
    out = np.zeros(len(cands))
    for i, c in enumerate(cands):
        if c.label:
            continue
        words = _NAME_TOKEN.findall(unicodedata.normalize("NFKC", c.text))
        for j, word in enumerate(words):
            if word.casefold().rstrip(".!?").rstrip("s") != stem:
                continue
            first = j - 1 if kind.count(" ") and j and words[j - 1].casefold() == "mailing" else j
            before = [k for k in range(max(0, first - 2), first) if words[k].casefold() not in asked][-1:]
            names = [words[k] for k in before if _IDENTIFIER.search(words[k]) or _after_article(words, k)]
            names += [w for w in words[j + 1 : j + 2] if _IDENTIFIER.search(w)]
            if any(_qualified_name(w, asked) for w in names):
                out[i] = 1.0
                break
    return out


def _after_article(words: Sequence[str], k: int) -> bool:
    """``words[k]`` follows an article: "The nmudiff script", "le paquet" (not "the low level tools")."""
    return k > 0 and words[k - 1].casefold() in _ARTICLES


def writes_option(query: str, cands: Sequence[Candidate]) -> np.ndarray:
    """1.0 for a sentence that writes an option the query names and is not an entry (which :func:`entry_match`
    weighs): "Which package does uvicorn use for the --reload flag…" is answered by "the --reload flag in
    development mode will use watchfiles.", a list item of a README; else 0."""
    asked = _option_names(query)
    if not asked:
        return np.zeros(len(cands))
    return np.array([0.0 if c.entry else float(bool(asked & _option_names(c.text))) for c in cands])


def entry_match(query: str, cands: Sequence[Candidate], titles: Sequence[str] = ()) -> np.ndarray:
    """How much each definition entry answers the kind of thing the query asks for: 1.0 for an entry of an
    option the query names ("what does --key do") or whose long name the query spells out in its words
    ("make less ignore case": ``--ignore-case``; "le mode POSIX": ``--posix``), 0.75 for one that shares half of
    such a name's words, 0.5 for any other option entry when the query asks which option or flag does
    something, for a named entry when it asks for a variable or setting, or for a command's synopsis
    (:func:`~assistant_bridge.text.synopsis_entry`) or a help listing's line of a command when it asks for a
    command; 0 otherwise. A manual page's NAME line
    names the page, and is no entry of it ("Which rsyncd.conf parameter sets…" names rsyncd.conf(5)).

    A plain word that entries of several descriptions define is their argument's placeholder ("text: Append
    text…", "text: Insert text…" in sed(1)), which a query's words do not name.

    A long name is matched by the query's plain words only, not by the words of a name it holds
    ("charset-normalizer" does not ask for ``--normalize``), and only on a page the query names when the
    entry is on a manual page (``titles``, one per snippet: "indented output from orjson" does not ask for
    jq(1)'s ``--indent``), or names by another name that the passages write (:func:`_page_named_otherwise`)."""
    named = _option_names(query)
    asks_option = bool(ASKS_OPTION.search(query))
    asks_name = bool(ASKS_NAME.search(query))
    # "Which tmux command…", "Which sqlite3 dot-command…": the name of a command, not what a named one does
    asks_command = (kind := asked_kind(query)) is not None and ASKS_COMMAND.search(kind) is not None
    plain = " ".join(word for word in query.split() if not _NAME_WORD.search(word))
    words = {without_accents(t) for t in query_terms(plain) - answer_type_terms(query)}
    named_pages = named_manual_pages(query, titles) or _page_named_otherwise(query, cands, titles)
    spelled = [(page := manual_page_name(title)) is None or page in named_pages for title in titles]
    default = asks_default(query)
    # a plain word that several entries define, each otherwise, is the placeholder of their argument (sed(1)'s "a
    # text", "i text", "c text": "text: Append text…", "text: Insert text…"), not a command or statement of its own
    words_defined = ["" if c.entry else word_term(c.text) for c in cands]
    defined: dict[str, set[str]] = {}
    for c, word in zip(cands, words_defined, strict=True):
        if word:
            defined.setdefault(word, set()).add(c.text)
    out = np.zeros(len(cands))
    for i, c in enumerate(cands):
        if not c.entry:
            if (word := words_defined[i]) and len(defined[word]) == 1 and _names(query, word):
                out[i] = 1.0  # "Does bc's quit statement…": "quit: When the 'quit' statement is read…"
            elif c.listed and asks_command and not c.text.startswith("-"):
                out[i] = 0.5  # a command of a help listing (".archive ...   Manage SQL archives")
            continue
        if c.entry.startswith("-"):
            if named & _option_names(c.entry):
                out[i] = 1.0
                continue
            share = _name_share(words, c.entry) if c.snippet >= len(spelled) or spelled[c.snippet] else 0.0
            if default and not asks_option and not states_default(_entry_text(cands, i)):
                share = 0.0  # "What is ed's default prompt string?": not "-p STRING, --prompt=STRING: Specifies…"
            if share >= 0.5:
                out[i] = 0.5 + 0.5 * share
            elif asks_option:
                out[i] = 0.5
        elif c.snippet < len(titles) and _names_page(c.entry, titles[c.snippet]):
            continue  # a page's NAME line ("rsyncd.conf - configuration file for rsync…", a README's "HTTPX - A
            # next-generation HTTP client for Python."): no entry of it
        elif _names(query, c.entry):
            out[i] = 1.0
        elif asks_name or (asks_command and synopsis_entry(c.text)):
            out[i] = 0.5  # "Which tmux command renames a window?": "rename-window [-t target-window] new-name: …"
    return out


def _page_named_otherwise(query: str, cands: Sequence[Candidate], titles: Sequence[str]) -> set[str]:
    """The manual page every passage comes from, when the query asks an option of a program by another name that
    the passages write: "Which ripgrep option…" over rg(1), whose text says "ripgrep" (:func:`entry_match` then
    reads the entries' long names as it does for a page the query names). Empty otherwise."""
    pages = {manual_page_name(title) for title in titles}
    programs = {p.casefold() for p in asked_programs(query)}
    page = pages.pop() if len(pages) == 1 else None
    if page is None or not programs:
        return set()
    written = {w for c in cands for w in re.findall(r"[\w.+-]+", c.text.casefold())}
    return {page} if programs <= written else set()


def entry_sentences(cands: Sequence[Candidate], i: int) -> list[int]:
    """The sentences after ``cands[i]`` that its entry runs on with, as far as its snippet holds them: over its
    paragraphs up to the next entry, label or snippet ("… terminating the session.\n\nThe default value is
    3.")."""
    out: list[int] = []
    for j in range(i + 1, len(cands)):
        if cands[j].snippet != cands[i].snippet or cands[j].entry or cands[j].label:
            break
        out.append(j)
    return out


def _entry_text(cands: Sequence[Candidate], i: int) -> str:
    """The sentences of the entry ``cands[i]`` opens (:func:`entry_sentences`), as one text."""
    return " ".join(cands[j].text for j in [i, *entry_sentences(cands, i)])


_TITLE_WORD = re.compile(r"[\w.+]+")


def _names_page(term: str, title: str) -> bool:
    """``term`` is the name of the page titled ``title``: its manual page's name ("rsyncd.conf" for
    "rsyncd.conf(5): …") or a word of its title ("HTTPX" for "httpx-README")."""
    if term == manual_page_name(title):
        return True
    return term.casefold() in {w.casefold() for w in _TITLE_WORD.findall(title)}


_SHORT_OPTION_CHARS = 3  # "-nc", "-L": a letter or two; "-csv", "-html", "-newer" are names spelled with one dash


def _name_share(words: set[str], term: str) -> float:
    """The largest share of the words of one of the long options ``term`` names (``--ignore-case``: "ignore",
    "case", as :func:`terms` cuts them) that are among the query's ``words``; 0 for short options alone."""
    best = 0.0
    for name in _option_names(term):
        if not (name.startswith("--") or len(name) > _SHORT_OPTION_CHARS):
            continue
        parts = {t for t in terms(name.lstrip("-").replace("-", " ").casefold()) if not t.isdigit()}
        held = parts & words
        if held <= _GENERIC_NAME_TERMS:
            continue  # "shows numeric IP addresses" does not name ``--show-ips`` by its "show" alone
        if parts:
            best = max(best, len(held) / len(parts))
    return best


# the verbs many long options open with (``--show-ips``, ``--print-directory``, ``--list-keys``): a query that
# shares no other word of the name does not name it
_GENERIC_NAME_TERMS = frozenset(terms("show print display list use"))


def _names(query: str, term: str) -> bool:
    """The query names the entry's term (``ServerAliveCountMax``, ``max connections``) as a whole word; a
    function's entry by the function's name ("ifnull()" or "ifnull" names ``ifnull(X,Y)``)."""
    name = term.split("(", 1)[0] if re.match(r"[A-Za-z_][\w.]*\(", term) else term
    if name.isupper() and not query.isupper():
        # a name in capitals (an argument, "CLOSURE"; a keyword, "REPLACE") is named in capitals: "memory
        # allocated for a closure" uses the word, and the entry of ffi_prep_closure_loc's CLOSURE argument does
        # not answer it
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", query) is not None
    return re.search(rf"(?<![\w-]){re.escape(name.casefold())}(?![\w-])", query.casefold()) is not None


# "when" and "quand" ask when where they open the question or a clause of it ("When are reports due?", "And when
# does it expire?"); inside one they join two clauses ("Where do I send reports when filing many bugs?")
_ASKS_TIME = re.compile(
    r"(?:^|[,;]|\b(?:and|or|but|until|since|by|et|mais|depuis|jusqu'à)\b)\W*(?:when|quand)\b|"
    r"\b(?:deadline|due date|date limite|délai)\b|いつ|締め切り|締切|期限|期日",
    re.IGNORECASE,
)
# a date, a year or a length of time: "within 30 days", "in 1923", "d'ici le 15 mars", "三十日以内", "翌月二十五日"
_TIME = re.compile(
    r"\b(?:1[0-9]|20)\d\d\b|\d\s*(?:days?|weeks?|months?|years?|hours?|minutes?|jours?|semaines?|mois|ans?|"
    r"années?|heures?)\b|\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|janvier|février|mars|avril|mai|juin|"
    r"juillet|août|septembre|octobre|novembre|décembre|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)\b|"
    rf"[0-9{KANJI_DIGITS}]\s*(?:日|か月|ヶ月|カ月|週|年|時|分)",
    re.IGNORECASE,
)


# "whom should I contact", "where do I send bug reports", "which e-mail address", "à qui écrire", "連絡先": the
# answer is an address to write to
_ASKS_ADDRESS = re.compile(
    r"\bwhom?\b[^?]{0,60}?\b(?:contact|ask|write|e-?mail|notify|report)|\bwhere\b[^?]{0,60}?\b(?:send|report|"
    r"write|e-?mail|mail|submit)\b|\b(?:e-?mail|mail|contact) address|\bmailing list\b|\bà qui\b|\bqui contacter\b|"
    r"\badresse (?:e-?mail|électronique|de contact)|\bliste de diffusion\b|連絡先|問い合わせ先|宛先|メールアドレス|"
    r"メーリングリスト|誰に(?:連絡|相談|送)|どこに(?:送|報告|連絡)",
    re.IGNORECASE,
)
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# "Which file holds…", "In which directory…", "Where is … stored?", "Quel fichier…", "どのファイル…": a path
# answers it; not "Where does SQLite put a column…" nor "Where does the daemon log its messages…"
_ASKS_PATH = re.compile(
    r"\b(?:which|what(?:\s+is\s+the)?)\s+(?:(?!(?:a|an|the|does|do|did|is|are|was)\b)[\w-]+\s+)?"
    r"(?-i:files?|director(?:y|ies)|folders?|paths?)\b(?![\w-])"
    r"(?!\s+(?:formats?|systems?|types?|sizes?|names?|extensions?|modes?|permissions?|descriptors?|managers?)\b)|"
    r"\bwhere\b[^?]{0,80}?\b(?:stored|kept|located|placed|installed|saved)\b|"
    r"\bquel(?:le)?s?\s+(?:fichiers?|répertoires?|dossiers?|chemins?)\b|"
    r"\boù\b[^?]{0,80}?\b(?:stocké|conservé|placé|installé|enregistré|rangé|se trouve)|"
    r"どの(?:ファイル|ディレクトリ)|(?:ファイル|ディレクトリ)は(?:どこ|何)|どこに(?:インストール|保存|置|格納|配置)",
    re.IGNORECASE,
)
# an absolute or home path ("/etc/hostname", "~/.inputrc", "/usr/share/doc/"), not a URL's ("http://…/x")
_PATH = re.compile(r"(?<![\w/.:~])~?/[A-Za-z_.][\w.+-]*(?:/[\w.+*-]*)*")


def asks_time(query: str) -> bool:
    """The query asks when: a date, a year, a deadline, a length of time."""
    return _ASKS_TIME.search(query) is not None


def asks_path(query: str) -> bool:
    """The query asks which file or directory, or where something is kept: a path answers it."""
    return _ASKS_PATH.search(query) is not None


def asks_address(query: str) -> bool:
    """The query asks whom to write to or where to send something: an e-mail address answers it."""
    return _ASKS_ADDRESS.search(query) is not None


def asked_value_match(query: str, cands: Sequence[Candidate]) -> np.ndarray:
    """1.0 for each sentence holding what the query asks for: a number in digits when it asks for one
    (:func:`asks_quantity`), a date or a length of time when it asks when (:func:`asks_time`), an e-mail address
    when it asks whom to write to or where to send something (:func:`asks_address`); else 0. A sentence holding a
    number and the unit the query counts (:func:`asked_unit`: "how many days" and "X-day (X between 0 and 15)")
    gets 2.0, and so does one that writes the count in words with its unit
    (:func:`~assistant_bridge.text.writes_number`: "There are five conflict resolution algorithm choices"); a
    number in words alone is too common ("A total of twelve men have landed…" for a count of landings). A query
    that asks which option does something asks for no value, whatever it says ("Quelle option de grep affiche le
    nombre de lignes correspondantes ?")."""
    if (kind := asked_kind(query)) is not None and ASKS_OPTION.search(kind):
        return np.zeros(len(cands))
    if asks_quantity(query):
        unit = asked_unit(query)
        default = asks_default(query)

        def value(text: str) -> float:
            named = unit is not None and names_unit(text, unit)
            if holds_number(text):
                return 2.0 if named or (default and states_default_number(text)) else 1.0
            return 2.0 if named and writes_number(text) else 0.0

        return np.array([value(c.text) for c in cands])
    if asks_time(query):
        return np.array([1.0 if _TIME.search(c.text) else 0.0 for c in cands])
    if asks_address(query):
        return np.array([1.0 if _ADDRESS.search(c.text) else 0.0 for c in cands])
    return np.zeros(len(cands))


def defines(query: str, cands: Sequence[Candidate], titles: Sequence[str], filenames: Sequence[str]) -> np.ndarray:
    """For a query that asks only what a named thing is (:func:`~assistant_bridge.text.overview_subject`:
    "What does rsync do?"), how well each sentence of that thing's own documents (their titles name it,
    :func:`~assistant_bridge.text.titles_subject`) says it (:func:`~assistant_bridge.text.definition_kind`):
    1.0 for the first sentence of a snippet that says what it is ("Rsync is a fast and extraordinarily
    versatile file copying tool."), 0.8 for one that says what it does ("Tcpdump prints out a description…"),
    0.5 for a manual page's NAME line ("Wget - The non-interactive network downloader."); else 0. Of the
    sentences that say what it is or does, only a snippet's first counts: the later ones ("orjson serializes
    dataclasses natively") tell details. A README's line under its name that opens with an article says what it
    is (:func:`_tagline`), and any line under the title of a README the subject's by its file name
    (``filenames``, one per snippet). When no snippet is of the thing's own documents, the sentences of the others count
    alike when they open with the name itself: a standard's section says what one of its directories is for
    ("/opt is reserved for the installation of add-on application software packages"); "The VACUUM INTO command
    is transactional…" tells a detail of a thing the "VACUUM" page is about."""
    out = np.zeros(len(cands))
    subject = overview_subject(query)
    if subject is None:
        return out
    own = {c.snippet for c in cands if titles_subject(titles[c.snippet], subject, filenames[c.snippet])}
    told: set[int] = set()
    for i, c in enumerate(cands):
        if c.snippet in told or (
            c.snippet not in own and (own or _TAGLINE.match(c.text)) and not says_quality(subject, c.text)
        ):
            continue  # a sentence that says when a thing of a kind has a quality defines them anywhere
        titled = c.snippet in own and _tagline(titles[c.snippet], cands, i, False)
        kind = definition_kind(subject, c.text) or ("what" if titled or _tagline(subject, cands, i) else None)
        if kind is None and _after_syntax(subject, cands, i):
            kind = "does"
        if titled:  # the document's own opening line: its later passages tell details
            told |= {k for k, title in enumerate(titles) if title == titles[c.snippet]}
        if kind == "name":
            out[i] = NAME_LINE
        elif kind is not None:
            told.add(c.snippet)
            out[i] = 1.0 if kind == "what" else 0.8
    return out


NAME_LINE = 0.5  # what :func:`defines` gives a manual page's NAME line; a sentence that says what it is gets more
# what a reference writes under a syntax line to say what it does: "This pragma does…", "Cette commande…"
_THIS_THING = re.compile(r"^(?:This|Cette|Ce|Cet)\s+[^\W\d_]+\s", re.IGNORECASE)


def _after_syntax(subject: str, cands: Sequence[Candidate], i: int) -> bool:
    """``cands[i]`` opens with "This <thing>" right after a line of syntax of ``subject`` in its snippet
    (:func:`~assistant_bridge.text.documents_name`): "PRAGMA schema.integrity_check(TABLENAME)", then "This pragma
    does a low-level formatting and consistency check of the database." says what "PRAGMA integrity_check" does."""
    if i == 0 or cands[i - 1].snippet != cands[i].snippet or not _THIS_THING.match(cands[i].text):
        return False
    before = cands[i - 1].text
    return "\n" not in before.strip() and documents_name(subject, before)


_TAGLINE = re.compile(r"^(?:an?|the|une?)\s", re.IGNORECASE)  # "A fast, async-friendly rate limiter for Python"


def _tagline(subject: str, cands: Sequence[Candidate], i: int, article: bool = True) -> bool:
    """Whether ``cands[i]`` is the line a README puts right under its name to say what it is: it opens with an
    article and follows a heading that is the subject's name alone ("PyrateLimiter" / "A fast, async-friendly
    rate limiter for Python — pluggable algorithms and backends."). Without ``article``, any sentence right under
    that heading: the subject's own README titled by another name than the one asked ("Thread-pool Controls" /
    "Python helpers to limit the number of threads…", threadpoolctl's by its file name)."""
    if i == 0 or cands[i].label or cands[i].fragment or (article and not _TAGLINE.match(cands[i].text)):
        return False
    heading = cands[i - 1]
    return heading.snippet == cands[i].snippet and heading.label and match_form(heading.text) == match_form(subject)


# a shell command line: "pip install httpx", "$ python -m pip install rich", "sudo apt install tree"
_SHELL_LINE = re.compile(r"^(?:\$\s+)?(?:sudo\s+)?[a-z][\w.+-]*(?:\s+-m\s+[a-z][\w.-]*)?\s+[a-z][\w.+-]*(?:\s|$)")
_SHELL_LINE_WORDS = 12


def asked_commands(query: str, cands: Sequence[Candidate]) -> np.ndarray:
    """1.0 for each command line that holds every term of the query ("pip install httpx" for "How do I install
    httpx?", whose other words are question words), else 0. Such a line answers by itself, though it is short
    and has no sentence of its own (a label). A term kept whole ("pyratelimiter") is also held by its stem
    ("pyrate-limiter"); function words other than "what" and "which" are not asked of it ("pip install
    markdown-it-py[plugins]" for "How do I install markdown-it-py with its plugins?", not "pip install
    annotated-types" for "What is annotated-types?")."""
    wanted = query_terms(query) - (_STOP_TERMS - _WHICH)
    out = np.zeros(len(cands))
    if len(wanted) < 2:
        return out
    for i, c in enumerate(cands):
        text = c.text.strip()
        if (
            _SHELL_LINE.match(text)
            and len(text.split()) <= _SHELL_LINE_WORDS
            and not ENDS_SENTENCE.search(text)
            and all(t in c.terms or t[:STEM_CHARS] in c.terms for t in wanted)
        ):
            out[i] = 1.0
    return out
