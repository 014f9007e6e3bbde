"""Manual page sources (roff with the ``man`` or ``mdoc`` macros: ``wc.1``, ``ssh_config.5``) laid out as a
rendered page, so that :mod:`.manpage` turns them into paragraphs and option entries as it does for
``man wc | col -b``.

No roff formatter is needed: the two macro packages that manual pages use are read directly, which covers
pages written by hand, by help2man (coreutils), by pod2man (Perl, dpkg), by Sphinx and docutils, and BSD
``mdoc`` pages (OpenSSH, tmux). There is no maintained Python library for this, and calling ``groff`` or
``mandoc`` would make ingestion depend on what the machine has installed. What the layout keeps is what the
answers need: the header (``NAME(SECTION)``), section headings, paragraphs, tagged paragraphs (an option's
term with its description indented below it), lists and literal blocks. Typographic requests (fonts,
sizes, spacing, adjustment, traps) are dropped; macro definitions, conditionals and tables keep only their
text. A source without a ``.TH``/``.Dt`` header is not a manual page (:func:`is_roff`).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator

from assistant_bridge.text import join_wrapped

_INDENT = 7  # the body's column in a rendered page
_STEP = 7  # a tagged paragraph's description, and each .RS, go this much further right

_MAN_HEADER = re.compile(r"^[.']\s*TH\s", re.MULTILINE)
_MDOC_HEADER = re.compile(r"^[.']\s*Dt\s", re.MULTILINE)

# \(xx and \[name] glyphs that carry meaning in documentation; any other one is dropped
# fmt: off
_GLYPHS = {
    "hy": "-", "mi": "-", "en": "–", "em": "—", "aq": "'", "dq": '"', "lq": "“", "rq": "”", "oq": "‘", "cq": "’",
    "bu": "•", "co": "©", "rg": "®", "tm": "™", "mu": "×", "di": "÷", "+-": "±", ">=": "≥", "<=": "≤", "!=": "≠",
    "->": "→", "<-": "←", "ga": "`", "ti": "~", "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "or": "|", "at": "@",
    "sh": "#", "Do": "$", "lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "⟨", "ra": "⟩", "de": "°", "ct": "¢",
    "Po": "£", "Eu": "€", "eu": "€", "Ye": "¥", "ss": "ß", "fo": "«", "fc": "»", ":a": "ä", ":o": "ö", ":u": "ü",
    ":A": "Ä", ":O": "Ö", ":U": "Ü", "'e": "é", "`e": "è", "^e": "ê", "'a": "á", "`a": "à", ",c": "ç", "~n": "ñ",
    "sc": "§", "ps": "¶", "pc": "·", "em-": "—", "dg": "†", "OK": "✓", "%": "", "ci": "○", "sq": "□", "rh": "☞",
}
# fmt: on
# \*x, \*(xx, \*[name]: the strings that pod2man, help2man and mdoc define for quotes and marks
_STRINGS = {"lq": "“", "rq": "”", "C`": '"', "C'": '"', "R": "®", "Tm": "™", "Lq": "“", "Rq": "”", "--": "—"}
_ESCAPE = re.compile(
    r"""\\(?:
      f(?:\[[^\]]*\]|\(..|.)                # font
    | s[+-]?(?:\[[^\]]*\]|\(..|'[^']*'|\d\d?)  # size
    | [nk](?:\[[^\]]*\]|\(..|.)             # number register, mark
    | [hvwlLoDbxXRSZ]'[^']*'                # motions, width, drawing
    | [*](?:\[(?P<sb>[^\]]*)\]|\((?P<s2>..)|(?P<s1>.))   # string
    | \((?P<g2>..)                          # glyph \(xx
    | \[(?P<gb>[^\]]*)\]                    # glyph \[name], \[u00E9]
    | N'(?P<num>\d+)'                       # character by number
    | (?P<one>.)                            # any other: \- \e \& \c ...
    )""",
    re.VERBOSE,
)
_ONE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "'": "'", "`": "`", ".": ".", '"': ""}


_MAN_REQUEST = re.compile(r"^\.(?:SH|SS|PP|LP|TP|IP|RS|B|I|BR|IR)\b", re.MULTILINE)
_INCLUDE = re.compile(r"^\.so\s+(\S+)\s*$")


def is_roff(text: str) -> bool:
    """The source of a manual page: a ``.TH`` (man) or ``.Dt`` (mdoc) request near its start, or, without a
    header, at least three of the man macros' requests (``.SH``, ``.TP``…)."""
    head = text[:8000]
    return bool(_MAN_HEADER.search(head) or _MDOC_HEADER.search(head) or len(_MAN_REQUEST.findall(head)) >= 3)


