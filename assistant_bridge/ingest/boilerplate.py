"""Main-content extraction for HTML: the page's own text, without the site around it.

Documentation sites and wikis wrap every page in the same chrome: navigation bars and sidebars, version
pickers, search boxes, breadcrumbs, "Next / Previous / Up" panels, theme menus, footers, and on wikis
navboxes, infoboxes, reference lists and edit links. Indexed, that chrome becomes chunks that match every
question and answers none. :func:`main_content` removes it before the text is rendered
(:mod:`.htmltext`), with rules in this order:

1. **The main region.** When the page marks one (a single ``<main>``, ``role="main"``, a single
   ``<article>``, or a wiki's ``mw-content-text``), only it is kept.
2. **Structural chrome** inside it: ``nav``, ``aside``, ``form``, ``button``, ``select``, ``dialog`` and
   ``menu`` elements; ``header``/``footer`` outside an ``article``; ARIA landmarks of navigation, search,
   banners, footers, menus and toolbars; hidden elements (``hidden``, ``aria-hidden``, ``display:none``).
3. **Named chrome**: an element whose class or id names navigation, a sidebar, a breadcrumb, a table of
   contents, a footer, a version picker, a navbox/infobox or references (:data:`_NAMED_PARTS`,
   :data:`_NAMED_EXACT`). A named element holding most of the page's text is kept: a name is only a hint.
4. **Link lists**: a list, table or block of at least :data:`LINK_LIST_MIN` links whose text is nearly all
   link text (:data:`LINK_DENSITY`): a menu, a navbox or a table of contents by another name.

Why not a general-purpose extractor: trafilatura (Apache-2.0) was measured on this machine's
documentation pages and is tuned for articles: it lost the introduction of the zlib usage guide, kept the
texinfo "Next/Previous/Up" panels, and its Markdown escaped ``#include <stdio.h>`` into ``#include \\``.
Documentation marks its chrome well, so explicit rules over lxml's tree do better there and are easy to
reason about. ``lxml`` (BSD) parses broken markup the way browsers do.

Invariant: :func:`main_content` never raises on markup and loses no text to the parser: when lxml cannot
parse the source, or its tree holds less than half the words found between the tags (libxml2 stops reading
below a nesting depth of a few thousand), the source is returned unchanged and the plain renderer reads it
all.
"""

from __future__ import annotations

import re
from typing import Any

LINK_LIST_MIN = 5
LINK_DENSITY = 0.7
NAMED_MAX_SHARE = 0.5  # a class-named element holding more of the page's text than this is kept
_CANDIDATE_TAGS = ("ul", "ol", "dl", "table", "div", "p", "section", "td", "center")
_DROP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "nav",
        "aside",
        "form",
        "button",
        "select",
        "dialog",
        "menu",
        "input",
        "textarea",
        "label",
    }
)
_DROP_ROLES = frozenset(
    {
        "navigation",
        "search",
        "banner",
        "contentinfo",
        "complementary",
        "menu",
        "menubar",
        "toolbar",
        "dialog",
        "tablist",
        "alertdialog",
    }
)
# Parts of a class or id (split at "-", "_" and case changes): one of these names the element as chrome.
_NAMED_PARTS = frozenset(
    {
        "nav",
        "navbar",
        "navbox",
        "navigation",
        "navpanel",
        "sidebar",
        "sidenav",
        "sphinxsidebar",
        "breadcrumb",
        "breadcrumbs",
        "menu",
        "menubar",
        "toc",
        "footer",
        "topnav",
        "subnav",
        "bottomnav",
        "pagination",
        "pager",
        "versions",
        "versionswitcher",
        "switcher",
        "infobox",
        "navframe",
        "navheader",  # DocBook's "Prev / Up / Next" panels above and below each page
        "navfooter",
        "reflist",
        "references",
        "catlinks",
        "editsection",
        "noprint",
        "printfooter",
        "sistersitebox",
        "cookie",
        "cookies",
        "advert",
        "skiplink",
        "jump",
        "searchbox",
        "searchbar",
        "related",
        "share",
        "social",
        "toolbar",
        "hatnote",
        "ambox",
        "mbox",
    }
)
# Whole class or id values that name chrome but whose parts are too common to match alone.
_NAMED_EXACT = frozenset({"header", "metadata"})
# Inline elements are chrome by name only with one of these (a wiki's citation marks and edit links, the
# "¶" anchors of headings); otherwise a link or span named "header" is a heading's own text.
_NAMED_INLINE = frozenset(
    {"reference", "headerlink", "mw-editsection", "mw-cite-backlink", "noprint", "copiable-anchor"}
)
_INLINE_TAGS = frozenset(
    {
        "a",
        "span",
        "code",
        "em",
        "strong",
        "b",
        "i",
        "sup",
        "sub",
        "small",
        "abbr",
        "kbd",
        "var",
        "samp",
        "tt",
        "img",
        "cite",
        "q",
        "mark",
        "time",
    }
)
_SPLIT = re.compile(r"[-_\s]+|(?<=[a-z])(?=[A-Z])")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
KEPT_MIN_SHARE = 0.5  # lxml's tree must hold at least this share of the words between the tags


