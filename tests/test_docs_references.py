"""What ``docs/`` names exists in the product: every HTTP route (with its method, when the page gives one) is
in the Flask app's URL map, every Prometheus metric is defined, every log event is logged with the fields
the page quotes, every ``assistant-bridge`` option is accepted by its command."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.cli import build_parser

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "benchmarks.md")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
# the service's own paths; /v1/embeddings and /chat/completions are endpoints it calls (OpenAI-compatible)
ROUTE_ROOTS = ("/v1/", "/v2/", "/healthz", "/readyz", "/metrics", "/openapi.", "/chat", "/agenticRetrieveStream")
EXTERNAL = ("/v1/embeddings", "/chat/completions")
_SPAN = re.compile(r"`([^`\n]+)`")
_ROUTE = re.compile(rf"^(?:({'|'.join(METHODS)})\s+)?(/\S*)$")
_CODE_LINE = re.compile(rf"^\s*({'|'.join(METHODS)})\s+(/\S+)")
_ELLIPSIS = re.compile(r"…|\.\.\.")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _prose_and_code(text: str) -> tuple[list[str], list[str]]:
    prose: list[str] = []
    code: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return prose, code


def route_mentions(text: str) -> set[tuple[str | None, str]]:
    """``(method or None, path)`` of every route the page names: in backticks (``POST /v1/search``), in a
    table row whose cell before the path is a method, and at the start of a line in a code block."""
    found: set[tuple[str | None, str]] = set()
    prose, code = _prose_and_code(text)
    for line in prose:
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        for span in _SPAN.findall(line):
            m = _ROUTE.match(span.strip())
            if m:
                found.add((m.group(1), m.group(2)))
        for before, cell in zip(cells, cells[1:], strict=False):
            m = re.fullmatch(r"`(/\S*)`", cell)
            if before in METHODS and m:
                found.add((before, m.group(1)))
    for line in code:
        m = _CODE_LINE.match(line)
        if m:
            found.add((m.group(1), m.group(2)))
    with_method = {path for method, path in found if method}
    return {
        (method, path)
        for method, path in found
        if path.startswith(ROUTE_ROOTS) and not path.startswith(EXTERNAL) and (method or path not in with_method)
    }


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _segment_matches(doc: str, rule: str, partial: bool) -> bool:
    if rule.startswith("<"):
        return True  # a variable: {id}, a concrete id or ${id}
    return rule.startswith(doc) if partial else rule == doc


def route_exists(method: str | None, path: str, rules: list[tuple[str, set[str]]]) -> bool:
    """A path with a method must be a rule that allows it. Without a method it may also name a family of
    routes: ``/v1/chunks``, ``/chat/static/``, ``/v1/documents…`` (the start of at least one rule)."""
    path = re.sub(r"\$\{[^}]*\}", "{x}", path.split("?", 1)[0])
    cut = _ELLIPSIS.search(path)
    partial = cut is not None
    doc = _segments(path[: cut.start()] if cut else path)
    for rule, methods in rules:
        segs = _segments(rule)
        exact = len(segs) == len(doc) and not partial
        family = method is None and len(segs) >= len(doc)
        if not (exact or family):
            continue
        last = len(doc) - 1
        if all(_segment_matches(d, r, partial and i == last) for i, (d, r) in enumerate(zip(doc, segs, strict=False))):
            if method is None or method in methods:
                return True
    return False


@pytest.fixture(scope="module")
def url_rules(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, set[str]]]:
    from assistant_bridge.web.app import create_app
    from tests.conftest import make_services, make_settings

    settings = make_settings(tmp_path_factory.mktemp("docs"))
    app = create_app(settings, make_services(settings))
    return [
        (re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"<\1>", r.rule), set(r.methods or ()))
        for r in app.url_map.iter_rules()
        if r.endpoint != "static"
    ]


def test_the_route_matcher_itself(url_rules: list[tuple[str, set[str]]]) -> None:
    assert route_exists("POST", "/v1/tools/rag_search/execute", url_rules)
    assert route_exists("GET", "/v1/tool-executions/${id}/stream?api_key=k", url_rules)
    assert route_exists(None, "/v1/chunks", url_rules) and route_exists(None, "/v1/documents…", url_rules)
    assert not route_exists("GET", "/v1/tools/{tool_id}/execute", url_rules)  # POST only
    assert not route_exists(None, "/v1/agentic/retrieve…", url_rules)
    assert not route_exists("DELETE", "/v1/chunks", url_rules)
    mentions = route_mentions(
        "| POST | `/v1/relay/message` |\n`GET /healthz`\n```\nDELETE /v1/documents/{id}\n```\n"
        "`/chat/completions` and `/v1/embeddings` are not ours\n"
    )
    assert mentions == {("POST", "/v1/relay/message"), ("GET", "/healthz"), ("DELETE", "/v1/documents/{id}")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_route_in_the_docs_exists(page: Path, url_rules: list[tuple[str, set[str]]]) -> None:
    missing = sorted(
        f"{method or ''} {path}".strip()
        for method, path in route_mentions(_text(page))
        if not route_exists(method, path, url_rules)
    )
    assert not missing, f"{page.name} names routes the app does not have: {missing}"


def _package_source() -> str:
    return "\n".join(_text(p) for p in sorted((ROOT / "assistant_bridge").rglob("*.py")))


def test_every_metric_in_the_docs_is_defined() -> None:
    defined = set(re.findall(r'"(assistant_bridge_[a-z_]+)"', _text(ROOT / "assistant_bridge" / "metrics.py")))
    assert defined, "no metric found in assistant_bridge/metrics.py"
    exposed = defined | {name + suffix for name in defined for suffix in ("_bucket", "_sum", "_count", "_created")}
    quoted = {(page.name, name) for page in PAGES for name in re.findall(r"\bassistant_bridge_[a-z_]+\b", _text(page))}
    unknown = sorted(f"{page}: {name}" for page, name in quoted if name not in exposed)
    assert not unknown, f"metrics named in the docs but not defined: {unknown}"


_LOG_LEVELS = ("debug", "info", "warning", "error", "exception", "critical")
_EVENT_NAME = re.compile(r"[a-z_]+\.[a-z_.]+")


def _extra_fields(call: ast.Call) -> set[str]:
    """The keys of a log call's ``extra`` dict, and the names a ``**user_text(..., query=...)`` in it adds."""
    fields: set[str] = set()
    for kw in call.keywords:
        if kw.arg == "extra" and isinstance(kw.value, ast.Dict):
            for key, value in zip(kw.value.keys, kw.value.values, strict=True):
                if isinstance(key, ast.Constant):
                    fields.add(str(key.value))
                elif isinstance(value, ast.Call):
                    fields.update(k.arg for k in value.keywords if k.arg)
    return fields


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def logged_events() -> dict[str, set[str]]:
    """``event -> its fields`` for every ``log.<level>("ns.event", extra={...})`` of the package, and for every
    call of a helper that logs the event name it is given (``self._finished("relay.turn", ...)``): the helper's
    fields and the keywords of the call."""
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "assistant_bridge").rglob("*.py"))]
    nodes = [node for tree in trees for node in ast.walk(tree)]
    helpers: dict[str, set[str]] = {}  # a function whose log call's event is one of its parameters
    for fn in (n for n in nodes if isinstance(n, ast.FunctionDef)):
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call) and _callee(c) in _LOG_LEVELS):
            if call.args and isinstance(call.args[0], ast.Name) and call.args[0].id in params:
                helpers[fn.name] = _extra_fields(call)
    events: dict[str, set[str]] = {}
    for call in (n for n in nodes if isinstance(n, ast.Call)):
        name = _callee(call)
        if not (call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
            continue
        if not _EVENT_NAME.fullmatch(call.args[0].value):
            continue
        if name in _LOG_LEVELS:
            events.setdefault(call.args[0].value, set()).update(_extra_fields(call))
        elif name in helpers:
            fields = helpers[name] | {k.arg for k in call.keywords if k.arg}
            events.setdefault(call.args[0].value, set()).update(fields)
    return events


def quoted_events(text: str, settings_namespaces: set[str], event_namespaces: set[str]) -> dict[str, set[str]]:
    """Backticked ``ns.event key=… key=…`` spans, and ``ns.event`` spans in a paragraph that speaks of logs
    when ``ns`` is a namespace of log events and not of settings (``relay.url`` is a setting)."""
    out: dict[str, set[str]] = {}
    for paragraph in re.split(r"\n\s*\n", text):
        about_logs = re.search(r"\blog", paragraph, re.I) is not None
        for span in _SPAN.findall(paragraph):
            m = re.fullmatch(r"([a-z_]+)\.([a-z_]+)((?:\s+[a-z_]+=\S*)*)", span.strip())
            if not m:
                continue
            fields = set(re.findall(r"([a-z_]+)=", m.group(3)))
            namespace = m.group(1)
            if fields or (about_logs and namespace in event_namespaces and namespace not in settings_namespaces):
                out.setdefault(f"{namespace}.{m.group(2)}", set()).update(fields)
    return out


def test_every_log_event_in_the_docs_is_logged() -> None:
    from assistant_bridge.settings import SECTIONS, Settings

    events = logged_events()
    assert {"message.turn", "relay.turn", "milvus_lite.exited"} <= events.keys()
    settings_ns = set(SECTIONS) | set(Settings.__dataclass_fields__)
    event_ns = {e.split(".")[0] for e in events}
    problems: list[str] = []
    for page in PAGES:
        for event, fields in quoted_events(_text(page), settings_ns, event_ns).items():
            if event not in events:
                problems.append(f"{page.name}: {event} is never logged")
            elif fields - events[event]:
                problems.append(f"{page.name}: {event} has no field {sorted(fields - events[event])}")
    assert not problems, "\n".join(problems)


def _commands() -> dict[str, Any]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return dict(sub.choices)  # type: ignore[arg-type]


def test_every_command_line_option_in_the_docs_exists() -> None:
    """``assistant-bridge <command> ... --option`` in a code block or in backticks: the command exists and
    takes the option."""
    commands = _commands()
    problems: list[str] = []
    for page in PAGES:
        text = _text(page)
        lines: list[str] = []
        for line in _prose_and_code(text)[1]:  # an indented line continues the command above it
            if lines and line[:1].isspace() and "assistant-bridge" in lines[-1]:
                lines[-1] += " " + line.strip()
            else:
                lines.append(line)
        for line in lines + _SPAN.findall(text):
            for m in re.finditer(r"\bassistant-bridge\s+(?!assistant-bridge\b)([a-z][a-z-]*)([^#\n]*)", line):
                name, rest = m.group(1), m.group(2)
                if name not in commands:
                    problems.append(f"{page.name}: no command {name!r}")
                    continue
                known = set(commands[name]._option_string_actions)
                problems += [
                    f"{page.name}: {name} has no option {opt}"
                    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest)
                    if opt not in known
                ]
    assert not problems, "\n".join(problems)
