"""reStructuredText (``.rst``: Sphinx and docutils documentation) to HTML, for the HTML reader.

Parsed by docutils (public domain and BSD; the reference implementation of the format). Reading a document
must not reach outside it: ``include``, ``literalinclude``, ``raw`` and ``csv-table :file:`` are off, no
configuration file is read, and parser messages are neither printed nor put in the text. Sphinx's own markup
is common in the wild and docutils does not know it, so its roles (``:ref:`Title <label>```, ``:func:`~a.b```,
``:option:`-v```) keep their text; description directives (``.. option:: -v, --verbose``, ``.. function::``,
``.. envvar::``) become definition entries, which the HTML reader turns into ``term: description`` lines, as
it does for man pages; ``code-block`` is a literal block; ``versionadded``, ``deprecated`` and ``seealso`` keep
their text; and the directives that only organise a site (``toctree``, ``index``, ``automodule``…) are
dropped.
"""

from __future__ import annotations

import re
import threading
from typing import Any

_SETTINGS: dict[str, Any] = {
    "file_insertion_enabled": False,  # no include, literalinclude or csv-table :file:
    "raw_enabled": False,
    "_disable_config": True,  # no docutils.conf from the working or home directory
    "report_level": 5,  # no parser messages in the text
    "halt_level": 5,
    "warning_stream": False,
    "input_encoding": "unicode",
    "output_encoding": "unicode",
    "embed_stylesheet": False,
    "stylesheet_path": "",
    "syntax_highlight": "none",
    "smart_quotes": False,
    "doctitle_xform": True,
}
_CODE_ROLES = (
    "func meth class attr mod data exc obj const option program command file envvar samp code kbd makevar "
    "regexp mimetype type macro member var struct enum"
).split()
_TEXT_ROLES = "ref doc term abbr guilabel menuselection download numref keyword dfn token any".split()
_DOMAINS = ("py", "c", "cpp", "js", "std", "rst")
_DESCRIBE = (
    "option function method class attribute data exception envvar describe object cmdoption confval "
    "decorator module-level staticmethod classmethod property type macro member var"
).split()
_KEEP = "versionadded versionchanged deprecated seealso versionremoved centered hlist glossary".split()
_DROP = (
    "toctree index automodule autoclass autofunction automethod autoattribute autodata autoexception "
    "autosummary literalinclude highlight currentmodule module program tabularcolumns only ifconfig "
    "sectionauthor moduleauthor codeauthor productionlist graphviz plot"
).split()
_VERSION_LABELS = {"versionadded": "New in version", "versionchanged": "Changed in version"}
# docutils' own directives; any other one a document uses (a Sphinx extension's) keeps its text
_DOCUTILS = set(
    "admonition attention caution danger error hint important note tip warning image figure topic sidebar "
    "line-block parsed-literal code math rubric epigraph highlights pull-quote compound container table "
    "csv-table list-table contents sectnum section-numbering header footer target-notes meta replace unicode "
    "date class role default-role title raw include".split()
)
_DOCUTILS_ROLES = set(
    "emphasis strong literal code math pep-reference PEP rfc-reference RFC subscript sub superscript sup "
    "title-reference title t abbreviation ab acronym ac raw".split()
)
_ROLE = re.compile(r"(?<![\w`]):([A-Za-z][\w:.+-]{0,40}):`")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w:.+-]{0,40})::", re.MULTILINE)
_ASIDE = re.compile(r"<(/?)aside\b")
_TARGET = re.compile(r"^(.*?)\s*<[^<>]+>$", re.DOTALL)
_CODE_NAMES = ("code-block", "sourcecode", "code")
_lock = threading.Lock()
_registered = False
_known: set[str] = set()  # directive names docutils will find
_known_roles: set[str] = set()
_keep_class: list[Any] = []
_text_role: list[Any] = []


def _role_text(text: str) -> str:
    """``Title <label>`` is Title; ``~pkg.mod.fn`` is fn; ``!name`` is name."""
    found = _TARGET.match(text)
    if found and found.group(1):
        text = found.group(1)
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return text.lstrip("!")


