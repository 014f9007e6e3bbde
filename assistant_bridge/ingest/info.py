"""GNU Info manuals (``grep.info``, ``coreutils.info-2``: what ``makeinfo`` writes from Texinfo), turned into
paragraphs and definition entries.

An Info file is plain text cut into nodes by ``\\x1f`` lines; each node starts with a navigation line
(``File: grep.info,  Node: Matching Control,  Next: …,  Prev: …,  Up: …``) and usually ends with a menu of
its children (``* Menu:`` then ``* Node name::  description`` lines); the file ends with a tag table of
byte offsets. Indexed as they are, those become chunks of navigation. :func:`info_to_text` gives instead:

* no navigation lines, menus, index nodes, tag tables or ``INFO-DIR-SECTION`` entries, and no
  "This is grep.info, produced by makeinfo …" line;
* section headings (``2.1.2 Matching Control`` over its ``-----`` rule) as paragraphs of their own;
* each paragraph on one line; an example (a block indented further than the text around it) line by line;
* each table entry as one line, ``-e PATTERNS, --regexp=PATTERNS: Use PATTERNS as …`` (the quoted terms of
  ``@table``/``@item`` with their indented description), and each definition as one line,
  ``Function: int asn1_parser2tree (const char * FILE, …): FILE: specify …`` (``@deffn``);
* the title: the heading of the ``Top`` node (``GNU Grep``), else the file name.
"""

from __future__ import annotations

import re

from assistant_bridge.ingest.manpage import join_lines, line_indent

_NODE_LINE = re.compile(r"^File: [^,]+,\s+Node: ([^,\n]+)")
_UNDERLINE = re.compile(r"^([*=\-.])\1{2,}\s*$")
_MAKEINFO = re.compile(r"^This is .+, produced by [Mm]akeinfo")
_MENU_ITEM = re.compile(r"^\* [^:]+:")
# a table term: the whole line quoted, quotes within it too ("'--prunepaths='PATH...''")
_TERM = re.compile(r"^\s*(?:‘[^’]*’|'(?:[^']|'[^'\s]*')*'|`[^']*')\s*$")
_DEFINITION = re.compile(r"^ -- ([A-Za-z ]+): (.+)$")
_INDEX_NODE = re.compile(r"\bindex\b", re.IGNORECASE)
_NON_TEXT_BLOCK = ("Tag Table:", "Indirect:", "End Tag Table", "Local Variables:")


def is_info(text: str) -> bool:
    """An Info file: a ``produced by makeinfo`` line near the start, or a node separator and a node line."""
    head = text[:4000]
    return bool(_MAKEINFO.search(head) or re.search(r"\x1f\s*\nFile: [^,]+,\s+Node: ", head))


def _unquote(term: str) -> str:
    """The term without the quotes around it, those within it kept: ``--prunepaths='PATH...'``."""
    term = term.strip()
    return term[1:-1] if len(term) >= 2 and term[0] in "‘'`" and term[-1] in "’'" else term


