"""Manual pages rendered to plain text (``man wc | col -b``), turned back into paragraphs and option entries.

A rendered page repeats ``WC(1)   User Commands   WC(1)`` as its first line and a version/date footer as
its last, wraps every paragraph at the terminal width with justification spaces and hyphenation, and lays
an option out as a term line with its description indented below it. Indexed as it is, the header becomes
the title, the footer a chunk of its own, and an option's description loses its option.
:func:`man_to_text` gives instead:

* the title ``wc(1): print newline, word, and byte counts for each file``, from the header and the NAME line;
* no header and no footer line;
* section headings (``DESCRIPTION``) as paragraphs of their own;
* each paragraph on one line: wrapped lines joined, justification spaces collapsed, words hyphenated at a
  line end (U+2010, as groff breaks them) joined again;
* each option entry as one line, ``-l, --lines: print the newline counts``, so the option and what it does
  stay in one sentence, one chunk and one answer; so is each keyword entry of a configuration page
  (``ServerAliveCountMax: Sets the number of server alive messages … The default value is 3.``) and each
  option that a page lists under bullets (``○   --version:``, ``○   -k, --keep: keep source file(s)…`` in
  jq(1) and zstd(1)), without its bullet.
"""

from __future__ import annotations

import re

from assistant_bridge.text import BULLETS, CJK_CHARS, NAME_LINE_PARTS, join_wrapped

_HEADER_START = re.compile(r"\s*([A-Za-z0-9_.:+@-]+)\(([0-9][A-Za-z0-9]*)\)\s{2,}\S")
_HEADER_MAX = 300  # characters: a header line is as wide as the terminal it was rendered for
_HEADING = re.compile(r"^[A-Z][A-Z0-9 ,/&()'-]*$")
# a translated page's section headings are in its language: "NOM", "BEZEICHNUNG" are capitals, Japanese ones
# ("名前", "書式", "説明", "関連項目") a few characters without space or full stop, at the left margin as all headings
_CJK_HEADING = re.compile(rf"^[{CJK_CHARS}]{{1,8}}$")
# the NAME section, whose line gives the title its description ("find(1): Rechercher des fichiers…")
_NAME_SECTIONS = frozenset({"NAME", "NOM", "NOMBRE", "NOME", "BEZEICHNUNG", "НАЗВАНИЕ", "名前", "名称"})
_SPACES = re.compile(r"[ \t]{2,}")
_HYPHEN_BREAK = "\u2010"
_TERM_INDENT_MAX = 8
_NESTED_TAG_INDENT_MAX = 16  # a tag in a tagged paragraph's description: parted(8)'s commands at 14 columns
_CODE_CHARS = re.compile(r"[{}()'\"\\;^*$`]|^\[")  # quoting, blocks, calls, escapes, an INI section: code
_SUBHEADING_INDENT_MAX = 5  # man(7) renders a .SS heading at 3 columns, the paragraphs and tags below it at 7
_TAG_MAX = 60  # characters: a keyword or a command with its arguments, not a line of prose
_TAG_WORD_MAX = 24  # characters of a one-word tag with its description on the same line ("port   You can …")
# a list bullet as groff renders it, then its item: "○   -k, --keep: keep source file(s)…" (zstd(1), jq(1))
_BULLET = re.compile(rf"^[{BULLETS}]\s+(?=\S)")
# a list's bullet (groff's ASCII rendering of a bullet is "o") or number, where a tag would stand
_LIST_MARK = re.compile(rf"[{BULLETS}o*+-]|\d{{1,2}}[.)]|[a-z][.)]")


def _header(line: str) -> str | None:
    """``name(section)``, lower-cased, when ``line`` is a manual page header (``WC(1)   User Commands   WC(1)``)."""
    if len(line) > _HEADER_MAX:
        return None
    match = _HEADER_START.match(line)
    if match is None:
        return None
    token = f"{match.group(1)}({match.group(2)})"
    rest = line.rstrip()
    return token.lower() if rest.lower().endswith(token.lower()) and len(rest) > len(token) * 2 else None