def _register() -> None:
    global _registered
    with _lock:
        if _registered:
            return
        from docutils import nodes
        from docutils.parsers.rst import Directive, directives, roles
        from docutils.parsers.rst.directives.body import CodeBlock

        class AnyOption(dict[str, Any]):
            """Sphinx's directives take options docutils does not know (``:noindex:``, ``:linenos:``): all are
            accepted as text, so the directive is read instead of dropped as an error."""

            def __missing__(self, key: str) -> Any:
                return directives.unchanged

        class Code(CodeBlock):  # type: ignore[misc]
            option_spec = AnyOption(CodeBlock.option_spec)

        def role(kind: type[nodes.TextElement]) -> Any:
            def run(
                name: str,
                rawtext: str,
                text: str,
                lineno: int,
                inliner: Any,
                options: Any = None,
                content: Any = None,
            ) -> tuple[list[Any], list[Any]]:
                return [kind(rawtext, _role_text(text))], []

            return run

        for names, kind in ((_CODE_ROLES, nodes.literal), (_TEXT_ROLES, nodes.inline)):
            for name in names:
                roles.register_local_role(name, role(kind))
                for domain in _DOMAINS:
                    roles.register_local_role(f"{domain}:{name}", role(kind))

        class Describe(Directive):  # type: ignore[misc]
            """``.. option:: -v, --verbose`` and its content: one definition-list entry."""

            required_arguments = 0
            optional_arguments = 1
            final_argument_whitespace = True
            has_content = True
            option_spec = AnyOption()

            def run(self) -> list[Any]:
                term = nodes.term("", " ".join(self.arguments) or self.name)
                body = nodes.definition()
                self.state.nested_parse(self.content, self.content_offset, body)
                return [nodes.definition_list("", nodes.definition_list_item("", term, body))]

        class Keep(Directive):  # type: ignore[misc]
            """The content as it is (``.. versionadded:: 2.1`` then its text: "New in version 2.1. …")."""

            optional_arguments = 1
            final_argument_whitespace = True
            has_content = True
            option_spec = AnyOption()

            def run(self) -> list[Any]:
                box = nodes.container()
                if self.arguments and self.name.startswith(("version", "deprecated")):
                    # the argument runs to the first blank line: "2.1" then, maybe, the note's first words
                    version, _, rest = " ".join(self.arguments[0].split()).partition(" ")
                    label = _VERSION_LABELS.get(self.name, "Deprecated since version")
                    box += nodes.paragraph("", f"{label} {version}." + (f" {rest}" if rest else ""))
                elif self.arguments:
                    box += nodes.paragraph("", " ".join(self.arguments[0].split()))
                self.state.nested_parse(self.content, self.content_offset, box)
                return [box]

        class Drop(Keep):
            def run(self) -> list[Any]:
                return []

        for name in _CODE_NAMES:
            directives.register_directive(name, Code)
        for names, cls in ((_DESCRIBE, Describe), (_KEEP, Keep), (_DROP, Drop)):
            for name in names:
                directives.register_directive(name, cls)
                for domain in _DOMAINS:
                    directives.register_directive(f"{domain}:{name}", cls)
        _registered = True
        _known.update(_DOCUTILS, _CODE_NAMES, *(_names(n) for n in (_DESCRIBE, _KEEP, _DROP)))
        _known_roles.update(_DOCUTILS_ROLES, _names(_CODE_ROLES), _names(_TEXT_ROLES))
        _keep_class.append(Keep)
        _text_role.append(role(nodes.inline))


def _names(names: list[str]) -> set[str]:
    return {*names, *(f"{d}:{n}" for n in names for d in _DOMAINS)}


def _keep_unknown(source: str) -> None:
    """Register the directives and roles ``source`` uses that nobody defines so that their text stays (an
    unknown one would be an error in the text, or dropped)."""
    from docutils.parsers.rst import directives, roles

    unknown = {m.group(1) for m in _DIRECTIVE.finditer(source)} - _known
    unknown_roles = {m.group(1) for m in _ROLE.finditer(source)} - _known_roles
    if unknown or unknown_roles:
        with _lock:
            for name in unknown:
                directives.register_directive(name, _keep_class[0])
            for name in unknown_roles:
                roles.register_local_role(name, _text_role[0])
            _known.update(unknown)
            _known_roles.update(unknown_roles)


def rst_to_html(source: str) -> str:
    """The document as an HTML page: its title in ``<title>`` (none when it has none), its body in ``<main>``."""
    from docutils.core import publish_parts
    from docutils.writers.html5_polyglot import Writer

    _register()
    _keep_unknown(source)
    parts = publish_parts(source=source, writer=Writer(), settings_overrides=dict(_SETTINGS))
    # a note or a warning is an <aside> in docutils' HTML, which the HTML reader drops as page furniture
    body = _ASIDE.sub(r"<\1div", str(parts["html_body"]))
    title = re.sub(r"<[^>]*>", "", str(parts["title"]))  # its text (it may hold <code>)
    head = f"<title>{title}</title>" if title.strip() else ""  # none, rather than docutils' "<string>"
    return f"<html><head>{head}</head><body><main>{body}</main></body></html>"