def included_page(text: str) -> str | None:
    """The page a source only points to (``.so man7/uri.7``: an alias page), else ``None``."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(('.\\"', "'\\\""))]
    found = _INCLUDE.match(lines[-1]) if lines else None
    rest = [line for line in lines[:-1] if not line.startswith((".TH", ".Dt", ".Dd", ".Os"))]
    return found.group(1) if found and not rest else None


def _glyph(name: str) -> str:
    if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
        return chr(int(name[1:], 16))
    if name.startswith("char") and name[4:].isdigit():
        return chr(int(name[4:]))
    return _GLYPHS.get(name, "")


def _unescape(text: str) -> str:
    """Plain text of a line of roff: fonts, sizes and motions dropped, glyphs and strings spelt out."""
    if "\\" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        if m.group("one") is not None:
            return _ONE.get(m.group("one"), "")
        string = m.group("sb") or m.group("s2") or m.group("s1")
        if string is not None:
            return _STRINGS.get(string, "")
        glyph = m.group("g2") or m.group("gb")
        if glyph is not None:
            return _glyph(glyph)
        if m.group("num") is not None:
            return chr(int(m.group("num")))
        return ""

    return _ESCAPE.sub(sub, text)


def _args(line: str) -> list[str]:
    """The arguments of a request line, with roff's double quotes ("a b" is one; "" inside is a quote)."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            break
        if line[i] == '"':
            i += 1
            word = []
            while i < n:
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        word.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                word.append(line[i])
                i += 1
            out.append("".join(word))
        else:
            j = i
            while j < n and line[j] not in " \t":
                j += 1
            out.append(line[i:j])
            i = j
    return out


def _strip_comment(line: str) -> str:
    """Drop a ``\\"`` comment (not ``\\\\"``)."""
    i = line.find('\\"')
    while i >= 0:
        backslashes = len(line[:i]) - len(line[:i].rstrip("\\"))
        if backslashes % 2 == 0:
            return line[:i]
        i = line.find('\\"', i + 2)
    return line


_CLOSING = set(".,:;)]”’⟩}")
_OPENING = set("([{“‘⟨")