def _headless_name(lines: list[str], first: int) -> str | None:
    """The command a page without its header names, when its first line is the NAME section's heading and the
    next one its NAME line ("NOM" / "file — Déterminer le type d'un fichier": ``file``), else None."""
    if lines[first].strip() not in _NAME_SECTIONS:
        return None
    nxt = next((line.strip() for line in lines[first + 1 : first + 4] if line.strip()), "")
    match = NAME_LINE_PARTS.match(nxt) if len(nxt) <= _HEADER_MAX else None
    name = match.group(1).split(",")[0].strip() if match else ""
    return name.lower() if name and " " not in name else None


def is_man_page(text: str) -> bool:
    """The first non-blank line is a rendered manual page header (``NAME(SECTION) … NAME(SECTION)``), or the
    page was rendered without it and starts with its NAME section (:func:`_headless_name`)."""
    lines = text.split("\n", 20)[:20]
    for i, line in enumerate(lines):
        if line.strip():
            return _header(line) is not None or _headless_name(lines, i) is not None
    return False


def join_lines(lines: list[str]) -> str:
    """The stripped lines of one paragraph as one line: words hyphenated at a line end (U+2010, as groff breaks
    them) joined again, Japanese text joined without a space (:func:`~assistant_bridge.text.join_wrapped`), runs
    of spaces collapsed."""
    out = ""
    for line in lines:
        if out.endswith(_HYPHEN_BREAK) and line[:1].isalpha():
            out = out[:-1] + line
        else:
            out = join_wrapped(out, line)
    return _SPACES.sub(" ", out)


def line_indent(line: str) -> int:
    """How far a line is indented (-1 for a blank line)."""
    return len(line) - len(line.lstrip()) if line.strip() else -1


def _next_line(body: list[str], index: int) -> str:
    """The first non-blank line after ``body[index]``, or ""."""
    return next((line for line in body[index + 1 :] if line.strip()), "")


def _tag_gap(stripped: str) -> re.Match[str] | None:
    """The gap after a one-word tag that a stripped line starts with ("port   You can override …"), or None."""
    gap = _SPACES.search(stripped)
    if gap is None or gap.start() > _TAG_WORD_MAX or " " in stripped[: gap.start()]:
        return None
    return gap


def _description_column(line: str) -> int:
    """Where a one-word tag's description starts on ``line`` ("NR          The total number…"), or -1; a list
    bullet or number is no tag ("o   does not require super-user privileges", "1.  A session ID…")."""
    stripped = line.strip()
    gap = _tag_gap(stripped)
    if gap is None or _LIST_MARK.fullmatch(stripped[: gap.start()]):
        return -1
    return line_indent(line) + gap.end()


def _in_list(body: list[str], index: int, indent: int, column: int) -> bool:
    """``body[index]``, a line alone in its paragraph, is an entry of a list of one-word tags whose descriptions
    start at ``column`` (gawk(1)'s variables: "NF          The number of fields in the current input record.").
    A paragraph's last line is not justified, so its wide gap is the list's layout; a neighbour shows the
    column: the line above, the end of a description that ran over several lines, or the entry below."""
    above = next((line for line in reversed(body[:index]) if line.strip()), "")
    below = _next_line(body, index)
    if line_indent(above) == column or _description_column(above) == column:
        return True
    return line_indent(below) == indent and _description_column(below) == column


def _is_tag(stripped: str, indent: int, nxt: str) -> bool:
    """A tagged paragraph's tag: a short line that is no sentence, alone at its indent, whose next line
    ``nxt`` is indented further (``ServerAliveCountMax`` in ssh_config(5), ``port`` in rsyncd.conf(5)). A tag
    nested in another's description (parted(8)'s commands, "print print-type" under "[command [options]]") is
    no line of code: an example's command and its output are laid out alike (jq(1)'s "jq '.foo'")."""
    if (
        indent > _NESTED_TAG_INDENT_MAX
        or len(stripped) > _TAG_MAX
        or stripped[-1] in ".:;,!?"
        or _SPACES.search(stripped)
    ):
        return False
    if indent > _TERM_INDENT_MAX and _CODE_CHARS.search(stripped):
        return False
    return line_indent(nxt) >= indent + 2