def _paragraphs(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


_LEVEL = 5  # columns ``makeinfo`` indents each level by: a table's description, a definition's body, an example
_TERM_CHARS = 40  # an unquoted table term ("CLOSURE", "LANG environment"): a few words on a line of its own
_TERM_WORDS = 4
_NOT_TERM = re.compile(r"[.:;,!?]$|[(){};=]")
_LIST_ITEM = re.compile(r"^\s*(?:[•*+-]|\d{1,2}[.)]|[A-Z][.)])\s")  # an item of a list, with its mark or number


def _rounded(indent: int) -> int:
    """An indentation rounded down to a level (:data:`_LEVEL`)."""
    return indent // _LEVEL * _LEVEL


def _level(para: list[str]) -> int:
    """The indentation level of a paragraph of text: that of its first line (a top-level paragraph indents it by
    3), or where the text of a list item starts after its mark ("  2. How do I search…": 5), rounded down to a
    level."""
    item = _LIST_ITEM.match(para[0])
    return _rounded(item.end() if item else line_indent(para[0]))


def _unquoted_term(para: list[str], level: int) -> bool:
    """The paragraph's first line is the term of a table entry that ``@table @asis`` or ``@var`` left unquoted
    ("     CLOSURE" over "          The address of a …"): short, no sentence, no code, at the text's level, and the
    description below it indented one level further."""
    first = para[0].strip()
    return (
        len(para) > 1
        and line_indent(para[0]) <= level
        and len(first) <= _TERM_CHARS
        and len(first.split()) <= _TERM_WORDS
        and _NOT_TERM.search(first) is None
        and all(line_indent(x) >= line_indent(para[0]) + _LEVEL - 1 for x in para[1:])
    )


def _lead_in(para: list[str], level: int) -> int:
    """How many lines of the paragraph lead into an example that the rest of it is, a level further in than the
    text (``level``) and further in than they are ("   Output of 'diff3 -3 lao tzu tao':" over "     8c");
    ``len(para)`` when it holds no such example. A list item's text is no example (it stands right of its mark)."""
    if _LIST_ITEM.match(para[0]):
        return len(para)
    threshold = max(level + _LEVEL, line_indent(para[0]) + 2)
    lead = next((i for i, x in enumerate(para) if line_indent(x) >= threshold), len(para))
    if any(line_indent(x) < threshold for x in para[lead:]):
        return len(para)
    return lead


def _example(lines: list[str]) -> list[str]:
    """An example's lines without the indentation they share."""
    cut = min(line_indent(x) for x in lines)
    return [x[cut:].rstrip() for x in lines]


def _node_text(lines: list[str]) -> list[str]:
    """The paragraphs of one node's body (navigation line already removed).

    An example is a paragraph of several lines indented a level further than the text around it: the top
    level's examples stand at 5 columns, those in a table entry's description or a definition's body (at 5) at
    10. A later paragraph of such a description, at 5, is text like the first, joined into one line."""
    body: list[str] = []
    for line in lines:
        if line.startswith("* Menu:"):
            break  # the menu runs to the end of the node
        body.append(line)
    out: list[str] = []
    terms: list[str] = []  # table terms waiting for their description
    level = 0  # the indentation of the text the paragraphs belong to
    for para in _paragraphs(body):
        if len(para) == 2 and _UNDERLINE.match(para[1]) and len(para[1].strip()) >= len(para[0].strip()) - 2:
            out.append(para[0].strip())  # a heading over its rule
            level = 0
            continue
        while para and _TERM.match(para[0]):  # ‘-e PATTERNS’ / ‘--regexp=PATTERNS’, then the description
            terms.append(_unquote(para[0]))
            para = para[1:]
        if not para:
            continue
        definition = _DEFINITION.match(para[0])
        if definition:
            category, head = definition.group(1), [definition.group(2).strip()]
            rest = para[1:]
            while rest:
                if line_indent(rest[0]) >= 2 * _LEVEL:  # the definition line wrapped
                    head[-1] += " " + rest.pop(0).strip()
                elif (more := _DEFINITION.match(rest[0])) is not None:  # another name for it (@deffnx)
                    rest.pop(0)
                    same = more.group(1) == category
                    head.append(more.group(2).strip() if same else f"{more.group(1)}: {more.group(2).strip()}")
                else:
                    break
            description = join_lines([x.strip() for x in rest])
            out.append(f"{category}: {', '.join(head)}" + (f": {description}" if description else ""))
            level = _LEVEL
            continue
        if line_indent(para[0]) < level:
            level = _level(para)  # the text a table or a list was in goes on
        if terms:
            out.append(f"{', '.join(terms)}: {join_lines([x.strip() for x in para])}")
            terms = []
            level = _level(para)
        elif _unquoted_term(para, level):
            out.append(f"{para[0].strip()}: {join_lines([x.strip() for x in para[1:]])}")
            level = _rounded(min(line_indent(x) for x in para[1:]))
        elif len(para) > 1 and min(line_indent(x) for x in para) >= level + _LEVEL:
            out.append("\n".join(_example(para)))  # an example, line by line
        elif (lead := _lead_in(para, level)) < len(para):
            # lines that lead into an example right under them ("Example: delete the second input line:")
            out.append("\n".join([join_lines([x.strip() for x in para[:lead]]), *_example(para[lead:])]))
            level = _rounded(line_indent(para[0]))
        else:
            out.append(join_lines([x.strip() for x in para]))
            if len(para) > 1 or line_indent(para[0]) < level + _LEVEL:
                level = _level(para)
    if terms:
        out.append(", ".join(terms))
    return out


def info_to_text(text: str) -> tuple[str, str | None]:
    """``(text, title)`` of an Info file (see the module docstring); call when :func:`is_info`."""
    blocks = text.replace("\r\n", "\n").split("\x1f")
    paragraphs: list[str] = []
    title: str | None = None
    for number, block in enumerate(blocks):
        lines = block.strip("\n").split("\n")
        if not lines or lines[0].startswith(_NON_TEXT_BLOCK):
            continue
        node = _NODE_LINE.match(lines[0])
        if node is None:
            if number:
                continue  # not a node: a tag table or the like
            lines = _preamble(lines)  # the text before the first node: its copyright notice stays
        else:
            lines = lines[1:]
            name = node.group(1).strip()
            if _INDEX_NODE.search(name):
                continue  # an index is a menu of every term: navigation
        part = _node_text(lines)
        if node is not None and node.group(1).strip() == "Top" and title is None and part:
            title = part[0]
        paragraphs.extend(part)
    return "\n\n".join(p for p in paragraphs if not _MENU_ITEM.match(p)), title


def _preamble(lines: list[str]) -> list[str]:
    out: list[str] = []
    skipping = False
    making = False  # "This is grep.info, produced by makeinfo version 6.8 from" and its next line
    for line in lines:
        making = bool(_MAKEINFO.match(line)) or (making and bool(line.strip()))
        if making:
            continue
        if line.startswith("INFO-DIR-SECTION") or line.startswith("START-INFO-DIR-ENTRY"):
            skipping = True
        if not skipping:
            out.append(line)
        if line.startswith("END-INFO-DIR-ENTRY"):
            skipping = False
    return out
