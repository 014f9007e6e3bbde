"""The text rules every part of the service shares: script ranges, the sentence splitter and command-line options.

One place, so that a chunk boundary, a citation span, a generator's answer unit and a passage window agree on
where a sentence ends. The pre-filter's features keep their own frozen copy
(:mod:`assistant_bridge.filters.frozen_text`): the shipped filter models were trained on it.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

# --- scripts -------------------------------------------------------------------------------------------------
HIRAGANA = "\u3040-\u309f"
KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff"  # with the small katakana extension
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # extension A, unified, compatibility ideographs
HALFWIDTH_KATAKANA = "\uff66-\uff9f"
HANGUL = "\uac00-\ud7af"
KANA = HIRAGANA + KATAKANA
ITERATION_MARKS = "\u3005\u3006"  # 々 〆: parts of a Japanese word
JAPANESE_CHARS = HIRAGANA + KATAKANA + HAN + HALFWIDTH_KATAKANA
CJK_CHARS = JAPANESE_CHARS + HANGUL  # written without spaces between words: one token a character
HIRAGANA_ONLY = re.compile(rf"^[{HIRAGANA}]+$")
KANJI_DIGITS = "〇一二三四五六七八九十百千"  # a number written in kanji: "三十日", "二十五日"
TABLE_CELL = " | "  # what ingestion writes between the cells of a table row (HTML, Word, Markdown tables)
# the glyphs that mark the items of a list in any format (rendered HTML, a PDF's text layer, groff's output), and
# the dashes that open one in French typography and PDF manuals ("— les paquets Debian ne devraient…")
BULLETS = "•◦‣∙·●○■□◆◇▪▫▶►"
ITEM_DASHES = "–—"
# Japanese and Chinese text, with its punctuation and full-width forms, puts no space between words: a line break
# there joins without one (Korean puts spaces between words, so not Hangul)
_UNSPACED_CHARS = rf"{JAPANESE_CHARS}\u3000-\u303f\uff01-\uff60"  # CJK punctuation (々 〆 too), full-width forms
_UNSPACED = re.compile(rf"[{_UNSPACED_CHARS}]")
# a character of a word written in spaces: a letter, a digit or "_", not one of a Japanese or Chinese run
_LATIN_WORD_CHAR = rf"(?![{_UNSPACED_CHARS}])\w"
_UNSPACED_BREAK = re.compile(rf"(?<=[{_UNSPACED_CHARS}])[ \t]*\r?\n[ \t]*(?=[{_UNSPACED_CHARS}])")


def join_wrapped(left: str, right: str) -> str:
    """Two lines of one wrapped paragraph as one: a space between them, none where a Japanese or Chinese character
    ends ``left`` and another opens ``right`` ("…必要になる" and "が、crontab…" of a page wrapped at the terminal
    width are "…必要になるが、crontab…", not "…必要になる が、…", which splits the words the search and the
    answers match on)."""
    if not left or not right:
        return left or right
    if _UNSPACED.match(left[-1]) and _UNSPACED.match(right[0]):
        return left + right
    return f"{left} {right}"


def unwrap_unspaced(text: str) -> str:
    """``text`` without the line breaks (and the spaces around them) that fall between two Japanese or Chinese
    characters, as :func:`join_wrapped` joins two such lines: a paragraph wrapped at a fixed width ("…三十日以内に申"
    and "請してください") is one run of characters again. A blank line between them stays."""
    return _UNSPACED_BREAK.sub("", text)


# --- sentences -----------------------------------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof st sr jr vs etc eg ie al no nos fig figs vol inc ltd co corp dept approx est
    jan feb mar apr jun jul aug sep sept oct nov dec p pp cf ca mt ft av ave op resp env mme mlle""".split()
)
_CJK_STOP = "。！？．"
_CLOSERS = "\"'”’»)]」』）"
_FOOTNOTE_MARKS = "⁰¹²³⁴⁵⁶⁷⁸⁹"  # "…dépendants de l'architecture.⁴ Cette distinction…": the mark ends the sentence too
# French puts a (no-break) space before a closing »: it stays with the sentence
_LATIN_STOP = re.compile(
    rf"[.!?…]+(?:[{re.escape(_CLOSERS)}]|[\u00a0\u202f ]»)*[{_FOOTNOTE_MARKS}]*(?=\s)"
    rf"|[{_CJK_STOP}]+[{re.escape(_CLOSERS)}]*"
)
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_WORD_BEFORE = re.compile(r"((?:[^\W\d_]+\.)*[^\W\d_]+)\.?$")  # "etc", or dotted: "i.e", "e.g"
_LONG_SPLIT = re.compile(r"\n+|(?<=;)\s+")
MAX_SENTENCE_CHARS = 400