def _is_subheading(stripped: str, indent: int, nxt: str) -> bool:
    """A subsection's heading (``.SS``, rendered between a section heading's column and the body's) whose first
    line below is an option's term: wget(1)'s "Recursive Retrieval Options" above "-r", "--recursive". Read as a
    tag, it would make the option its description ("Recursive Retrieval Options: -r --recursive Turn on …"), and
    the option would be an entry of no list. The option may stand under a list bullet."""
    below = nxt.strip()
    bullet = _BULLET.match(below)  # "○   -#: selects # compression level" under zstd(1)'s "Operation Modifiers"
    option = below[bullet.end() :] if bullet else below
    return 0 < indent < _SUBHEADING_INDENT_MAX and line_indent(nxt) > indent and option.startswith("-")


def man_to_text(text: str) -> tuple[str, str | None]:
    """``(text, title)`` of a rendered manual page (see the module docstring); call when :func:`is_man_page`."""
    lines = text.replace("\r\n", "\n").split("\n")
    first = next(i for i, line in enumerate(lines) if line.strip())
    token = _header(lines[first])
    if token is None:  # no header: the page starts with its NAME section
        token = _headless_name(lines, first)
        assert token is not None, "man_to_text needs a manual page (is_man_page)"
        body = lines[first:]
    else:
        body = lines[first + 1 :]
        last = max((i for i, line in enumerate(body) if line.strip()), default=-1)
        if last >= 0 and body[last].strip().lower().endswith(token):
            body = body[:last]
    paragraphs: list[str] = []
    name_line: str | None = None
    section = ""
    current: list[str] = []
    term: str | None = None  # an option's term line, waiting for its indented description

    def flush() -> None:
        nonlocal current, term
        if term is not None:
            paragraphs.append(f"{term}: {join_lines(current)}" if current else term)
        elif current:
            paragraphs.append(join_lines(current))
        current, term = [], None

    term_indent = 0
    for index, raw in enumerate(body):
        stripped = raw.strip()
        if not stripped:
            if term is not None and not current and line_indent(_next_line(body, index)) > term_indent:
                continue  # "-i[SUFFIX], --in-place[=SUFFIX]", a blank line, then its indented description
            flush()
            continue
        indent = line_indent(raw)
        if term is None:
            term_indent = indent
        if indent == 0 and (_HEADING.match(stripped) or _CJK_HEADING.match(stripped)):
            flush()
            section = stripped
            paragraphs.append(stripped.capitalize())
            continue
        if section in _NAME_SECTIONS and name_line is None:
            name_line = stripped
        bullet = _BULLET.match(stripped)
        item = stripped[bullet.end() :] if bullet else ""
        if item.startswith("-") and (item.endswith(":") or ": " in item) and not current and term is None:
            # an option under a bullet: "--version:", its description below, or "-k, --keep: keep source…"
            term, _, rest = item.rstrip(":").partition(": ")
            if rest:
                current.append(rest)
            continue
        if not current and term is None and indent <= _TERM_INDENT_MAX and stripped.startswith("-"):
            gap = _SPACES.search(stripped)
            if gap is None:  # the term alone; its description follows, indented
                term = stripped
                continue
            term, rest = stripped[: gap.start()], stripped[gap.end() :]  # "-C     list entries by columns"
            current.append(rest)
            continue
        if not current and term is None and section not in _NAME_SECTIONS:
            nxt = body[index + 1] if index + 1 < len(body) else ""
            if _is_subheading(stripped, indent, nxt):
                paragraphs.append(stripped)  # "Recursive Retrieval Options", its options below: not their tag
                continue
            if _is_tag(stripped, indent, nxt):
                term = stripped  # "ServerAliveCountMax", "max connections": a keyword, its description below
                continue
            gap = _tag_gap(stripped)
            if gap is not None:
                column = indent + gap.end()  # "port   You can override …", its next line at the description's column
                one_line = not nxt.strip() and _description_column(raw) == column
                if line_indent(nxt) == column or (one_line and _in_list(body, index, indent, column)):
                    term = stripped[: gap.start()]
                    current.append(stripped[gap.end() :])
                    continue
        current.append(stripped)
    flush()
    title = token
    match = NAME_LINE_PARTS.match(name_line or "") if len(name_line or "") <= _HEADER_MAX else None
    if match:
        title = f"{token}: {_SPACES.sub(' ', match.group(2)).strip()}"
    return "\n\n".join(paragraphs), title