def main_content(source: str) -> tuple[str, str | None]:
    """``(html, title)``: the markup of the page's main content, and the page's title (``<title>``, else the
    first ``<h1>``) read before anything was removed. Either may be the source unchanged / ``None``."""
    try:
        import lxml.etree
        import lxml.html
    except ImportError:  # pragma: no cover - lxml is a dependency
        return source, None
    try:
        doc = lxml.html.document_fromstring(
            _XML_DECL.sub("", source, count=1), parser=lxml.html.HTMLParser(huge_tree=True)
        )
    except (lxml.etree.ParserError, ValueError):  # an empty or undecodable document
        return source, None
    title = _title(doc)
    if len(doc.text_content().split()) < KEPT_MIN_SHARE * len(_TAG.sub(" ", source).split()):
        return source, title  # libxml2 gave up on the markup (nesting deeper than it reads): render it plainly
    root = _main_region(doc)
    _drop_chrome(root)
    _drop_link_lists(root)
    return lxml.html.tostring(root, encoding="unicode", method="html"), title


def _text_len(el: Any) -> int:
    return len(" ".join(el.text_content().split()))


_MARKUP_IN_TITLE = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")  # "<title><strong>socat</strong></title>"


def _title(doc: Any) -> str | None:
    """The text of ``<title>``, else of the first ``<h1>``. A ``<title>`` holds text only: tags written in it
    (a generator's "<strong>socat</strong>") are its text to a parser, and are dropped here."""
    for path in ("//title", "//h1"):
        for el in doc.xpath(path):
            text = " ".join(_MARKUP_IN_TITLE.sub("", el.text_content()).split())
            if text:
                return text
    return None


def _main_region(doc: Any) -> Any:
    for path in ("//main", "//*[@role='main']", "//article", "//*[@id='mw-content-text']"):
        found = [el for el in doc.xpath(path) if _text_len(el)]
        if len(found) == 1:
            return found[0]
    body = doc.find("body")
    return body if body is not None else doc


def _names(el: Any) -> list[str]:
    return [v for v in ((el.get("class") or "").split() + [el.get("id") or ""]) if v]


def _named_chrome(el: Any) -> bool:
    if el.tag in _INLINE_TAGS:
        # a wiki's citation mark is <sup class="reference">; Sphinx names every link "reference internal"
        # or "reference external", and a link's text is the sentence's own words
        return any(v.lower() in _NAMED_INLINE and (v.lower() != "reference" or el.tag == "sup") for v in _names(el))
    for value in _names(el):
        if value.lower() in _NAMED_EXACT:
            return True
        if any(p.lower() in _NAMED_PARTS for p in _SPLIT.split(value) if p):
            return True
    return False


def _structural_chrome(el: Any) -> bool:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in _DROP_TAGS:
        return True
    if tag in ("header", "footer") and not any(a.tag == "article" for a in el.iterancestors()):
        return True
    if (el.get("role") or "").lower() in _DROP_ROLES:
        return True
    if el.get("hidden") is not None or (el.get("aria-hidden") or "").lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(el.get("style") or ""))


def _remove(el: Any) -> None:
    """Remove ``el`` but keep the text that follows it (lxml stores it on the element as ``tail``)."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail and tail.strip():
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


def _measure(root: Any) -> dict[Any, tuple[int, int, int]]:
    """``element -> (text characters, characters inside links, links)`` for every element under ``root``, in
    one pass from the leaves up (reversed document order puts every element after its descendants), so the
    rules cost time linear in the page whatever its nesting."""
    sizes: dict[Any, tuple[int, int, int]] = {}
    for el in reversed(list(root.iter())):
        text = len((el.text or "").strip()) if isinstance(el.tag, str) else 0
        linked = links = 0
        for child in el:
            t, lt, n = sizes.get(child, (0, 0, 0))
            text += t + len((child.tail or "").strip())
            linked += lt
            links += n
        if el.tag == "a" and el.get("href") is not None:
            linked, links = text, links + 1
        sizes[el] = (text, linked, links)
    return sizes


def _drop_chrome(root: Any) -> None:
    sizes = _measure(root)
    total = max(1, sizes[root][0])
    doomed = []
    for el in root.iterdescendants():
        if not isinstance(el.tag, str):
            doomed.append(el)  # comments and processing instructions
        elif _structural_chrome(el):
            doomed.append(el)
        elif _named_chrome(el) and sizes[el][0] <= NAMED_MAX_SHARE * total:
            doomed.append(el)
    for el in doomed:
        _remove(el)


def _drop_link_lists(root: Any) -> None:
    sizes = _measure(root)
    doomed = []
    for el in root.iter(*_CANDIDATE_TAGS):
        text, linked, links = sizes[el]
        if el is not root and links >= LINK_LIST_MIN and text and linked >= LINK_DENSITY * text:
            doomed.append(el)
    for el in doomed:
        _remove(el)