class _Page:
    """The rendered layout being written: headings at column 0, paragraphs at their indent, one line each."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.words: list[str] = []
        self.indent = _INDENT
        self.base = _INDENT  # the indent .RS/.RE move
        self.literal = False
        self.tag_pending = False  # the next text line is a .TP tag
        self.glue = False  # \c: the next text joins this one without a space
        self.compact = False  # .PD 0, or an mdoc list with -compact
        self.bare_tag = False  # a tag was written and no description yet

    def flush(self) -> None:
        if self.words:
            joined = functools.reduce(join_wrapped, (" ".join(w.split()) for w in self.words), "")
            self.lines.append(" " * self.indent + joined)
        self.words = []
        self.glue = False

    def blank(self) -> None:
        self.flush()
        if self.lines and self.lines[-1]:
            self.lines.append("")

    def paragraph(self, indent: int | None = None) -> None:
        self.blank()
        self.indent = self.base if indent is None else indent

    def heading(self, text: str) -> None:
        self.blank()
        self.base = _INDENT
        if text.strip():
            self.lines.extend([" ".join(text.upper().split()), ""])
        self.indent = self.base

    def tag(self, text: str) -> None:
        """A tagged paragraph: the tag alone at the paragraph's indent, the description one step further. In a
        compact list, tags without a description of their own (a list of names) stay lines of one paragraph."""
        if self.compact and self.bare_tag:
            self.flush()
        else:
            self.blank()
        self.indent = self.base
        self.words = [text]
        self.flush()
        self.indent = self.base + _STEP
        self.bare_tag = True

    def text(self, text: str) -> None:
        if self.literal:
            self.flush()
            if text.strip():
                self.lines.append(" " * self.indent + text.rstrip())
            return
        if self.tag_pending:
            self.tag_pending = False
            self.tag(text)
            return
        if text.strip("\x00 "):
            self.bare_tag = False
        glue = self.glue or (text[:1] in _CLOSING and bool(self.words))
        self.glue = text.endswith("\x00")
        text = text.rstrip("\x00")
        if glue and self.words:
            self.words[-1] += text.strip()
        elif text.strip():
            self.words.append(text.strip())
        elif not self.literal:
            self.blank()  # a blank line in filled text breaks the paragraph


def _text_line(line: str) -> str:
    """A text line, unescaped; a trailing ``\\c`` is kept as a NUL marker so the next line is glued on."""
    line = _strip_comment(line)
    glue = line.rstrip().endswith("\\c")
    if glue:
        line = line.rstrip()[:-2]
    return _unescape(line) + ("\x00" if glue else "")


_FONT_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
_FONT = {"B", "I", "SB", "SM", "R"}
_BREAKS = {"br", "sp", "Sp", "PP", "P", "LP", "HP", "ne", "bp"}
_IGNORED_BLOCKS = {"de", "de1", "am", "ig", "Ig"}


def _requests(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """``(request name, its arguments)`` for each request line and ``("", [line])`` for each text line; macro
    definitions and ignored blocks (``.de`` … ``..``, ``.ig``) are skipped, and so are comments."""
    skip_until: str | None = None
    for raw in lines:
        if skip_until is not None:
            if "".join(raw.split()) == skip_until:  # ".." may be written ".  ."
                skip_until = None
            continue
        if not raw.startswith((".", "'")):
            yield "", [raw]
            continue
        request = _strip_comment(raw[1:]).strip()
        if not request:
            continue
        name, _, rest = request.partition(" ")
        args = _args(rest)
        if name in _IGNORED_BLOCKS:
            end = args[:1] if name in ("ig", "Ig") else args[1:2]  # ".ig XX" ends at ".XX", ".de NAME END" at ".END"
            skip_until = "." + end[0] if end else ".."
            continue
        yield name, args


def _man(lines: list[str], page_name: tuple[str, str] | None) -> list[str]:
    page = _Page()
    header: list[str] = []
    table = False
    table_format = False
    separator = "\t"
    heading_next = False
    for name, args in _requests(lines):
        if table:
            if name == "TE":
                table = False
                page.blank()
            elif name:
                continue
            elif table_format:
                found = re.search(r"tab\s*\((.)\)", args[0])
                separator = found.group(1) if found else separator
                table_format = not args[0].rstrip().endswith(".")  # the options and format lines end with "."
            elif args[0].strip() not in ("_", "=", "T{", "T}"):
                cells = [_unescape(c).strip() for c in re.split(rf"{re.escape(separator)}|T\{{|T\}}", args[0])]
                page.text(" ".join(c for c in cells if c))
                page.blank()  # a row is a paragraph of its own
            continue
        if not name:
            if heading_next and args[0].strip():
                page.heading(_text_line(args[0]).rstrip("\x00"))
                heading_next = False
            else:
                page.text(_text_line(args[0]))
            continue
        if name == "TH":
            header = args
            continue
        if name in ("SH", "SS"):
            page.heading(_unescape(" ".join(args)))
            heading_next = not args  # ".SH" alone: the next text line is the heading
            continue
        heading_next = False
        if name in ("TP", "TQ"):
            page.blank()
            page.tag_pending = True
        elif name == "IP":
            tag = _unescape(args[0]) if args else ""
            if tag.strip() and tag.strip() not in ("•", "○", "□", "-", "*", "o"):
                page.tag(tag)
            else:
                page.paragraph(page.base + _STEP)
                if tag.strip():
                    page.words.append("•")
        elif name == "PD":
            page.compact = bool(args) and args[0] in ("0", "0v", "0.0")
        elif name in _BREAKS:
            page.paragraph()
        elif name == "RS":
            page.flush()
            page.base += _STEP
            page.indent = page.base
        elif name == "RE":
            page.flush()
            page.base = max(_INDENT, page.base - _STEP)
            page.indent = page.base
        elif name in ("nf", "EX", "Vb"):
            page.paragraph()
            page.literal = True
        elif name in ("fi", "EE", "Ve"):
            page.literal = False
            page.blank()
        elif name in _FONT:
            if args:
                page.text(_unescape(" ".join(args)))
            else:
                page.glue = False
        elif name in _FONT_ALTERNATING:
            page.text(_unescape("".join(args)))
        elif name in ("UR", "MT"):
            continue
        elif name in ("UE", "ME"):
            if args:
                page.glue = True
                page.text(_unescape(" ".join(args)))
        elif name in ("SY", "OP"):
            page.text(_unescape(" ".join(args if name == "SY" else ["[" + " ".join(args) + "]"])))
        elif name == "TS":
            table, table_format, separator = True, True, "\t"
            page.blank()
    page.blank()
    if len(header) < 2 and page_name is not None:
        header = list(page_name)
    return _with_header(header[:1], header[1:2], header[4:5], page.lines)


def _with_header(name: list[str], section: list[str], manual: list[str], body: list[str]) -> list[str]:
    if not name or not section:
        return body
    token = f"{'_'.join(_unescape(name[0]).upper().split())}({_unescape(section[0])})"  # "CALLGRIND ANNOTATE"
    middle = _unescape(manual[0]) if manual and manual[0].strip() else "Manual"
    return [f"{token}   {middle}   {token}", "", *body]


# -- mdoc ------------------------------------------------------------------------------------------------
# every macro that may stand inside a line (callable): its name is not text; the tables below say what the
# ones that make text of their own (quotes, brackets, names) make
# fmt: off
_MDOC_CALLABLE = {
    "Ar", "Cm", "Ic", "Ev", "Va", "Pa", "Li", "Nm", "Em", "Sy", "Dv", "Er", "Ad", "Ms", "Tn", "No", "Ns", "Pf", "Fa",
    "Fn", "Ft", "Fo", "Fc", "Vt", "Cd", "In", "Lb", "Ot", "St", "Ux", "Bx", "At", "Nx", "Ox", "Fx", "Dx", "Bsx",
    "Sx", "Xr", "Mt", "Lk", "An", "Ap", "Ta", "Es", "En", "Eo", "Ec", "Bf", "Ef", "Bk", "Ek", "Ql", "Qq", "Dq", "Sq",
    "Pq", "Bq", "Brq", "Aq", "Op", "Oo", "Oc", "Do", "Dc", "So", "Sc", "Qo", "Qc", "Po", "Pc", "Bo", "Bc", "Bro",
    "Brc", "Ao", "Ac", "Fl", "Dl", "Xo", "Xc", "Tg",
}
# fmt: on
_MDOC_WRAP = {
    "Dq": ("“", "”"),
    "Sq": ("‘", "’"),
    "Qq": ('"', '"'),
    "Pq": ("(", ")"),
    "Bq": ("[", "]"),
    "Brq": ("{", "}"),
    "Aq": ("⟨", "⟩"),
    "Op": ("[", "]"),
    "Ql": ("‘", "’"),
}
_MDOC_NAMES = {
    "Ux": "UNIX",
    "Bx": "BSD",
    "Ox": "OpenBSD",
    "Nx": "NetBSD",
    "Fx": "FreeBSD",
    "Dx": "DragonFly",
    "Bsx": "BSD/OS",
    "At": "AT&T UNIX",
}
_MDOC_OPEN = {"Do": "“", "So": "‘", "Qo": '"', "Po": "(", "Bo": "[", "Bro": "{", "Ao": "⟨", "Oo": "["}
_MDOC_CLOSE = {"Dc": "”", "Sc": "’", "Qc": '"', "Pc": ")", "Bc": "]", "Brc": "}", "Ac": "⟩", "Oc": "]"}
_PUNCT = set(".,:;)]?!")
_LIST_KINDS = ("-tag", "-item", "-bullet", "-dash", "-enum", "-hang", "-ohang", "-inset", "-diag", "-column")


def _mdoc_words(args: list[str], name: str = "", nospace: bool = False) -> str:
    """The text of an mdoc line's macros and words: ``Fl v`` is ``-v``, ``Xr ssh 1`` is ``ssh(1)``,
    ``Dq word`` is “word”, ``Op Fl q`` is ``[-q]``."""
    out: list[str] = []
    closers: list[str] = []
    glue = False
    fresh = False  # a quote was just opened: punctuation is its content (.Ql !), not the end of it
    i = 0
    words = ([name] if name else []) + args
    while i < len(words):
        w = words[i]
        i += 1
        opened, fresh = fresh, False
        made = _mdoc_macro(w, words, i)
        if made is not None:
            text, i = made
            _add(out, text, glue)
            glue = False
            continue
        if w in _MDOC_WRAP:
            left, right = _MDOC_WRAP[w]
            _add(out, left, glue)
            glue = True
            closers.append(right)
            fresh = True
            continue
        if w in _MDOC_OPEN:
            _add(out, _MDOC_OPEN[w], glue)
            glue = True
            continue
        if w in _MDOC_CLOSE:
            if out:
                out[-1] += _MDOC_CLOSE[w]
            continue
        if w in ("Ns", "Pf"):
            glue = True
            if w == "Pf" and i < len(words):
                _add(out, _unescape(words[i]), False)
                i += 1
                glue = True
            continue
        if w in _MDOC_CALLABLE:
            continue
        text = _unescape(w)
        if text and set(w) <= _PUNCT and out and not opened:  # "\&." is a word, not a delimiter
            while closers:  # ".Dq UTF8 ." is “UTF8”.
                out[-1] += closers.pop()
            out[-1] += text
            glue = False
            continue
        _add(out, text, glue)
        glue = bool(text) and all(c in _OPENING for c in text)
    line = ("" if nospace else " ").join(x for x in out if x)
    for right in reversed(closers):
        line += right
    return line


def _mdoc_macro(w: str, words: list[str], i: int) -> tuple[str, int] | None:
    """The text of a macro that makes a word of its arguments (``Fl v`` → ``-v``, ``Xr ssh 1`` → ``ssh(1)``,
    ``Fn open path flags`` → ``open(path, flags)``, ``Ux`` → UNIX) and the index after them; ``None`` for
    any other word."""
    if w == "Fl":
        named = i < len(words) and words[i] not in _MDOC_CALLABLE
        return "-" + (_unescape(words[i]) if named else ""), i + (1 if named else 0)
    if w == "Xr" and i + 1 < len(words):
        return f"{_unescape(words[i])}({words[i + 1]})", i + 2
    if w == "Fn" and i < len(words):
        call = [_unescape(a) for a in itertools.takewhile(lambda a: not set(a) <= _PUNCT, words[i + 1 :])]
        return f"{_unescape(words[i])}({', '.join(call)})", i + 1 + len(call)
    if w in _MDOC_NAMES:
        return _MDOC_NAMES[w], i
    return None


def _add(out: list[str], word: str, glue: bool) -> None:
    if glue and out:
        out[-1] += word
    else:
        out.append(word)


def _mdoc(lines: list[str], page_name: tuple[str, str] | None) -> list[str]:
    page = _Page()
    dt: list[str] = []
    lists: list[str] = []  # the open .Bl lists' kinds
    name_seen = ""
    nospace = False  # .Sm off: the words of the following lines join without spaces
    joined = False  # the next line's words join the last ones (in .Sm off, after its first line)
    numbers: list[int] = []
    compact: list[bool] = []

    def put(words: str) -> None:
        """Write a request line's words, joined to the last ones in ``.Sm off`` (after its first line)."""
        nonlocal joined
        if words:
            page.glue = page.glue or joined
            page.text(words)
            page.glue = words[-1] in _OPENING
            joined = nospace

    for name, args in _requests(lines):
        if not name:
            page.text(_text_line(args[0]))
            continue
        if name == "Dt":
            dt = args
        elif name in ("Sh", "Ss"):
            page.heading(_unescape(" ".join(args)))
        elif name == "Nm":
            named = bool(args) and args[0] not in _MDOC_CALLABLE and not set(args[0]) <= _PUNCT
            if named and not name_seen:
                name_seen = _unescape(args[0])
            put(_mdoc_words(args if named else [name_seen, *args], nospace=nospace))
        elif name == "Sm":
            nospace = bool(args) and args[0] == "off"
            joined = False
        elif name == "Nd":
            page.text("— " + _mdoc_words(args))
        elif name in ("Pp", "Lp", "sp", "br"):
            page.paragraph()
        elif name == "Bl":
            kind = next((a for a in args if a in _LIST_KINDS), "-tag")
            lists.append(kind)
            numbers.append(0)
            compact.append("-compact" in args)
            page.compact = compact[-1]
            page.flush()
            if len(lists) > 1:
                page.base += _STEP
        elif name == "El":
            if lists:
                lists.pop()
                numbers.pop()
                compact.pop()
                page.compact = bool(compact) and compact[-1]
                page.blank()
                if lists:
                    page.base = max(_INDENT, page.base - _STEP)
                page.indent = page.base
        elif name == "It":
            kind = lists[-1] if lists else "-tag"
            if kind in ("-bullet", "-dash", "-enum", "-item"):
                page.paragraph(page.base)
                if kind == "-enum":
                    numbers[-1] += 1
                    page.words.append(f"{numbers[-1]}.")
                elif kind != "-item":
                    page.words.append("•")
            else:
                page.tag(_mdoc_words(args))
        elif name in ("Bd", "D1", "Dl"):
            page.paragraph(page.base + _STEP)
            if name == "Bd":
                page.literal = "-literal" in args or "-unfilled" in args
            else:
                page.text(_mdoc_words(args))
                page.blank()
                page.indent = page.base
        elif name == "Ed":
            page.literal = False
            page.blank()
            page.indent = page.base
        elif name in ("Dd", "Os", "Bk", "Ek", "Bf", "Ef", "In", "Rs", "Re"):
            continue
        elif name.startswith("%"):
            page.text(_mdoc_words(args))
        else:
            put(_mdoc_words(args, name if name in _MDOC_CALLABLE else "", nospace=nospace))
    page.blank()
    if len(dt) < 2 and page_name is not None:
        dt = list(page_name)
    return _with_header(dt[:1], dt[1:2], dt[2:3], page.lines)


def roff_to_rendered(source: str, page: tuple[str, str] | None = None) -> str:
    """The manual page source laid out as ``man`` renders it (header, headings, indented paragraphs and
    tagged paragraphs), for :func:`~assistant_bridge.ingest.manpage.man_to_text`.

    :param page: ``(name, section)`` for the header of a source that has none (from its file name, ``wc.1``).
    """
    lines = source.replace("\r\n", "\n").split("\n")
    joined: list[str] = []
    for line in lines:  # a backslash at the end of a line continues it
        if joined and joined[-1].endswith("\\") and not joined[-1].endswith("\\\\"):
            joined[-1] = joined[-1][:-1] + line
        else:
            joined.append(line)
    head = source[:8000]
    body = _mdoc(joined, page) if _MDOC_HEADER.search(head) and not _MAN_HEADER.search(head) else _man(joined, page)
    return "\n".join(body).rstrip() + "\n"