def _is_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    match = _WORD_BEFORE.search(text[max(0, dot - 12) : dot])
    if not match:
        return False
    last = match.group(1).rsplit(".", 1)[-1]
    if len(last) == 1 and last.isupper():  # initials: "J. K. Rowling"
        return True
    # "i.e." reads "ie": "The size of a SHA224 digest, i.e. 28." is one sentence
    return match.group(1).replace(".", "").casefold() in _ABBREVIATIONS and not text[dot - 1].isspace()


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _split_block(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    cursor = start
    for match in _LATIN_STOP.finditer(text, start, end):
        stop = match.end()
        is_cjk = text[match.start()] in _CJK_STOP
        if not is_cjk:
            nxt = stop
            while nxt < end and text[nxt].isspace():
                nxt += 1
            if nxt < end and text[nxt].islower():
                continue
            if _is_abbreviation(text, match.start()) and nxt < end:
                continue
            if nxt < end:
                _, colon, said = text[cursor : match.start()].rpartition(": ")
                if colon and "\n" not in said and len(said.split()) == 1:
                    continue  # a term's one word is no sentence: "--test, -t: Test. Check the compressed file integrity."
        span = _trim(text, cursor, stop)
        if span:
            out.append(span)
        cursor = stop
    span = _trim(text, cursor, end)
    if span:
        out.append(span)


_SPACE_RUN = re.compile(r"[ \t]{2,}")


def _split_long(text: str, span: tuple[int, int], out: list[tuple[int, int]], max_chars: int) -> None:
    start, end = span
    # a run of spaces (a code example's indentation, a listing's columns) is layout: it counts as one
    if end - start <= max_chars or len(_SPACE_RUN.sub(" ", text[start:end])) <= max_chars:
        out.append(span)
        return
    cursor = start
    for match in _LONG_SPLIT.finditer(text, start, end):
        piece = _trim(text, cursor, match.start() if text[match.start()] == "\n" else match.start())
        if piece:
            out.append(piece)
        cursor = match.end()
    piece = _trim(text, cursor, end)
    if piece:
        out.append(piece)


def sentence_spans(
    text: str, start: int = 0, end: int | None = None, *, max_chars: int | None = MAX_SENTENCE_CHARS
) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` into sentences and return their ``(start, end)`` offsets into ``text`` (end
    exclusive, trimmed of whitespace; together they cover every visible character).

    A sentence ends after ``.``, ``!``, ``?`` or ``…`` (and any closing quotes or brackets) followed by
    whitespace and a character that is not a lower-case letter, unless the dot ends a common abbreviation
    or an initial; after ``。``, ``！``, ``？`` or ``．`` always; and at a blank line. A sentence longer than
    ``max_chars`` (``None``: no limit) is further split at line breaks and semicolons (lists and tables often
    have no full stops).
    """
    stop = len(text) if end is None else end
    blocks: list[tuple[int, int]] = []
    cursor = start
    for match in _PARAGRAPH.finditer(text, start, stop):
        blocks.append((cursor, match.start()))
        cursor = match.end()
    blocks.append((cursor, stop))
    sentences: list[tuple[int, int]] = []
    for left, right in blocks:
        raw: list[tuple[int, int]] = []
        _split_block(text, left, right, raw)
        for span in raw:
            if max_chars is None:
                sentences.append(span)
            else:
                _split_long(text, span, sentences, max_chars)
    return sentences


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`sentence_spans`)."""
    return [text[s:e] for s, e in sentence_spans(text)]


# A line of a two-column listing, as a program's help prints it: a term of at most four words, its first with a
# letter (not a prompt, "...>", nor a line number), not the end of a sentence (an ellipsis may end it), then a
# gap of two or more spaces and its description, in words (".dump ?OBJECTS?     Render database content as SQL",
# "-v, --verbose   Print more", "init   Create an empty repository"); aligned code ("echo    'Loading Linux …'",
# "initrd  /boot/initrd.img") is not one.
_LISTING_LINE = re.compile(r"[ \t]*((?=\S*[^\W\d_])\S+(?: \S+){0,3}(?<![,;])(?<!\w\.) {2,}[^\W\d_]\S*\s+\S.*)")


def listing_lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each line of ``text`` that belongs to a listing: a two-column line (:data:`_LISTING_LINE`)
    next to another one (a lone line with a double space is prose typed so). Each is one answer unit, whatever
    its punctuation ("Stop after hitting an error.  Default OFF")."""
    lines: list[tuple[int, int] | None] = []
    cursor = 0
    for line in text.split("\n"):
        match = _LISTING_LINE.fullmatch(line.rstrip())
        lines.append((cursor + match.start(1), cursor + match.end(1)) if match else None)
        cursor += len(line) + 1
    return [
        span
        for i, span in enumerate(lines)
        if span and ((i > 0 and lines[i - 1]) or (i + 1 < len(lines) and lines[i + 1]))
    ]


# --- command-line options ------------------------------------------------------------------------------------
# an option as written ("-P", "--files0-from", "--max-count=NUM" up to its "="): a term of its own wherever words
# are matched (the generator's sentence terms, the in-process BM25 index), since "-P" is not "-p" and a
# one-letter option has no word at all
OPTION_WORD = re.compile(r"(?<![\w-])-{1,2}[A-Za-z0-9][\w-]*")


def option_words(text: str) -> list[str]:
    """The command-line options ``text`` names, as written (:data:`OPTION_WORD`)."""
    return OPTION_WORD.findall(unicodedata.normalize("NFKC", text))


# An option followed by one of these is the subject of a sentence, not a defined term: "--resolve can be used
# several times in a command line", "-L is ignored when…"
_FINITE_VERB = r"(?:can|cannot|may|might|must|will|would|should|is|are|was|were|does|has|have)\b"
# A definition entry: an option ("-l, --lines: print …", "--help display …", "-d --decompress: …", "-i or
# --ignore-case: …", "-T#, --threads=#: …", where "#" stands for a number), or an identifier defined after a
# colon or a dash ("CARGO_TARGET_DIR — Location of …", "opt-level: the optimization level"). It answers a
# question about its term although it is short and has no full stop, as a reference page writes it.
# an option's argument: "=FILE", "[=SUFFIX]", "[SUFFIX]", " NUM"; and, before another name of the option, " [jobs]"
# or " script-file" ("-j [jobs], --jobs[=jobs]", "-f script-file, --file=script-file": make(1), sed(1)), whose long
# name a question spells out in its words ("several jobs at once")
_OPTION_ARG = r"(?:\[?=[^\s,:]*\]?|\[[^\]\s]*\]|\s[A-Z][A-Z_]*|\s\[[^\]\s]*\](?=,\s*-)|\s[a-z][\w-]*(?=,\s*-))?"
_OPTION_TERM = re.compile(
    rf"^(-{{1,2}}[A-Za-z0-9?#][\w?#-]*{_OPTION_ARG}(?:(?:,\s*|\s+or\s+|\s+)-{{1,2}}[A-Za-z0-9?#][\w?#-]*{_OPTION_ARG})*)(?::\s+|\s+(?=\S)(?!{_FINITE_VERB}))"
    rf"(?=\S+\s+\S|[{CJK_CHARS}])"  # a description of words, or of CJK text (no spaces)
)
# an API reference's signature (Sphinx, JSDoc…) defines its name the same way: a dotted name and its parameters,
# their defaults nested in parentheses one deep ("shutil.which(cmd, mode=os.F_OK | os.X_OK, path=None): Return
# the path…", "fs.readFile(path[, options], callback): …")
_SIGNATURE = r"\((?:[^()\n]|\([^()\n]*\)){1,300}\)"
_NAMED_TERM = re.compile(
    # after a decorator's "@" or a "class" or "exception", of a qualified name only: "@functools.cache(…)", "class
    # subprocess.Popen(…)", not a line of source code ("class tqdm():")
    r"^(?:(?:@|(?:class|exception|async|coroutine)\s+)(?=[A-Za-z_]\w*\.))?"
    rf"(`?[A-Za-z_][\w.-]*(?:\([^()\s]{{0,24}}\)|{_SIGNATURE})?`?(?:\s[A-Za-z_][\w.-]*)?)"
    r"(?:\s*:\s+|\s+[—–]\s+|\s+-\s+)(?=\S+\s+\S)"
)
# what makes a defined term a name rather than a word: "CARGO_TARGET_DIR", "os.path", "ServerAlive", "opt-level",
# "VARCHAR", a call ("ifnull(X,Y)": a function's entry on a reference page)
_IDENTIFIER = re.compile(r"[_.]|[a-z][A-Z]|[a-z]-[a-z]|^[A-Z0-9]{2,}$|^`|\w\(")


# an Info manual's definition of an option, a test or an action, which names its kind first ("Option: -xdev,
# -mount: Don't descend directories on other filesystems.", "Test: -empty: True if the file is empty…")
_DEFINED_KIND = re.compile(r"(?:Option|Test|Action|Command|Primary|Switch|Flag): (?=-)")


# a command's definition as a GNU manual in HTML writes it: the command's name, then a line of its synopsis that
# repeats the name ("unset: unset [-fnv] [name]", "times: times", "source: source filename"), its description in
# the paragraphs below; not a sentence that opens with the term ("simple: simple ASCII characters")
_SYNOPSIS_TERM = re.compile(r"^([A-Za-z_][\w.-]*): \1(?=[ \t]*(?:\n|$)|[ \t][^\n]*[\[|…]| \S+[ \t]*(?:\n|$))")
# a command's definition as a manual page's list of commands writes it: the command's name and its synopsis, which
# opens with a bracketed flag, then the description after a colon or the command's alias ("rename-window [-t
# target-window] new-name: (alias: renamew) Rename the current window…", tmux(1)); the name is the term. Not a
# setting and its values ("status [off | on | 2]: Show or hide the status line")
_COMMAND_SYNOPSIS = re.compile(r"^([a-z][a-z0-9]*(?:-[a-z0-9]+)*)[ \t]+\[-[^\n:]*?(?::[ \t]+|[ \t]+(?=\(alias:))(?=\S)")


# a term that is a qualified name, a member of a module or a class, called or not: an API reference's entry
# ("functools.partial(func, /, *args, **keywords)", "PurePath.stem"), not a SQL function ("ifnull(X,Y)") nor a
# setting ("HashKnownHosts")
_QUALIFIED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(|$)")


def names_member(term: str) -> bool:
    """The entry term (:func:`entry_term`) names a member of a module or a class: an API reference's entry."""
    return _QUALIFIED_NAME.match(term) is not None


def synopsis_entry(text: str) -> bool:
    """``text`` opens with a command's synopsis, as a definition entry (:data:`_SYNOPSIS_TERM`,
    :data:`_COMMAND_SYNOPSIS`): the Bash Reference Manual's builtins, tmux(1)'s commands."""
    head = text.lstrip()
    return bool(_SYNOPSIS_TERM.match(head) or _COMMAND_SYNOPSIS.match(head))


# a plain lowercase word defined by a sentence after a colon, as an Info or HTML manual's table writes a command or
# a statement ("quit: When the 'quit' statement is read, the 'bc' processor is terminated…"); an entry only for a
# question that names the word (:func:`~assistant_bridge.generators.sentences.entry_match`): elsewhere such a word
# is as often a label of prose ("note: …", "example: …")
_WORD_TERM = re.compile(r"^([a-z][a-z_-]{1,30}):\s+(?=[A-Z]\S*\s+\S)")  # not a message ("xargs: warning: …")


def word_term(text: str) -> str:
    """The plain word ``text`` defines (:data:`_WORD_TERM`), or ""; never a note, a warning or the like."""
    match = _WORD_TERM.match(text.lstrip())
    return match.group(1) if match and match.group(1) not in _ADMONITION else ""


def synopsis_line(text: str) -> bool:
    """``text`` is a command's synopsis line and no more (:data:`_SYNOPSIS_TERM`), its further lines indented
    (mapfile's "[-t] [-u fd] [-C callback]…" under its first): its description follows."""
    first, *more = text.strip().split("\n")
    return bool(_SYNOPSIS_TERM.match(first)) and all(line[:1] in (" ", "\t") for line in more)


# the other forms of a function, a line each, above the one its description follows ("count(X)" above
# "count(*): The count(X) function returns…", "substr(X,Y,Z)" above "substr(X,Y): …" on SQLite's function pages):
# the entry is that of the last form, and starts with the first
_FORM_LINES = re.compile(
    r"^(?:[A-Za-z_][\w.]*\([^()\n]{0,40}\)[ \t]*\n){1,6}(?=[A-Za-z_][\w.]*\([^()\n]{0,40}\)[ \t]*:[ \t])"
)


def entry_term(text: str) -> str:
    """The term a definition entry defines, or "" when ``text`` is not one (see :data:`_OPTION_TERM`,
    :data:`_NAMED_TERM`, :data:`_SYNOPSIS_TERM`, :data:`_COMMAND_SYNOPSIS`; a function's other forms above it,
    :data:`_FORM_LINES`, are part of its entry)."""
    head = _FORM_LINES.sub("", _DEFINED_KIND.sub("", text.lstrip(), count=1), count=1)
    match = _OPTION_TERM.match(head)
    if match:
        return match.group(1)
    match = _NAMED_TERM.match(head)
    if match and _IDENTIFIER.search(match.group(1).split()[0]):
        return match.group(1).strip("`")
    match = _SYNOPSIS_TERM.match(head) or _COMMAND_SYNOPSIS.match(head)
    return match.group(1) if match else ""


# A document's option entries, as a manual page lists them: a paragraph that starts with an option's term
# ("-I, --head: Fetch the headers only!") and the paragraphs after it, up to the next one. Searched on their own
# by :meth:`~assistant_bridge.services.Services.with_option_entry`: a chunk holds a dozen of a long page's
# options, and a question about one of them does not find that chunk among the first results. A page of no
# options that defines named settings the same way (ssh_config(5)'s "HashKnownHosts: Indicates that…", SQL
# functions' "ifnull(X,Y): …") lists those as its entries, when it defines at least :data:`NAMED_ENTRIES_MIN` of
# them: one such paragraph in prose is not a list. A warning or a note ("NOTE: …") defines nothing. A page of
# options keeps its options only: its named entries (environment variables, curl's protocols, tmux's commands)
# would stand between an option and the rest of its description.
_PARAGRAPH_START = re.compile(r"(?:\A|\n[ \t]*\n)\s*(?=\S)")
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n")
ENTRY_HEAD_CHARS = 300  # enough of a paragraph to read its term and the start of its description
OPTION_ENTRY_MAX_CHARS = 1200  # an entry's text as it is embedded: its term, its description, an example
# more paragraphs that start like an option than any manual page has (curl: 273) is not a list of options (a
# generated file, a log): none are taken, so neither ingestion nor a search pays for thousands of them
OPTION_ENTRIES_MAX = 2000
NAMED_ENTRIES_MIN = 5
# a keyword of one capitalised word, defined by a sentence after a colon ("Port: Specifies the port number…")
_KEYWORD_TERM = re.compile(r"^([A-Z][a-z]{1,20}):\s+(?=[A-Z][a-z]+\s+\S)")
_ADMONITION = frozenset({"note", "notes", "warning", "caution", "important", "tip", "hint", "danger", "attention"})


# a numbered or Markdown heading on a paragraph of its own: "16.1 Options to 'sdiff'", "8.3 Invoking 'updatedb'",
# "## Usage"
_SECTION_HEADING = re.compile(r"(?:\A|\n\n)((?:\d+(?:\.\d+)*\.?|#{1,6}) [^\n]{1,78})(?=\n\n|\Z)")


def _listing_commands(text: str) -> list[tuple[int, int]]:
    """The lines of ``text``'s help listings (:func:`listing_lines`) that name a command, not an option, of runs of
    lines one under the other that name at least :data:`NAMED_ENTRIES_MIN` commands: a listing, not a few aligned
    lines of a program's output quoted here and there."""
    runs: list[list[tuple[int, int]]] = []
    for span in listing_lines(text):
        if runs and text.count("\n", runs[-1][-1][1], span[0]) == 1:
            runs[-1].append(span)
        else:
            runs.append([span])
    commands = [[(s, e) for s, e in run if text[s] != "-"] for run in runs]
    return [span for run in commands if len(run) >= NAMED_ENTRIES_MIN for span in run]


def option_entries(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each option entry of ``text`` (see above), at most :data:`OPTION_ENTRY_MAX_CHARS`
    long, in text order; none when there are more than :data:`OPTION_ENTRIES_MAX`. On a page of named
    entries, a keyword of one capitalised word defined the same way is one of them ("Port: Specifies the port
    number…" between ssh_config(5)'s "PermitRemoteOpen" and "PreferredAuthentications"); elsewhere such a word
    is a label of prose ("Example: …"). A page of options keeps the commands it defines with their synopses
    (:data:`_SYNOPSIS_TERM`: the Bash Reference Manual's builtins, whose options are entries too;
    :data:`_COMMAND_SYNOPSIS`: tmux(1)'s commands), when it defines at least :data:`NAMED_ENTRIES_MIN` of them,
    and so does any page the commands a help listing prints, a line each (:func:`_listing_commands`: the SQLite
    shell's dot-commands). An entry ends where the next one starts, or a numbered or Markdown section heading
    does; a listing's line ends with itself."""
    options: list[int] = []
    named: list[int] = []
    words: list[int] = []
    synopses: list[int] = []
    for match in _PARAGRAPH_START.finditer(text):
        start = match.end()
        head = text[start : start + ENTRY_HEAD_CHARS]
        end = _PARAGRAPH_END.search(head)
        paragraph = head[: end.start()] if end else head
        term = entry_term(paragraph)
        if term.startswith("-"):
            options.append(start)
        elif term and synopsis_entry(paragraph):
            synopses.append(start)
        elif term and term.casefold() not in _ADMONITION:
            named.append(start)
        elif (word := _KEYWORD_TERM.match(paragraph)) and word.group(1).casefold() not in _ADMONITION:
            words.append(start)
        if len(options) + len(named) + len(synopses) > OPTION_ENTRIES_MAX:
            return []
    if len(synopses) < NAMED_ENTRIES_MIN:
        named, synopses = named + synopses, []
    # the commands a help listing prints, a line each (".import FILE TABLE     Import data from FILE into TABLE",
    # the SQLite shell's .help): each line is a command's entry, kept like commands defined by their synopses
    listed = dict(_listing_commands(text))
    if len(listed) > OPTION_ENTRIES_MAX:
        listed = {}
    synopses = sorted({*synopses, *listed})
    starts = sorted(options + synopses)
    if not options and len(named) + len(synopses) >= NAMED_ENTRIES_MIN:
        starts = sorted({*named, *words, *synopses})
        if len(starts) > OPTION_ENTRIES_MAX:
            return []
    ends = [listed.get(start, after) for start, after in zip(starts, [*starts[1:], len(text)], strict=False)]
    # an entry also ends where the next section starts: the last option of sdiff's "9.1" is not followed by the
    # prose of "9.2 Merge Commands"
    sections = [m.start(1) for m in _SECTION_HEADING.finditer(text)]
    nxt = [bisect.bisect_right(sections, start) for start in starts]  # the first section after each entry starts
    ends = [min(end, sections[k]) if k < len(sections) else end for k, end in zip(nxt, ends, strict=True)]
    return [
        (start, len(text[start : min(end, start + OPTION_ENTRY_MAX_CHARS)].rstrip()) + start)
        for start, end in zip(starts, ends, strict=True)
    ]


ENTRY_HEAD_SENTENCES = 2


def entry_head(entry: str) -> str:
    """An option entry as its vector is made: its term and the first :data:`ENTRY_HEAD_SENTENCES` sentences of
    its description, which say what the option does ("-S, --size size: Limit results based on the size of files
    using the format <+-><NUM><UNIT>"); the rest (its units, its examples, its caveats) blurs the vector of one
    option into that of its neighbours."""
    spans = sentence_spans(entry)
    return entry[: spans[min(ENTRY_HEAD_SENTENCES, len(spans)) - 1][1]] if spans else entry


def without_accents(text: str) -> str:
    """``text`` with its combining accents dropped (``décompresser`` reads ``decompresser``), so that a French word
    meets the English name it was borrowed from."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


_POSSESSIVE = re.compile(r"\s*['’]\s*s\b")
_NOT_WORD = re.compile(r"[\W_]+")
_DOTTED = re.compile(r"\b(?:[^\W\d_]\.){2,}")
# where Latin letters or digits meet characters written without spaces: Japanese glues a name to the word after it
# ("debianディレクトリー", "Debianパッケージ"), which is still a word of its own
_SCRIPT_BOUNDARY = re.compile(rf"(?<=[a-z0-9])(?=[{CJK_CHARS}])|(?<=[{CJK_CHARS}])(?=[a-z0-9])")


def match_form(text: str) -> str:
    """``text`` for a phrase match that spelling and tokenisation do not defeat: NFKC, lower case, possessive
    ``'s`` dropped (``Huntington's`` and ``Huntington 's`` both read ``huntington``), dotted initials
    joined (``U.S.`` reads ``us``), a Latin word glued to Japanese text apart from it (``debianディレクトリー``
    reads ``debian ディレクトリー``), every run of punctuation and space one space, padded with spaces so that
    a phrase matches whole words only."""
    text = _POSSESSIVE.sub("", unicodedata.normalize("NFKC", text).lower())
    text = _DOTTED.sub(lambda m: m.group().replace(".", ""), text)  # U.S. → us, e.g. → eg
    text = _SCRIPT_BOUNDARY.sub(" ", text)
    return f" {_NOT_WORD.sub(' ', text).strip()} "


MANUAL_PAGE_NAME = r"[\w.+-]+"  # a command's name as its manual page's title spells it: "ssh-keygen", "g++"
MANUAL_SECTION = r"\(\d\w*\)"  # a manual page's section in its title: "(1)", "(3p)"
_MANUAL_PAGE_TITLE = re.compile(rf"\s*({MANUAL_PAGE_NAME})({MANUAL_SECTION})")  # "find(1): search for files…"


def manual_page_name(title: str) -> str | None:
    """The command a manual page's title names (``find`` for "find(1): search for files…"), else ``None``."""
    match = _MANUAL_PAGE_TITLE.match(unicodedata.normalize("NFKC", title))
    return match.group(1) if match else None


def manual_page_section(title: str) -> str | None:
    """The section of the manual page a title names (``1`` for "find(1): …", ``7`` for "gitfaq(7): …"), else
    ``None``."""
    match = _MANUAL_PAGE_TITLE.match(unicodedata.normalize("NFKC", title))
    return match.group(2)[1:-1] if match else None


# the manual page of a command's configuration file: ssh_config(5) for ssh, rsyncd.conf(5) for rsync
_CONFIG_PAGE = re.compile(r"(.+?)(?:d?_config|d?\.conf|\.cfg)")


# a file name, a path, a link or a version: a word inside one names no command ("les sources orig.tar.gz")
_DOTTED_TOKEN = re.compile(r"\S*\w[./]\w\S*")


def _words_form(message: str) -> str:
    """``message`` as :func:`match_form` spells it, without its file names, paths, links and versions
    (:data:`_DOTTED_TOKEN`): the words by which it names a program."""
    return match_form(_DOTTED_TOKEN.sub(" ", unicodedata.normalize("NFKC", message)))


def named_manual_pages(message: str, titles: Iterable[str]) -> set[str]:
    """The commands whose manual pages ``titles`` hold and that ``message`` names as a word: ``htop`` for "What
    is the default port of the htop web interface?" among the titles "wget(1): …" and "htop(1): …". A word
    inside a file name or a path is not one ("…inclure les sources orig.tar.gz" names no tar), unless the
    page's name is itself written so ("rsyncd.conf"). A command also names the page of its configuration file
    (:data:`_CONFIG_PAGE`): "How many times does ssh try to connect by default?" is answered by ssh_config(5)'s
    ``ConnectionAttempts``. A name the message writes only as a part of a longer one it names is not named by
    itself: "Which ssh_config keyword…" names ssh_config(5), not ssh(1)."""
    whole = match_form(message)
    words = _words_form(message)
    named: set[str] = set()
    written: dict[str, str] = {}  # the names the message writes, with the form they are written in
    for title in titles:
        name = manual_page_name(title)
        if not name:
            continue
        form = whole if _DOTTED_TOKEN.fullmatch(name) else words
        config = _CONFIG_PAGE.fullmatch(name)
        if mentions(form, name):
            written[name] = form
        elif config is not None and mentions(form, config.group(1)):
            named.add(name)
    for name, form in written.items():
        longer = [match_form(other) for other in written if other != name and mentions(match_form(other), name)]
        rest = form
        for phrase in longer:
            rest = rest.replace(phrase, " ")
        if mentions(rest, name):
            named.add(name)
    return named


_LEADING_TITLE_WORDS = frozenset({"gnu", "the"})  # "GNU Gzip", "The Bash Reference Manual": not the name
# the title of a manual page rendered without its header: its command in lower case, a colon, its NAME line; such
# a page is named by no message (French "file", "la file de téléchargement", is a word), as it was before
_HEADLESS_PAGE_TITLE = re.compile(r"\s*[a-z0-9][\w.+-]*: ")


def _title_head(title: str) -> list[str]:
    """The words of a title's subject (:func:`titled_subject`) without a leading "The" or "GNU"."""
    words = titled_subject(title).split()
    while words and words[0] in _LEADING_TITLE_WORDS:
        words.pop(0)
    return words


def document_name(title: str) -> str | None:
    """The program or library a document is the manual of: its manual page's name (:func:`manual_page_name`),
    else its title's subject (:func:`titled_subject`) when that is one name: ``gzip`` for "GNU Gzip: General
    file (de)compression" (an Info manual), ``sed`` for "GNU ‘sed’", ``bash`` for "Bash Reference Manual",
    ``libffi``; ``None`` for a title of several words ("Comparing and Merging Files")."""
    name = manual_page_name(title)
    if name:
        return name
    if _HEADLESS_PAGE_TITLE.match(title):
        return None  # a manual page without its header ("file: Déterminer le type d'un fichier"), named as before
    words = _title_head(title)
    return words[0] if len(words) == 1 else None


# the kinds of things a question asks a program's manual for, and the program's name written right before one
# ("Which bzip2 option…", "Which readline variable…", "Which Libgpg-error function…") or after it in French
# ("Quelle option de gzip…")
_ASKED_KINDS = (
    r"(?:options?|flags?|switch(?:es)?|arguments?|commands?|keywords?|directives?|variables?|settings?|functions?"
    r"|builtins?|tests?|actions?)"
)
# "Which sqlite3 dot-command…", "Which git subcommand…": a kind of command, named before the word
KIND_PREFIX = r"(?:dot-|sub-?)"
_PROGRAM_BEFORE_KIND = re.compile(
    rf"([^\W\d_][\w.+-]*)\s+(?:command[- ]line\s+|{KIND_PREFIX})?{_ASKED_KINDS}\b", re.IGNORECASE
)
_PROGRAM_AFTER_KIND = re.compile(
    r"\b(?:options?|commandes?|variables?|fonctions?)\s+d(?:e\s+|['’])([^\W\d_][\w.+-]*)", re.IGNORECASE
)
# a Japanese question opens with the program it asks an option, a command, a variable or a function of, before
# で or の: "tar で gzip 圧縮するオプションは？" asks tar's, not gzip's
_PROGRAM_JA = re.compile(r"^\s*([A-Za-z][\w.+-]*)\s*(?:で|の)(?=.*(?:オプション|コマンド|サブコマンド|変数|関数))")
_NOT_PROGRAMS = frozenset(  # words before "option", "function"… that name no program ("a variable or function")
    """which what the a an this that these those any some each every other same one single or and nor of for to
    in on at by with from as into than per i you we it they how many much quelle quel quelles quels les des la le
    du un une""".split()
)
_KIND_WORDS = rf"(?:{_ASKED_KINDS}|commandes?|fonctions?)"  # the kinds, and French's for those it names apart
_KIND_WORD = re.compile(rf"{_KIND_WORDS}$", re.IGNORECASE)  # a text that ends on one


_ASKS_KIND = re.compile(rf"\b{_KIND_WORDS}\b", re.IGNORECASE)


def asks_for_kind(message: str) -> bool:
    """The message asks for an option, a command, a variable, a setting, a function, a builtin, a test or an
    action (what a program's manual lists as its entries)."""
    return _ASKS_KIND.search(unicodedata.normalize("NFKC", message)) is not None


def asked_programs(message: str) -> set[str]:
    """The names ``message`` writes as the program it asks an option, a command, a variable or a function of:
    ``bzip2`` for "Which bzip2 option reduces memory usage?", ``gzip`` for "Quelle option de gzip…", ``tar`` for
    "tar で gzip 圧縮するオプションは？" (the program a Japanese question opens with, before で or の). Not a
    function word ("a variable or function"), a flag ("time's --output option"), a verb right after a kind word
    ("Which bash variable holds commands…") nor a single letter ("the sed D command")."""
    text = unicodedata.normalize("NFKC", message)
    found = [m.group(1) for m in _PROGRAM_AFTER_KIND.finditer(text)]
    found += [m.group(1) for m in _PROGRAM_JA.finditer(text)]
    for m in _PROGRAM_BEFORE_KIND.finditer(text):
        before = text[: m.start()]
        if before.endswith("-") or _KIND_WORD.search(before.rstrip()):
            continue  # a flag ("time's --output option") or a verb after the kind ("function reads variables")
        found.append(m.group(1))
    names = {name.rstrip(".-").lower() for name in found}
    return {n for n in names if len(n) > 1} - _NOT_PROGRAMS  # one letter names a command ("the sed D command")


def named_documents(message: str, titles: Iterable[str]) -> set[str]:
    """The titles, among ``titles``, of the manuals of the programs ``message`` names: the manual pages
    :func:`named_manual_pages` finds; another manual (Info, HTML) whose program (:func:`document_name`) the
    message names as a word ("Which gzip option…" and "GNU Gzip: General file (de)compression"), or whose title
    starts with the program the message asks an option, a variable or a function of (:func:`asked_programs`:
    "Which bzip2 option…" and "bzip2 and libbzip2, version 1.0.8", "Which readline variable…" and "GNU Readline
    Library"). A manual page rendered without its header is named by none, as before. When the message names
    several programs and asks an option (a command, a variable…) of one of them, only that one's manuals are
    named: "Which gzip option makes the output friendlier to rsync?" asks gzip's manual, not rsync(1)."""
    titles = list(titles)
    pages = named_manual_pages(message, titles)
    form = _words_form(message)
    asked = asked_programs(message)
    programs = [match_form(p).split() for p in asked]
    named: set[str] = set()
    owners: set[str] = set()  # the named titles of the programs the message asks something of
    for title in titles:
        page = manual_page_name(title)
        if page is not None:
            if page in pages:
                named.add(title)
                if page.lower() in asked:
                    owners.add(title)
            continue
        if _HEADLESS_PAGE_TITLE.match(title):
            continue
        name = document_name(title)
        head = _title_head(title)
        starts = any(p and head[: len(p)] == p for p in programs)
        if (name and mentions(form, name)) or starts:
            named.add(title)
            if starts or (name and name in asked):
                owners.add(title)
    return owners or named


def mentions(form: str, phrase: str) -> bool:
    """Whether ``form`` (a :func:`match_form`) holds ``phrase`` as whole words."""
    needle = match_form(phrase)
    return needle.strip() != "" and needle in form


def pieces_at_spaces(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of at most about ``size`` characters, at spaces where there are any, so that a
    buffered answer can be sent like a streamed one. The pieces concatenate to ``text`` exactly."""
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            end = space + 1 if space > start else end
        out.append(text[start:end])
        start = end
    return out


# "What is tmux?", "What does git rebase do?", "À quoi sert rsync ?", "tmux とは何ですか？": the message asks what a
# named thing is or does, and nothing more. The subject is at most three words, none of them a question word, an
# article, a pronoun or a preposition ("What is the default port of PostgreSQL?" asks about a port, not a subject;
# "What does it do?" is a follow-up that names nothing).
_SUBJECT = r"(?P<s>[^\s?？]+(?: [^\s?？]+){0,2}?)"
# the kind of thing named after the subject ("the wget command") and an article before it ("a Roth IRA"): an
# article with no kind makes the subject a thing described rather than a name (:attr:`Overview.named`)
_KIND = r"(?: (?P<k>command|tool|program|utility|library|package|module|project|format|mailing list))?"
_EN_ARTICLE = r"(?:(?P<a>the|an?) )?"
# where the subject lives, said after it ("What is REPLACE in SQLite?", "Que fait ORDER BY dans SQLite ?") or,
# in Japanese, before it ("SQLite の REPLACE とは"): not part of the subject
_WITHIN = r"(?: (?:in|within|dans|en|sous) (?P<w>[^\s?？]+(?: [^\s?？]+)?))?"
_JA_WITHIN = r"(?:(?P<w>[A-Za-z0-9._+-]+)\s*の\s*)?"
_FR_ARTICLE = (
    r"(?:(?P<k>la commande|le programme|l['’]outil|la bibliothèque|le paquet) |(?P<a>(?:les?|la|une?) |l['’]))?"
)
_JA_SUBJECT = r"(?P<s>[A-Za-z0-9._+-]+(?: [A-Za-z0-9._+-]+){0,2})"
_JA_WHAT = (
    r"(?:何|なに|なん)(?:ですか|でしょうか|をしますか|をする(?:もの|コマンド|ツール)(?:ですか)?"
    r"|に使いますか|に使う(?:もの|コマンド|ツール)(?:ですか)?|のための(?:もの|コマンド|ツール)(?:ですか)?)?"
)
# "What is tmux used for?", "What is /opt reserved for?": the participle asks what the subject is for
_FOR_WHAT = r"(?:used|meant|intended|reserved|designed|needed)"
_OVERVIEW = (
    re.compile(
        rf"^what(?:'s| is| are) {_EN_ARTICLE}{_SUBJECT}{_KIND}{_WITHIN}(?: (?:{_FOR_WHAT} )?for| about)?\s*\??$", re.I
    ),
    re.compile(rf"^what does {_EN_ARTICLE}{_SUBJECT}{_KIND} do{_WITHIN}\s*\??$", re.I),
    re.compile(rf"^(?:tell me about|describe) {_EN_ARTICLE}{_SUBJECT}{_KIND}\s*[?.]?$", re.I),
    re.compile(rf"^qu['’]est[- ]ce qu(?:e |['’]){_FR_ARTICLE}{_SUBJECT}{_WITHIN}\s*\??$", re.I),
    re.compile(rf"^(?:à|a) quoi sert {_FR_ARTICLE}{_SUBJECT}{_WITHIN}\s*\??$", re.I),
    re.compile(rf"^que fait {_FR_ARTICLE}{_SUBJECT}{_WITHIN}\s*\??$", re.I),
    re.compile(rf"^c['’]est quoi {_FR_ARTICLE}{_SUBJECT}{_WITHIN}\s*\??$", re.I),
    re.compile(  # "tmux とは", "tmux とは何ですか", "rsync は何をするコマンドですか", "zstd って何"
        rf"^{_JA_WITHIN}「?{_JA_SUBJECT}」?\s*(?:コマンド|ツール|ライブラリ|パッケージ)?\s*(?:とは\s*(?:{_JA_WHAT})?|(?:って|は)\s*{_JA_WHAT})"
        r"\s*[?？]?$"
    ),
    re.compile(rf"^「?{_JA_SUBJECT}」?\s*(?:コマンド|ツール)?\s*の(?:役割|用途)\s*(?:は(?:何ですか)?)?\s*[?？]?$"),
)
_NOT_SUBJECT = frozenset(
    "a an the of in on for to from with by at about and or is are be do does what which who how when where why "
    "it this that these those they them one ones ça cela ceci ce c'est il elle ils elles "
    "default difference best way option options value size number name maximum minimum limit new largest smallest "
    "biggest highest lowest longest shortest most least possible first last latest current main primary "
    "le la les un une des de du d au aux et ou en par pour sur dans".split()
)


@dataclass(frozen=True)
class Overview:
    """A message that asks only what a thing is, does or is for (:func:`overview`).

    :ivar subject: what it asks about (``"git rebase"`` for "What does git rebase do?").
    :ivar within: where the subject lives, when the message says it (``"SQLite"`` for "What is REPLACE in
        SQLite?" and "SQLite の REPLACE とは何ですか"), else ``None``.
    :ivar named: the subject is a name: no article before it, or one that goes with its kind ("the wget command",
        "la commande file"); not a thing described ("What is a Roth IRA?", "What is the expense policy?").
    """

    subject: str
    within: str | None
    named: bool


def overview(message: str) -> Overview | None:
    """The :class:`Overview` of ``message`` when it asks only what a thing is, does or is for, else ``None``."""
    text = " ".join(unicodedata.normalize("NFKC", message).split())
    for pattern in _OVERVIEW:
        if match := pattern.match(text):
            subject = match.group("s").strip(" \"'«»「」")
            words = subject.lower().split()
            if words and len(subject) <= 40 and not any(w in _NOT_SUBJECT or w.startswith("-") for w in words):
                groups = match.groupdict()
                return Overview(subject, groups.get("w"), not groups.get("a") or bool(groups.get("k")))
    return None


def overview_subject(message: str) -> str | None:
    """What ``message`` asks to be told about when it asks only what a named thing is, does or is for
    (``"git rebase"`` for "What does git rebase do?", ``"tmux"`` for "tmux とは何ですか？", ``"REPLACE"`` for
    "What is REPLACE in SQLite?"; :func:`overview`), else ``None``."""
    found = overview(message)
    return found.subject if found else None


_TITLE_HEAD = re.compile(r"\s+[—–-]\s+|:\s|\(")  # "tqdm: fast progress bars", "Tomli — TOML parser", "ssh(1)"
_GENERIC_TITLE_WORDS = frozenset("readme documentation docs doc manual reference guide user home page homepage".split())


def titled_subject(title: str) -> str:
    """What a document's title names, as :func:`match_form` spells it: the command of a manual page
    (`` git rebase `` for "git-rebase(1): Reapply commits…"), else the title's head without generic words after
    it (`` attrs `` for "attrs-README", `` bash `` for "Bash Reference Manual"); ``" "`` when nothing is left."""
    name = manual_page_name(title)
    words = match_form(name if name else _TITLE_HEAD.split(title, maxsplit=1)[0]).split()
    while name is None and len(words) > 1 and words[-1] in _GENERIC_TITLE_WORDS:
        words.pop()
    return f" {' '.join(words)} "


def titles_subject(title: str, subject: str, filename: str = "") -> bool:
    """Whether a document titled ``title`` is ``subject``'s own (:func:`titled_subject`), however the name is
    split or joined: "PyrateLimiter" is the subject of "pyrate_limiter-README", "git rebase" of git-rebase(1). Or
    its file's name without the extension says so (``filename``): a README titled by its heading
    ("filesystem_spec", "Thread-pool Controls") is fsspec's or threadpoolctl's by its name "fsspec-README.md"."""
    wanted = match_form(subject).replace(" ", "")
    if wanted == "":
        return False
    names = [title, filename.rsplit(".", 1)[0]]  # the file's name without its extension
    return any(name and titled_subject(name).replace(" ", "") == wanted for name in names)


# what follows a subject in the sentence that says what it is: a manual page's NAME line ("rsync - a fast,
# versatile… tool"), a verb ("Rsync is a fast…", "jq can transform JSON…", "Tcpdump prints out…", "GNU find
# parcourt…"), "attrs は…", "gzip コマンドは…"; a parenthesis may come first ("ncdu (NCurses Disk Usage) is…",
# "ripgrep (rg) recursively searches…"). Not "Lsof was written by…" nor "rsync and…": what it is, not its history.
_GLOSS = r"(?:\s(?:command|program|tool|utility|library|package|commande|programme))?(?:\s*\([^()]{1,40}\))?"
# "rsync - a fast, versatile, local/remote file-copying tool"; "grep, egrep, fgrep, rgrep - print lines that
# match patterns": a page that documents several commands names them all before the dash; a standard's heading
# names its subject before a spaced colon ("/opt : Add-on application software packages")
_NAME_LINE = re.compile(rf"{_GLOSS}(?:,\s*[\w.+-]+){{0,6}}\s[-—–:]\s")
# a manual page's NAME line as a whole: its command(s) and, after the dash, what they do ("grep, egrep - print
# lines that match patterns"; roff's "\-" as well)
NAME_LINE_PARTS = re.compile(r"^\s*(\S.*?)\s+(?:-|\\-|—|–)\s+(.+)$")
_SAYS_WHAT = re.compile(
    rf"(?:@[\w.-]+)?{_GLOSS}(?:,\s+(?:an?|the|une?|la|le)\s|\s(?:is|are|provides|lets|allows|est|sont|permet)\s"
    r"|\s?(?:コマンド|ツール)?(?:は|とは|って))",
    re.IGNORECASE,
)
_SAYS_WHAT_IT_DOES = re.compile(  # any other verb: a lower-case word that is not a preposition or "was"
    rf"{_GLOSS}\s+(?!(?:was|were|had|and|or|of|in|on|at|to|for|with|from|by|et|ou|de|du|des|dans|avec|pour)\b)"
    # nor what it needs or works with: "HTTPX requires Python 3.9+", "orjson supports…" are details, not what it does
    r"(?!(?:requires?|needs?|supports?|depends|works|runs|ships|has|have|nécessite|requiert|prend en charge)\b)"
    # nor what it does not do: "PRAGMA integrity_check does not find FOREIGN KEY errors" is a limit
    r"(?!(?:does|do|can|will)\s+not\b|(?:doesn|don|can|won)['’]t\b|cannot\b|ne\b|n['’])"
    r"[a-zà-öø-ÿ]"
)
DefinitionKind = Literal["name", "what", "does"]
# a manual page's section as a label ("説明: ", "Description: "), or a heading of a word or two on its own line
# before the text ("Purpose\n/opt is reserved for…", a standard's heading as a PDF's text layer gives it)
_SECTION_LABEL = re.compile(r"^(?:[^\W\d_]{1,12}[:：]\s*|[^\W\d_]{1,12}(?: [^\W\d_]{1,12})?[ \t]*\n\s*)")
# "The Debian FAQ is…", "A Roth IRA is…"
_ARTICLE = re.compile(r"^(?:(?:the|an?|les?|la|une?)\s+|l['’])", re.IGNORECASE)
_NAMING = re.compile(  # what may name the subject before its name: "GNU tar", "La commande gzip", "The sqlite3 command"
    r"^(?:gnu|the (?:command|program|tool)|la commande|le programme|l['’]outil)\s+", re.IGNORECASE
)


def definition_kind(subject: str, sentence: str) -> DefinitionKind | None:
    """How ``sentence`` says what ``subject`` is, when it starts with the subject's name and goes on as a
    definition does: ``"name"``, a manual page's NAME line ("rsync - a fast, versatile, local/remote
    file-copying tool"); ``"what"``, what it is ("tmux is a terminal multiplexer", "GNU tar est un programme
    d'archivage", "gzip コマンドは…"); ``"does"``, what it does ("jq can transform JSON in various ways",
    "Tcpdump prints out a description of the contents of packets"); else ``None``. After an article only
    ``"what"`` counts: "The rsync algorithm is…" is about something else."""
    wanted = match_form(subject).replace(" ", "")  # "git-rebase" and "git rebase", "PyrateLimiter" and "Pyrate Limiter"
    if not wanted:
        return None
    if says_quality(subject, sentence):
        return "what"
    text = unicodedata.normalize("NFKC", sentence).lstrip("`*_\"' ")
    for start in (text, _SECTION_LABEL.sub("", text, count=1)):  # "説明: GNU tar は、アーカイブプログラムです。"
        naming = _NAMING.match(start)
        article = None if naming else _ARTICLE.match(start)
        lead = naming or article
        start = start[lead.end() :] if lead else start
        limit = min(len(start), len(wanted) + 2)
        size = next((n for n in range(1, limit + 1) if match_form(start[:n]).replace(" ", "") == wanted), 0)
        if not size:
            continue
        rest = start[size:].lstrip("`*_\"'")  # after the shortest head that reads as the subject
        if _SAYS_WHAT.match(rest):
            return "what"
        if not article and _NAME_LINE.match(rest):
            return "name"
        if not article and _SAYS_WHAT_IT_DOES.match(rest):
            return "does"
    return None


# "A rollback journal is said to be hot if…", "A journal is hot if…": a thing of a kind is given a quality under a
# condition, which defines the quality and the kind together ("hot journal")
_QUALITY = (
    r"^(?:an?|the|some)\s+(?:[\w-]+\s+){{0,2}}{noun}s?"  # "A rollback journal", "The distribution"
    r"\s+(?:is|are)\s+(?:said to be\s+|called\s+|considered\s+)?{quality}"  # "is said to be hot"
    r"\s+(?:if|when|whenever|once)\s+\w"  # "if it needs…": a condition, not "if..." before a list of them
)


def says_quality(subject: str, sentence: str) -> bool:
    """``sentence`` defines ``subject``, a quality and a kind of thing ("hot journal"), by saying when a thing of that
    kind has that quality (:data:`_QUALITY`: "A rollback journal is said to be hot if it needs to be rolled back…")."""
    words = match_form(subject).split()
    if len(words) < 2 or len(words) > 3:
        return False
    quality, noun = r"\s+".join(map(re.escape, words[:-1])), re.escape(words[-1])
    return re.match(_QUALITY.format(noun=noun, quality=quality), sentence.strip(), re.IGNORECASE) is not None


_ANY_DEFINITION: tuple[DefinitionKind, ...] = ("name", "what", "does")


def passage_defines(subject: str, passage: str, *, kinds: Sequence[DefinitionKind] = _ANY_DEFINITION) -> bool:
    """Whether one of ``passage``'s sentences says what ``subject`` is, in one of the :func:`definition_kind`
    ``kinds`` (any by default; ``("what", "does")`` for prose rather than a NAME line)."""
    return any(definition_kind(subject, sentence) in kinds for sentence in split_sentences(passage))


# a sentence that gives a name to what it describes: 'These are known as "Release Goals"', "… what is called a
# conffile", "ce qu'on appelle un paquet virtuel"
_GIVES_NAME = re.compile(
    r"\b(?:known as|called|named|(?:on )?appel(?:le|ée?s?))\s+(?:an?\s+|une?\s+)?[\"“«'‘]?", re.IGNORECASE
)
_CODE_LINE_CHARS = 80  # a syntax line: "PRAGMA schema.integrity_check(N)", not a paragraph that mentions the name


def documents_name(subject: str, passage: str) -> bool:
    """Whether ``passage`` documents ``subject`` as a reference does, though no sentence of it says what the subject
    is (:func:`passage_defines`): its definition entry ("itertools.chain(*iterables): Make an iterator…", "ifnull(X,
    Y): …"), a table row that opens with it ("apt autoremove | N/A | apt-get autoremove |
    remove auto-installed packages which are no longer required"), a short line of syntax that opens with its first
    word and writes its code names and its other words ("PRAGMA schema.integrity_check;" for "PRAGMA
    integrity_check"), or a sentence that gives it as the name of what it describes ('These are known as "Release
    Goals"' for "Debian's release goals": the owner before a possessive is where the name lives, not part of it)."""
    wanted = match_form(subject)
    if not wanted.strip():
        return False
    named = match_form(_POSSESSIVE.split(subject)[-1])  # "Debian's release goals": "release goals"
    codes = code_names(subject)
    words = wanted.split()
    for line in passage.split("\n"):
        head, cell, _ = line.partition(TABLE_CELL)
        if cell and match_form(head) == wanted:
            return True
        if (term := entry_term(line)) and match_form(term.split("(", 1)[0]) == wanted:
            return True  # its definition entry: "itertools.chain(*iterables): Make an iterator that…"
        if codes and len(line.strip()) <= _CODE_LINE_CHARS and not line.rstrip().endswith("."):
            form = match_form(line)
            if (
                form.startswith(f" {words[0]} ")
                and all(c in line.casefold() for c in codes)
                and all(f" {w} " in form for w in words)
            ):
                return True
    return any(
        match_form(passage[m.end() :][: len(named) + 8]).startswith(named) for m in _GIVES_NAME.finditer(passage)
    )


# "How many days…", "How much does it cost?", "On how many architectures…", "Combien de…", "いくら", "何人": a count
# or an amount ("how much faster" asks a degree, which words can give). "how many" opens the question, a clause of
# it, a preposition's object or what a question asks to be told ("Do you know how many…", "Tell me how much…");
# after another verb it is that verb's object ("Which mtr option sets how many pings are sent?" asks for an
# option, "Which SQLite function returns how many rows…" for a function)
_ASKS_COUNT = re.compile(
    r"(?:^|[,;:]|\b(?:and|but|or|so|then|from|for|to|in|on|at|by|with|of|after|before|within|about|me|know|"
    r"wonder|ask|asking|say|idea)\b)\W*"
    r"how (?:many|much(?!\s+(?:better|worse|faster|slower|easier|harder|safer|riskier|quicker)\b))\b|"
    r"\bcombien\b|いくら|いくつ|何(?:[個人日回年件歳台本枚])",
    re.IGNORECASE,
)
# numbers written in words, but "one" ("one of the options", "one or more"), which a sentence writes as often as
# any other word (_COUNT_WORD)
_NUMBER_WORDS = (
    r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|"
    r"billion|dozens?|half|once|twice|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|treize|quatorze|"
    r"quinze|seize|vingt|trente|quarante|cinquante|soixante|cent|mille|millions?"
)
# a number written in words or in kanji ("fourteen", "quinze", "三十"); with digits and "free" for an amount, a
# number however written (_HOLDS_COUNT)
_NUMERAL = rf"\b(?:one|{_NUMBER_WORDS})\b|[{KANJI_DIGITS}万億]"
_NUMERAL_WORD = re.compile(_NUMERAL, re.IGNORECASE)
_COUNT_WORDS = rf"\b(?:{_NUMBER_WORDS})\b"
_COUNT_WORD = re.compile(_COUNT_WORDS, re.IGNORECASE)
# a note's or an item's number, a manual page's section, a section a text refers to: "[84] dput パッケージは…", "(3)
# SQLite lets me insert a string…", "deb(5)", "Charte Debian, 8.6.3 « Le système de symboles »", "Section 7.4, “Who
# is the maintainer?”"
_MARKER_NUMBER = re.compile(
    r"\[\d{1,3}\]|(?:^|(?<=\s))\(\d{1,2}\)(?=\s)|(?<=[\w.-])\(\d[a-z]{0,3}\)|"
    r"\b\d+(?:\.\d+)+,?\s*(?=[«“])|(?i:\b(?:section|chapter|chapitre|annexe|appendix)\s+\d+(?:\.\d+)+)"
)
_HOLDS_COUNT = re.compile(
    rf"\d|{_NUMERAL}|\b(?:free|nothing|gratuite?s?|aucune?|unlimited|illimitée?s?|infinite)\b|"
    r"\b(?:not|never|no)\s+(?:be\s+)?limit(?:ed)?\b|無料|無制限",
    re.IGNORECASE,
)


# the unit a count asks for: "how many days", "how much memory", "combien de jours", "何日"
_COUNTED = re.compile(
    r"\bhow (?:many|much)\s+([^\W\d_]{3,})|\bcombien\s+(?:de|d['’])\s*([^\W\d_]{3,})|何([日回年件秒分人])",
    re.IGNORECASE,
)
# "how many times": a count of events, which an answer gives as a number alone ("lost twice", "a 19-0 season")
_NOT_UNITS = frozenset("does did do is are was were can could should would will has have had the of times fois".split())


def asked_unit(query: str) -> str | None:
    """The unit a count asks for, lower case, singular and cut to five characters as :func:`terms` cuts words:
    ``day`` for "How many days can an upload wait?", ``jour`` for "combien de jours", 日 for 何日; ``None``
    when the query counts no unit ("how many are there", "how many times")."""
    m = _COUNTED.search(unicodedata.normalize("NFKC", query))
    word = next((g for g in m.groups() if g), "").casefold() if m else ""
    if not word or word in _NOT_UNITS:
        return None
    return word if len(word) == 1 else _unit_form(word)  # a counter kanji as is


def _unit_form(word: str) -> str:
    """A counted word singular and cut to five characters, as :func:`terms` cuts words ("landings": ``landi``)."""
    return (word[:-1] if word.endswith("s") and len(word) > 3 else word)[:5]


def names_unit(text: str, unit: str) -> bool:
    """``text`` names the unit :func:`asked_unit` found: a word starting with it ("days", "X-day"), not one holding
    it ("today"); a counter kanji as is."""
    found = re.escape(unit) if len(unit) == 1 else rf"(?<![^\W\d_]){re.escape(unit)}"
    return re.search(found, unicodedata.normalize("NFKC", text).casefold()) is not None


# a count written next to the unit it counts, at most three words apart and in the same clause: "2000 lines",
# "five conflict resolution algorithm choices", "Only a single RESERVED lock", "a dozen"; not a version or a date
# ("Prior to SQLite version 3.6.18 (2009-09-11), triggers were…")
_DIGIT_COUNT = r"(?<![\d.-])\d[\d,]*(?:\.\d+)?(?!\d|[.-]\d)"  # "2000", "2,000", "1.5"; not "3.6.18", "2009-09-11"
_COUNT = rf"(?:{_DIGIT_COUNT}|{_NUMERAL}|\bsingle\b|\ba (?:few|dozen|couple)\b)"
_FEW_WORDS = r"(?:[\s(-]+[^\W\d_][\w'-]*){0,3}?[\s(-]*"  # "seconds (default fifteen)": a parenthesis too
# after the unit, a count in digits or a number word other than "one" ("…the development tools one needs")
_COUNT_AFTER = rf"(?:{_DIGIT_COUNT}|{_COUNT_WORDS})"
# a count without a bound: "the number of history entries is not limited", "unlimited retries"
_NO_BOUND = r"(?:unlimited|illimitée?s?|(?:is|are)\s+not\s+limited|no\s+limit)\b"


# a count of something else in each unit, a rate: "run twice each day" counts runs, not days
_RATE = r"\s+(?:each|every|per|a|an|par|chaque)\s"


def counts_unit(text: str, unit: str) -> bool:
    """``text`` counts the unit :func:`asked_unit` found: a number written before a word starting with it, or
    after it, at most three words apart ("six manned landings", "39 episodes", "nominated for 62 Primetime Emmy
    Awards"; "一日": a counter kanji right after its number), or says it has no bound ("the number of history
    entries is not limited", "unlimited retries"). A text that names the unit and writes a number
    elsewhere ("SQLite version 3.8.2 or later is needed to use a WITHOUT ROWID table") counts nothing, nor does a
    rate (:data:`_RATE`: "run twice each day" counts runs)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    if len(unit) == 1:
        return re.search(rf"[\d{KANJI_DIGITS}十百千万]\s*{re.escape(unit)}", normal) is not None
    word = rf"(?<![^\W\d_]){re.escape(unit)}"
    # or the unit first, the number after it: "The series was nominated for 62 Primetime Emmy Awards"
    found = rf"{_COUNT}(?!{_RATE}){_FEW_WORDS}{word}|{word}[\w'-]*{_FEW_WORDS}{_COUNT_AFTER}"
    found += rf"|\b{_NO_BOUND}{_FEW_WORDS}{word}|{word}[\w'-]*{_FEW_WORDS}{_NO_BOUND}"
    return re.search(found, normal, re.IGNORECASE) is not None


# things counted that an answer may name otherwise: "how many people" ("a population of 8,000", "inhabitants"),
# a count of events ("何回": "3 回" or "three times")
_NAMED_OTHERWISE = frozenset({"peopl", "perso", "回"})


# words that end what "how many" counts: "how many packages *there* are", "how many lines *for* each window"
_NOT_COUNTED = frozenset("there for per in on of at to with from and or that which a an the".split())


# "What is the maximum number of triggers…": a bound on a count, which the question asks for as "how many" does
# (not "Which find option limits the maximum number of levels?", which asks for an option)
_NUMBER_OF = re.compile(
    r"^\W*what(?:'s|\s+is|\s+was)\s+the\s+(?:default\s+)?(?:maximum|minimum|max|largest|greatest|smallest|highest|"
    r"lowest)\s+number\s+of\s+((?:[^\W\d_]{3,}\s*){1,3})",
    re.IGNORECASE,
)


def _counted_run(words: str) -> tuple[str, ...]:
    """What the words after "how many" count: those up to the verb, of which the last plural one when there is
    one ("how many WITHOUT ROWID tables" counts tables), cut as :func:`asked_unit` cuts them."""
    run = []
    for word in words.casefold().split():
        if word in _NOT_UNITS or word in _NOT_COUNTED:
            break
        run.append(word)
    nouns = [w for w in run if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is"))]
    counted = [_unit_form(nouns[-1])] if nouns and len(run) > 1 else [_unit_form(w) for w in run]
    return tuple(w for w in counted if w not in _NAMED_OTHERWISE)


def counted_thing(message: str) -> tuple[str, ...]:
    """What a count question counts, when an answer must name it: the words of "how many crewed landings" up to
    the verb, of which the plural one when there is one (``landi``: "six manned U.S. landings"; "how many WITHOUT
    ROWID tables" counts tables, which an answer that only says "WITHOUT ROWID" does not), cut as
    :func:`asked_unit` cuts them; the unit of "combien de jours" (plural) and of "何日". Not what "how much"
    measures ("how much money", "combien d'argent": "$1 million"), nor people or events ("how many times",
    何回), which answers give in other words; what "the maximum number of triggers" bounds (``trigg``), which an
    answer giving the largest value of something else does not count. Empty otherwise."""
    normal = unicodedata.normalize("NFKC", message)
    unit = asked_unit(message)
    bound = _NUMBER_OF.search(normal) if unit is None else None
    if bound is not None:  # "What is the maximum number of triggers one table can have?"
        return _counted_run(bound.group(1))
    if unit is None or unit in _NAMED_OTHERWISE or not asks_count(message):
        return ()  # "Which find option limits how many levels…" asks for an option
    if len(unit) == 1:
        return (unit,)
    words = re.search(r"\bhow many\s+((?:[^\W\d_]{3,}\s*){1,3})", normal, re.IGNORECASE)
    if words:
        return _counted_run(words.group(1))
    plural = re.search(r"\bcombien\s+(?:de|d['’])\s*[^\W\d_]+[sx]\b", normal, re.IGNORECASE)
    return (unit,) if plural else ()


# a name written as code: "group_concat", "os.path.join", "count(*)", "sqlite3_limit()", "ifnull()" (not "file(s)")
_CODE_NAME = re.compile(r"[A-Za-z_]\w*(?:[_.]\w+)+(?:\([^()\s]{0,12}\))?|[A-Za-z_]\w*\((?!e?s\))[^()\s]{0,12}\)")


def code_names(query: str) -> set[str]:
    """The names the query writes as code (:data:`_CODE_NAME`), case-folded, the arguments of a call kept
    ("count(*)" is not "count(x)"), empty parentheses dropped ("ifnull()" writes ``ifnull``); not an abbreviation
    or a version ("e.g.", "v1.2": a dotted name needs a letter after its first dot and three letters in a
    row)."""
    out = set()
    for m in _CODE_NAME.findall(unicodedata.normalize("NFKC", query)):
        name = m.removesuffix("()").casefold()
        rest = name.partition("(")[0].partition(".")[2]
        if "_" in name or "(" in m or (re.search(r"[a-z]", rest) and re.search(r"[a-z]{3}", name)):
            out.add(name)
    return out


def holds_code_names(query: str, texts: Sequence[str]) -> list[bool]:
    """Per text, whether it writes one of the query's :func:`code_names`: a question about ``group_concat``
    is answered by a passage that names it, not by one about another separator. All false when the query
    writes none."""
    names = code_names(query)
    if not names:
        return [False] * len(texts)
    # Japanese writes a name against the word before or after it ("オリジナルのorig.tar.gz ソースファイル")
    pattern = re.compile(
        "|".join(
            rf"(?<!{_LATIN_WORD_CHAR}|\.){re.escape(n)}" + (rf"(?!{_LATIN_WORD_CHAR})" if n[-1].isalnum() else "")
            for n in names
        )
    )
    return [bool(pattern.search(unicodedata.normalize("NFKC", t).casefold())) for t in texts]


def asks_count(message: str) -> bool:
    """The message asks how many or how much ("How much does a Debian support contract cost?")."""
    return _ASKS_COUNT.search(unicodedata.normalize("NFKC", message)) is not None


def holds_count(text: str) -> bool:
    """``text`` gives a number in some form: digits, a number word ("twice", "three", "trois"), a kanji
    numeral, "free" for an amount, "unlimited" or "not limited" for a count without a bound; not the number of a
    note, an item or a section it refers to ("[84]", "(3)", "Charte Debian, 8.6.3 « … »")."""
    return _HOLDS_COUNT.search(_MARKER_NUMBER.sub(" ", unicodedata.normalize("NFKC", text))) is not None


# the words by which a question asks for a kind of entry of a page: an option ("Which tar option…", "Quelle option
# de grep…", "…するオプションは？"), a named setting ("Which ssh_config variable…", "…する変数は？"), a command, a keyword
# or a directive ("Which tmux command…", "Which ssh_config keyword…", "Quelle commande…")
# "command line option", "option de ligne de commande": the words name the kind of thing asked for, which the
# answering entry ("-L, --location: …") does not repeat
ASKS_OPTION = re.compile(
    r"\b(?:command[- ]line\s+)?(?:options?|flags?|switch(?:es)?|arguments?)(?:\s+de\s+(?:la\s+)?ligne\s+de\s+commande)?\b"
    r"|(?:コマンドライン)?(?:オプション|引数)",
    re.IGNORECASE,
)
ASKS_NAME = re.compile(
    r"\b(?:variables?|settings?|keys?|fields?|attributes?|parameters?|properties)\b|変数|設定", re.IGNORECASE
)
ASKS_COMMAND = re.compile(r"\b(?:commands?|commandes?|keywords?|directives?)\b", re.IGNORECASE)


def asks_for_option(query: str) -> bool:
    """The query asks for an option, a flag, a switch or an argument."""
    return ASKS_OPTION.search(query) is not None


def asks_for_command(query: str) -> bool:
    """The query asks for a command, a keyword or a directive."""
    return ASKS_COMMAND.search(query) is not None


_ASKS_QUANTITY = re.compile(
    r"\bhow (?:many|much|large|big|long|old|often|far|fast|high|small|wide)\b|\b(?:which|what)\s+(?:\w+\s+){0,2}"
    r"versions\b|\bquelles\s+versions\b|\b(?:maximum|minimum|largest|"
    r"smallest|highest|lowest|number of|size of|port|version|what year)\b|\bcombien\b|\b(?:nombre|taille|"
    r"niveau|maximum|minimum|port|version|année)\b|いくつ|何[個人日回年件秒分時]|最大|最小|上限|下限|ポート|レベル|サイズ",
    re.IGNORECASE,
)
# not right after a Latin letter: a number, not a digit of a name ("iperf3", "ext4", "sha256sum"); "は2部" and
# "第3章" hold numbers
NOT_IN_NAME = r"(?<![A-Za-z\u00c0-\u024f_])"


# "what is the default…", "by default", "par défaut", "デフォルト", "既定": the value asked for is the default one
_ASKS_DEFAULT = re.compile(r"\bdefault\b|\bpar d[ée]faut\b|デフォルト|既定", re.IGNORECASE)
_STATES_DEFAULT = re.compile(r"\bdefault|\bd[ée]faut|\bnormal(?:ly|ement)\b|デフォルト|既定|通常", re.IGNORECASE)


def asks_default(query: str) -> bool:
    """The query asks what something is or does by default ("Can clients upload … by default?", "Quel est le
    séparateur par défaut ?")."""
    return _ASKS_DEFAULT.search(query) is not None


# an API reference's signature, as an entry's term, and its parameters that have a default: "textwrap.wrap(text,
# width=70, *, …): Wraps the single paragraph…" (not a call in an example, which no description follows)
_SIGNATURE_ENTRY = re.compile(rf"(?:^|\n|(?<=[.!?] ))(?:@|(?:class|exception)\s+)?[A-Za-z_][\w.]*({_SIGNATURE}):\s")
_DEFAULTED_PARAMETER = re.compile(r"\b([A-Za-z_]\w*)=")


def states_default(text: str, asked: str = "") -> bool:
    """``text`` says what the default is ("The default is for all modules to be read only.", "Par défaut ‘:’.",
    "Normally, 'patch' renames an original input file into a backup file by appending … '.orig'"), or, for the
    question ``asked``, gives the default of a parameter it names in a signature (:data:`_SIGNATURE_ENTRY`: "What is
    the default width of textwrap.wrap?" and "textwrap.wrap(text, width=70, …): …"; not "What is the default
    delimiter of the csv module?" and "class csv.DictReader(f, fieldnames=None, …)", whose defaults are others')."""
    if _STATES_DEFAULT.search(text) is not None:
        return True
    words = set(match_form(asked).split()) if asked else set()
    return any(
        name.casefold() in words
        for entry in _SIGNATURE_ENTRY.finditer(text)
        for name in _DEFAULTED_PARAMETER.findall(entry.group(1))
    )


# a number a few words from "default": "(default 10 secs)", "defaults to 27", "The default is 80x24", "デフォルトは 500"
_DEFAULT_NUMBER = re.compile(
    r"\bdefault\w*\W+(?:\w+\W+){0,4}?\d|" + NOT_IN_NAME + r"\d[\w.,]*\W+(?:\w+\W+){0,2}?(?:by |is the |as )?default\b|"
    r"d[ée]faut\w*\W+(?:\w+\W+){0,3}?\d|(?:デフォルト|既定)\D{0,8}\d",
    re.IGNORECASE,
)


def states_default_number(text: str) -> bool:
    """``text`` gives a number as the default ("The default limit is '100'.", "(default 10 secs)")."""
    return _DEFAULT_NUMBER.search(text) is not None


_NUMBER = re.compile(NOT_IN_NAME + r"\d")


def asks_quantity(query: str) -> bool:
    """The query asks for a number: a count, a size, a limit, a level, a port, a version ("Which Python versions
    does orjson support?", not "version control"), a year."""
    return _ASKS_QUANTITY.search(query) is not None


def holds_number(text: str) -> bool:
    """``text`` writes a number in digits, not as a digit of a name ("iperf3", "ext4")."""
    return _NUMBER.search(text) is not None


# "there is no limit", "unlimited", "illimité", "無制限": an answer to "What is the maximum…?" that gives no number
_NO_LIMIT = re.compile(
    r"\b(?:no (?:limit|maximum|upper bound)|unlimited|limitless|illimitée?s?|pas de limite|aucune limite)\b|"
    r"無制限|上限はありません|制限はありません",
    re.IGNORECASE,
)


def writes_number(text: str) -> bool:
    """``text`` writes a number in digits (:func:`holds_number`) or as an English or French word other than "one"
    ("There are five conflict resolution algorithm choices"); kanji numerals are parts of too many words
    (一般, 統一) to say so alone."""
    return holds_number(text) or _COUNT_WORD.search(text) is not None


# the number of a line of a listing the text walks through: "La ligne 6 est la version de la Charte…", "line 12",
# "12行目は手短な説明です"
_LINE_NUMBER = re.compile(r"\b(?:lines?|lignes?)\s+\d+\b|\d+\s*行目", re.IGNORECASE)


def gives_value(text: str) -> bool:
    """``text`` answers a question for a value: it writes a number, in digits (not a digit of a name: "iperf3"
    holds none; nor the number of a note or an item, "[84]", "(3)", nor of a section it refers to, "Charte Debian,
    4.4 « debian/changelog »", nor of a line of a listing, "La ligne 6 est…")
    or in words ("fourteen", "quinze", "三十"), or says there is no limit."""
    normal = _LINE_NUMBER.sub(" ", _MARKER_NUMBER.sub(" ", unicodedata.normalize("NFKC", text)))
    return holds_number(normal) or _NUMERAL_WORD.search(normal) is not None or _NO_LIMIT.search(normal) is not None


# a question that asks how to do something: "How do I limit the depth…", "How can SQLite be made to…", "Comment
# limiter…", "…を変更するには？", "…方法は？", "どうやって…"
_ASKS_HOW_TO = re.compile(
    r"^\W*(?:how (?:do|does|did|can|could|should|would|to|is|are)|comment)\b|どう|方法|には[？?]?$", re.IGNORECASE
)
# a question that asks whether something holds: "Does the LIMIT clause apply…", "Peut-on…"
_ASKS_WHETHER = re.compile(
    r"^\W*(?:can|could|do|does|did|is|are|was|were|should|will|would|has|have|may|must|est-ce|peut-on|faut-il|"
    r"puis-je|dois-je)\b",
    re.IGNORECASE,
)


def asks_whether(message: str) -> bool:
    """The message asks whether something holds ("Is the GLOB operator case sensitive in SQLite?", "Peut-on…"):
    :data:`_ASKS_WHETHER`, not "Is there one that is more important than the others?", which asks which one."""
    normal = unicodedata.normalize("NFKC", message)
    return _ASKS_WHETHER.search(normal) is not None and _ASKS_WHICH_ONE.search(normal) is None


def asks_how_to(message: str) -> bool:
    """The message asks how to do something (:data:`_ASKS_HOW_TO`), not what or how much."""
    return _ASKS_HOW_TO.search(unicodedata.normalize("NFKC", message)) is not None


# where a question or a clause of it opens: "how long" there asks it, "Which pragma sets how long to wait…" does not
_OPENS = r"(?:^|[,;]|\band\b)\W*"
# a size, a length, a limit, a port, a version, a year: a value written in digits (counts and amounts, which
# answers also give in words, are :func:`asks_count`'s). "port" as a noun ("Which TCP port…", "the default port",
# "port number"), not the verb ("…to port Debian to another kernel?"); in a Japanese question only its own words
# count (:data:`_ASKS_VALUE_JA`: "package と version の間のハイフンは…" names the parts of a file name)
_ASKS_VALUE = re.compile(
    _OPENS + r"how (?:large|big|long|old|far|high|small|wide)\b|\b(?:maximum|minimum|largest|smallest|highest|lowest|"
    r"size of|version|what year)\b|\b(?:the|a|which|what|default|tcp|udp|same|listening|its|this|le|quel|du|un)\s+"
    r"port\b|\bports?\s+(?:number|of|par défaut)\b|\b(?:taille|maximale?|minimale?|version|année)\b",
    re.IGNORECASE,
)
# ポート, not "サポート", "レポート", "インポート"
_ASKS_VALUE_JA = re.compile(r"最大|最小|上限|下限|(?<![ァ-ヺー])ポート|サイズ")
_JAPANESE = re.compile(rf"[{JAPANESE_CHARS}]")


# "Which internal table does SQLite use to keep track of the largest ROWID…?" asks for a table, "Which TCP port…",
# "Which SQLite version…" for a value: the words between "which" and the question's verb say what is asked for
_SPACED_WORD = re.compile(r"[^\s?!.,;:？]+")  # a word as spaces delimit it ("markdown-it-py")
_WHICH = frozenset("which what quel quelle quels quelles".split())
_AUXILIARY = frozenset(
    "does do did is are was were can could will would should has have must may est sont peut doit".split()
)
# "value" is not among them: "Which Cache-Control value does httpx-sse set…?" asks for "no-store"
_VALUE_NOUN = re.compile(
    r"(?:versions?|ports?|sizes?|years?|numbers?|limits?|lengths?|maximum|minimum|widths?|heights?|"
    r"taille|année|numéro|limite|longueur)$",
    re.IGNORECASE,
)


def _after_which(words: Sequence[str], within: int = 1) -> list[str]:
    """The words after the first "which" / "what" / "quel" among the first ``within`` of ``words``, up to the
    question's verb, at most three ("Which TCP port does…": TCP, port); none when no such word opens it."""
    start = next((i for i, w in enumerate(words[:within]) if w.casefold() in _WHICH), None)
    if start is None:
        return []
    return list(itertools.takewhile(lambda w: w.casefold() not in _AUXILIARY, words[start + 1 : start + 4]))


def _asked_thing(message: str) -> list[str]:
    """The words that say what a question opening "Which <thing>…" (or "What", "Quel…") asks for: those up to its
    verb, at most three ("Which TCP port does…": TCP, port); none for another question ("What is the maximum…")."""
    return _after_which(_SPACED_WORD.findall(message))


# the kinds of thing whose name a "Which <kind>…" question asks for: "Which script helps send…" (nmudiff), "On which
# mailing list…" (debian-vote), "Which pragma…", "Which compile-time option…", "Quelle commande…"
_NAMED_KIND = re.compile(
    rf"{KIND_PREFIX}?(?:tools?|programs?|utilit(?:y|ies)|scripts?|commands?|packages?|helpers?|daemons?|lists?|"
    r"pragmas?|options?|variables?|functions?|librar(?:y|ies)|modules?|engines?|guidelines?|keywords?|directives?|builtins?|"
    r"operators?|queues?|frameworks?|outils?|commandes?|programmes?|utilitaires?|paquets?|fonctions?|"
    r"bibliothèques?|listes?|opérateurs?)$",
    re.IGNORECASE,
)


_COMMAND_LINE = re.compile(r"command\s+line$", re.IGNORECASE)  # "Which command line option…" asks for an option


def asked_kind(message: str) -> str | None:
    """The kind of thing a question asks the name of, as it writes it ("mailing list", "compile-time option",
    "commande"): a word of :data:`_NAMED_KIND` among those after its "which" / "what" / "quel" (at its start or
    after a preposition: "On which mailing list…") up to its verb, with the word before it when the question
    writes them as one ("mailing list"); ``None`` for another question ("What is the maximum…"). "Which command
    line option…" asks for an option: "command line" says which options."""
    thing = _after_which(_SPACED_WORD.findall(unicodedata.normalize("NFKC", message)), within=3)
    for i, word in enumerate(thing):
        if _NAMED_KIND.match(word) and not _COMMAND_LINE.match(" ".join(thing[i : i + 2])):
            return " ".join(thing[i - 1 : i + 1]) if i and thing[i - 1].casefold() == "mailing" else word
    return None


def _asks_for_entry(text: str) -> bool:
    """``text`` asks for an option, a command or a named setting (:data:`ASKS_OPTION`, :data:`ASKS_COMMAND`,
    :data:`ASKS_NAME`): the entry that sets a value, not the value."""
    return asks_for_option(text) or asks_for_command(text) or ASKS_NAME.search(text) is not None


def asks_value(message: str) -> bool:
    """The message asks for a value written in digits (:data:`_ASKS_VALUE`: "What is the maximum length of a file
    name…?", "How long does DROP INDEX take…?", "…ユーザー数の上限は？"), not for the option, command or setting that
    sets one ("Which zip options give the maximum compatibility?"), nor for another named thing ("Which internal
    table does SQLite use to keep track of the largest ROWID…?"), nor how to do something or whether ("How do I
    limit the bandwidth rsync uses?"). An answer that writes no number does not answer it."""
    normal = unicodedata.normalize("NFKC", message)
    thing = _asked_thing(normal)
    if thing:  # the thing asked for decides: "Which port does keyring.debian.org use for key uploads?" a value,
        # "Which scp option limits the bandwidth…?" an option
        return not _asks_for_entry(" ".join(thing)) and any(_VALUE_NOUN.match(w) for w in thing)
    asks = _ASKS_VALUE_JA if _JAPANESE.search(normal) else _ASKS_VALUE
    return (
        asks.search(normal) is not None
        and not _asks_for_entry(normal)
        and not asks_how_to(normal)
        and _ASKS_WHETHER.search(normal) is None
        and not asks_duration(normal)  # "a few seconds" answers how long something takes: names_duration's
    )


# "How long does DROP INDEX take?", "How long does tmux wait…?", "How long is the show on for?", "Combien de
# temps…", "何秒", "どのくらいの時間": a length of time, not of text ("How long can the short description be?"), nor the
# name of what sets one ("Which pragma sets how long to wait…?")
_ASKS_DURATION = re.compile(
    _OPENS + r"how long\b[^?]*\b(?:take|takes|took|last|lasts|wait|waits|run|runs|keep|keeps|stay|"
    r"stays|remain|remains|transmit|transmits|retain|retains|sleep|sleeps|block|blocks|expire|expires)\b|"
    + _OPENS
    + r"how long\b[^?]*\bfor\W*$|\bcombien de temps\b|"
    r"何(?:秒|分|時間|日間)|どのくらいの(?:時間|期間)",
    re.IGNORECASE,
)
# a length of time: a unit of time ("in milliseconds", "10 secs", "30 jours", "五分"), with or without its number
_DURATION = re.compile(
    r"\b(?:ms|msecs?|milli-?seconds?|micro-?seconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|"
    rf"months?|years?|secondes?|heures?|jours?|semaines?|mois|ans|années?)\b|[0-9{KANJI_DIGITS}]\s*(?:秒|分|時間|日|週|か月|ヶ月|年)",
    re.IGNORECASE,
)


def asks_duration(message: str) -> bool:
    """The message asks how long something takes or lasts (:data:`_ASKS_DURATION`)."""
    return _ASKS_DURATION.search(unicodedata.normalize("NFKC", message)) is not None


def names_duration(text: str) -> bool:
    """``text`` names a length of time: a unit of time, with or without its number."""
    return _DURATION.search(unicodedata.normalize("NFKC", text)) is not None


# "Is sed faster than awk?", "Do small rowid values take less disk space than large ones?", "Which is better, less
# or most?", "Est-ce plus rapide que…": a question whether one thing is more so than another. An answer compares:
# it writes "than" ("que" in French) or the question's own comparative ("WAL uses many fewer fsync() operations"),
# not a list of related commands
_COMPARATIVE = r"(?:(?!(?:oth|rath|eith|neith|ov|und|aft|nev|us|serv|numb)er\b)\w{2,}er|more|less|fewer|better|worse)"
# "than" that compares: "rather than", "other than" compare nothing ("consider files as separate rather than as a
# single … stream", "a kernel other than Linux")
_THAN = r"(?<!other )(?<!rather )\bthan\b"
_ASKS_COMPARISON = re.compile(
    rf"^\W*(?:(?:is|are|was|were|do|does|did|can|could|will|would)\b(?P<whether>[^?]*\b{_COMPARATIVE}\s+(?:\S+\s+){{0,3}}){_THAN}|"
    rf"which\s+(?:one\s+)?is\s+(?P<which>{_COMPARATIVE})\b[^?]*\bor\b|"
    r"est-ce\b[^?]*\b(?P<plus>(?:plus|moins)\s+\w+)\s+que\b)",
    re.IGNORECASE,
)
# "Is there one that is more important than the others?": which one, not whether; its answer names it
_ASKS_WHICH_ONE = re.compile(
    r"^\W*(?:is|are)\s+there\b|\bthan\s+(?:(?:the|all)\s+)?(?:others?|rest|any\s+other|all)\b", re.IGNORECASE
)
_STATES_COMPARISON = re.compile(rf"{_THAN}|\bque\b|\bas\s+\w+\s+as\b", re.IGNORECASE)


def asks_comparison(message: str) -> tuple[str, ...]:
    """The comparatives of a question whether one thing is more so than another ("faster" for "Is sed faster than
    awk?", "more", "fewer" for "Does WAL mode need more or fewer fsync() calls than…?", "better" for "Which is
    better, less or most?"); ``()`` for any other question. "Only those bigger than 100 MB?" asks for files, not
    whether; "Is there a kernel other than Linux?" compares nothing; "Is there one that is more important than the
    others?" asks which one (:data:`_ASKS_WHICH_ONE`)."""
    normal = unicodedata.normalize("NFKC", message)
    match = _ASKS_COMPARISON.search(normal)
    if match is None or _ASKS_WHICH_ONE.search(normal):
        return ()
    span = match.group("whether") or match.group("which") or match.group("plus") or ""
    return tuple(w.lower() for w in re.findall(rf"\b{_COMPARATIVE}\b|\bplus\s+\w+|\bmoins\s+\w+", span, re.IGNORECASE))


def compares(text: str, comparatives: Sequence[str]) -> bool:
    """``text`` states a comparison: "than", "que", "as fast as", or one of the question's ``comparatives``."""
    normal = unicodedata.normalize("NFKC", text)
    words = {w.lower() for w in re.findall(r"\w+", normal)}
    return _STATES_COMPARISON.search(normal) is not None or any(c in words for c in comparatives)


# "Which SQLite version introduced STRICT tables?", "Which markdown-it-py version dropped support for Python 3.7?":
# a version or a release asked for by what happened in it. An answer states that kind of event, in the question's
# words or others ("added" is "introduced", "supported since", "new in"; "removed" is "dropped", "deprecated", "no
# longer"): "SQLite version 3.37.0 introduced the option of STRICT tables" does not say which version removed them.
_VERSION_ASKED = re.compile(r"\b(?:versions?|releases?)\b|バージョン|リリース", re.IGNORECASE)
_EVENT_ADDED = (
    r"\b(?:add(?:s|ed|ing)?|introduc\w*|includ\w*|first|new(?:ly)?|support(?:s|ed)?|appear\w*|available|since|ajout\w*|"
    r"introdui\w*|inclus\w*|apparu\w*|depuis|nouve\w*|disponible)\b|導入|追加|以降|新た|新しく"
)
_EVENT_REMOVED = (
    r"\b(?:remov\w*|drop(?:s|ped|ping)?|deprecat\w*|delet\w*|discontinu\w*|obsolete\w*|no longer|supprim\w*|"
    r"retir\w*|abandonn\w*|obsolète\w*|plus (?:pris en charge|supporté\w*))\b|削除|廃止|非推奨"
)
_ASKED_EVENTS = tuple(
    (re.compile(asked, re.IGNORECASE), re.compile(stated, re.IGNORECASE))
    for asked, stated in (
        (
            r"\b(?:added|introduced|included|first (?:supported|added|introduced|appeared|shipped)|introduite?s?|"
            r"ajoutée?s?|apparue?s?|incluse?s?)\b|導入|追加",
            _EVENT_ADDED,
        ),
        (
            r"\b(?:removed|dropped|deprecated|deleted|discontinued|supprimée?s?|retirée?s?|abandonnée?s?)\b|削除|廃止",
            _EVENT_REMOVED,
        ),
        # "Which SQLite version made WITHOUT ROWID tables the default?"
        (r"\b(?:made|make|became|become|becomes)\b[^?]*\bdefault\b", r"\b(?:defaults?|by default)\b"),
    )
)


def asked_event(message: str) -> re.Pattern[str] | None:
    """When the message asks which version or release something happened in, the words that state that kind of
    event (added, removed, made the default); ``None`` otherwise."""
    if _VERSION_ASKED.search(message) is None:
        return None
    return next((stated for asked, stated in _ASKED_EVENTS if asked.search(message)), None)


def states_event(event: re.Pattern[str], text: str) -> bool:
    """``text`` writes a word of ``event`` (:func:`asked_event`) as a word, not as a keyword in capitals: "The DROP
    TABLE command works on statistics tables as of SQLite version 3.7.9" says nothing was dropped."""
    return any(not (len(m.group()) > 1 and m.group().isupper()) for m in event.finditer(text))
