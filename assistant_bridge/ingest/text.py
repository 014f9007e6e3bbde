"""Byte decoding, whitespace clean-up and light Markdown stripping.

Everything here is pure: bytes or str in, str out. Offsets into the returned text are what chunks index, so
cleaning happens *before* any offset is taken.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from assistant_bridge.errors import DocumentParseError
from assistant_bridge.text import CJK_CHARS, KANA, TABLE_CELL

# Legacy encodings tried after UTF-8 and any declared charset. Each one that decodes the bytes is scored by
# how plausible its non-ASCII characters are (Japanese script for the Japanese encodings, accented letters
# inside words for cp1252), and the most plausible wins; bytes that no encoding makes plausible are refused
# rather than stored as mojibake (EUC-JP decodes "as cp1252" without an error, into nonsense).
FALLBACK_ENCODINGS: tuple[str, ...] = ("euc_jp", "cp932", "cp1252")
_JAPANESE_ENCODINGS = frozenset({"euc_jp", "cp932"})
_JAPANESE = re.compile(f"[{CJK_CHARS}\u3000-\u303f\uff01-\uff65]")
_KANA = re.compile(f"[{KANA}]")
_LATIN_PUNCTUATION = frozenset("«»€’‘“”–—…°·©®™§¶")
# ISO-2022-JP is 7-bit: it decodes as ASCII (and UTF-8) without an error, so its escape sequences tell
_ISO2022_JP_ESCAPE = re.compile(rb"\x1b(?:\$[@B]|\$\(D|\([BJI])")
PLAUSIBLE = 0.9  # the share of plausible non-ASCII characters below which no legacy encoding is believed

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u200b\u200c\u200d\u2060\ufeff]")
_TRAILING_SPACE = re.compile(r"[ \t\u00a0\u3000]+\n")
_MANY_BLANK_LINES = re.compile(r"\n{3,}")
_INLINE_SPACE = re.compile(r"[ \t]+")
# typeset forms of ASCII characters, which a reader copies into a shell and a question types as ASCII: groff's
# PDFs set the dash of every option as a minus sign ("−l", "−−login") and "~" as a small tilde ("˜/.bashrc")
_TYPESET_ASCII = str.maketrans({"\u2212": "-", "\u02dc": "~"})


def decode_bytes(data: bytes, *, declared: str | None = None) -> str:
    """Decode text bytes: BOM, then ISO-2022-JP when its escape sequences are there, then UTF-8, then
    ``declared``, then the most plausible of :data:`FALLBACK_ENCODINGS`.

    :raises DocumentParseError: for binary data (NUL bytes without a UTF-16 BOM), or bytes that no candidate
        encoding decodes into plausible text (naming the encodings tried).
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DocumentParseError("The file starts with a UTF-16 mark but is not valid UTF-16.") from exc
    if b"\x00" in data[:8192]:
        raise DocumentParseError("The file looks binary (it contains NUL bytes), not text.")
    if _ISO2022_JP_ESCAPE.search(data[:65536]):
        try:
            return data.decode("iso2022_jp_ext")
        except UnicodeDecodeError:
            pass
    candidates = ["utf-8", *([declared] if declared else [])]
    for encoding in candidates:
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    scored: list[tuple[float, int, str]] = []
    for rank, encoding in enumerate(FALLBACK_ENCODINGS):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        scored.append((plausibility(text, encoding), -rank, text))
    if scored:
        score, _, text = max(scored)
        if score >= PLAUSIBLE:
            return text
    raise DocumentParseError(
        "The text is not valid UTF-8 and its encoding could not be told (it does not read as Japanese in "
        "EUC-JP or Shift_JIS, nor as Western text in cp1252); save it as UTF-8 or send its charset.",
        tried=[*candidates, *FALLBACK_ENCODINGS],
    )


def plausibility(text: str, encoding: str) -> float:
    """The share of ``text``'s non-ASCII characters that make sense in ``encoding``: Japanese script and
    punctuation for a Japanese encoding (halved without any kana); for cp1252, letters next to an ASCII letter or another accented one
    (``été``, ``Größe``) and common typographic marks (a Japanese text read as cp1252 is runs of symbols)."""
    japanese = encoding in _JAPANESE_ENCODINGS
    total = good = 0
    for i, ch in enumerate(text):
        if ord(ch) < 128:
            continue
        total += 1
        if japanese:
            good += bool(_JAPANESE.match(ch))
        elif ch in _LATIN_PUNCTUATION:
            good += 1
        elif ch.isalpha() and ord(ch) < 0x250:
            near = text[max(i - 1, 0) : i] + text[i + 1 : i + 2]
            good += (
                any(c.isascii() and c.isalpha() for c in near)
                or len(near) == 2
                and all(c.isalpha() and ord(c) < 0x250 for c in near)
            )
    if total == 0:
        return 1.0
    if japanese and not _KANA.search(text):
        return 0.5 * good / total  # Japanese prose always has kana; lone kanji are Western bytes misread
    return good / total


def ascii_typesetting(text: str) -> str:
    """The minus sign and the small tilde as ASCII ``-`` and ``~``, one character for one (offsets hold)."""
    return text.translate(_TYPESET_ASCII)


def clean_text(text: str) -> str:
    """Normalise newlines and Unicode (NFC, :func:`ascii_typesetting`), drop control and zero-width characters,
    trim trailing spaces, and keep at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = ascii_typesetting(unicodedata.normalize("NFC", text))
    text = _CONTROL.sub("", text).replace("\t", " ")
    text = _TRAILING_SPACE.sub("\n", text + "\n")
    text = _MANY_BLANK_LINES.sub("\n\n", text)
    return text.strip()


def collapse_inline_space(text: str) -> str:
    return _INLINE_SPACE.sub(" ", text)


# --- Markdown -----------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$")
_QUOTE = re.compile(r"^\s{0,3}>\s?")
_BULLET = re.compile(r"^(\s*)[*+-]\s+")
# a list item that is nothing but a link to a heading of the same page: a table of contents ("- [Usage](#usage)")
_TOC_ITEM = re.compile(r"^\s*(?:[*+-]|\d{1,3}[.)])\s+\[[^\]]+\]\(#[^)\s]*\)\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
# an image, linked or not, as a whole: in a heading it is a badge ("# Thread-pool Controls [![Build Status](…)](…)")
_ANY_IMAGE = re.compile(r"\[?!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])(?:\]\([^)]*\)|\]\[[^\]]*\])?")
# a line of nothing but (linked) images: a README's badges ("[![PyPI][pypi-badge]][pypi-link]")
_BADGES = re.compile(rf"^\s*(?:{_ANY_IMAGE.pattern}\s*)+$")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^>]*>", re.DOTALL)
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_CODE = re.compile(r"`+([^`]+?)`+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_FRONT_MATTER_TITLE = re.compile(r"^title:\s*[\"']?(.*?)[\"']?\s*$", re.MULTILINE)


def _inline(line: str) -> str:
    line = _IMAGE.sub(r"\1", line)
    line = _LINK.sub(r"\1", line)
    line = _REF_LINK.sub(r"\1", line)
    line = _AUTOLINK.sub(r"\1", line)
    line = _HTML_TAG.sub("", line)
    line = _CODE.sub(r"\1", line)
    line = _STRONG.sub(r"\2", line)
    line = _STRIKE.sub(r"\1", line)
    line = _EM_STAR.sub(r"\1", line)
    line = _EM_UNDERSCORE.sub(r"\1", line)
    return _ESCAPE.sub(r"\1", line)


def _table_row(line: str) -> str:
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    return TABLE_CELL.join(cell for cell in cells if cell)


_HTML_H1 = re.compile(r"^\s*<h1\b[^>]*>(.*?)</h1>\s*$", re.IGNORECASE)
_TITLE_AFTER_LINES = 2  # a title may follow a line or two (a logo's alt text, a tagline), not the text


def markdown_to_text(source: str) -> tuple[str, str | None]:
    """Strip Markdown markup lightly and return ``(text, title)``.

    Headings become their own paragraphs (so chunks break before them), link targets, emphasis markers,
    code fences, HTML tags, table rules, lines of badges (images only) and the items of a table of contents
    (a list item that is only a link to a heading of the page, ``- [Usage](#usage)``) go, and so do images in a
    heading (badges beside a README's title); list markers become ``- ``. The title is the first level-1 heading
    (Markdown or an HTML ``<h1>`` line) that comes before the text does (a package's long description often
    ends with its changelog, whose ``# Changelog`` names no more than that part), else a front-matter
    ``title:``, else ``None``.
    """
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    lines = source.split("\n")
    front_title = None
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:60], start=1):
            if line.strip() in ("---", "..."):
                match = _FRONT_MATTER_TITLE.search("\n".join(lines[1:index]))
                front_title = match.group(1).strip() if match else None
                lines = lines[index + 1 :]
                break
    out: list[str] = []
    title = None
    in_code = False
    text_lines = 0  # lines of text so far: a level-1 heading after them is no title
    for line in lines:
        if _FENCE.match(line):
            in_code = not in_code
            out.append("")
            continue
        if in_code:
            out.append(line)
            continue
        atx = _ATX.match(line)
        if atx:
            heading = " ".join(_inline(_ANY_IMAGE.sub("", atx.group(2))).split())
            if title is None and len(atx.group(1)) == 1 and heading and text_lines <= _TITLE_AFTER_LINES:
                title = heading
            out.extend(["", heading, ""])
            continue
        if _SETEXT.match(line) and out and out[-1].strip():
            if title is None and line.strip().startswith("=") and text_lines <= _TITLE_AFTER_LINES + 1:
                title = out[-1].strip()
            out[-1:] = ["", out[-1], ""]
            continue
        if _RULE.match(line):
            out.append("")
            continue
        if _TABLE_RULE.match(line) or _LINK_DEF.match(line) or _BADGES.match(line) or _TOC_ITEM.match(line):
            continue
        line = _QUOTE.sub("", line)
        line = _BULLET.sub(r"\1- ", line)
        h1 = _HTML_H1.match(line)
        if h1 and title is None and text_lines <= _TITLE_AFTER_LINES:
            title = " ".join(_inline(h1.group(1)).split()) or None
        if line.lstrip().startswith("|"):
            line = _table_row(line)
        line = _inline(line)
        text_lines += bool(line.strip())
        out.append(line)
    return clean_text("\n".join(out)), title or front_title
