"""``docs/configuration.md`` against the settings code, so the two cannot drift apart.

Every key in the page's tables is a field of the settings dataclasses with the default the page gives, and
every field is in a table; the feature sections and the environment variables that are not settings are
the ones the code knows; every ``ASSISTANT_BRIDGE_*`` variable named anywhere in ``docs/`` is one of those
or names a setting.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.settings import ENV_PREFIX, NON_SETTING_ENV, SECTIONS, Settings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGE = DOCS / "configuration.md"
REQUIRED = "required"  # the default cell of a field without a default
UNSET = "–"  # the default cell of an optional value that is None (secrets)
_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*?)\s*\|")
_KEY = re.compile(r"^[a-z_]+(?:(?:\.|\[\]\.)[a-z_]+)*$")
_ENV = re.compile(r"\bASSISTANT_BRIDGE_[A-Z0-9_]*")


def documented(text: str) -> dict[str, str]:
    """``setting key -> default cell`` of every table row whose first cell is a backticked setting key."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if m and _KEY.match(m.group(1)):
            assert m.group(1) not in rows, f"{m.group(1)} is documented twice"
            rows[m.group(1)] = m.group(2)
    return rows


def in_code(cls: type = Settings, prefix: str = "") -> dict[str, Any]:
    """``setting key -> default`` of every field of the settings dataclasses; ``REQUIRED`` when it has none.
    A list of dataclasses (``auth.keys``) is a setting, and so is each field of its items (``auth.keys[].key``)."""
    out: dict[str, Any] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if cls is Settings and f.name == "extra":  # the feature sections, checked below
            continue
        key, tp = prefix + f.name, hints[f.name]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            out.update(in_code(tp, key + "."))
            continue
        if f.default is not dataclasses.MISSING:
            out[key] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[key] = f.default_factory()
        else:
            out[key] = REQUIRED
        item = typing.get_args(tp)[0] if typing.get_origin(tp) is list else None
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            out.update(in_code(item, key + "[]."))
    return out


def parse_default(cell: str) -> Any:
    """The value a default cell stands for: ``required``, ``–`` (None) or one backticked literal."""
    if cell in (REQUIRED, UNSET):
        return None if cell == UNSET else REQUIRED
    m = re.fullmatch(r"`([^`]*)`", cell)
    assert m, f"a default must be `value`, {UNSET} or {REQUIRED}, not {cell!r}"
    text = m.group(1)
    literals: dict[str, Any] = {'""': "", "[]": [], "true": True, "false": False}
    if text in literals:
        return literals[text]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def same(doc: Any, code: Any) -> bool:
    """Equal values of the same kind: ``10`` documents ``10.0``, but ``true`` does not document ``1``."""
    if isinstance(code, bool) or isinstance(doc, bool):
        return doc is code
    if isinstance(code, (int, float)) and isinstance(doc, (int, float)):
        return doc == code
    return type(doc) is type(code) and bool(doc == code)


def mismatches(doc_rows: dict[str, str], code: dict[str, Any]) -> list[str]:
    problems = [f"{key}: documented but not a setting" for key in doc_rows if key not in code]
    problems += [f"{key}: a setting missing from docs/configuration.md" for key in code if key not in doc_rows]
    for key in doc_rows.keys() & code.keys():
        doc = parse_default(doc_rows[key])
        if not same(doc, code[key]):
            problems.append(f"{key}: documented default {doc_rows[key]} but the code has {code[key]!r}")
    return sorted(problems)


def test_the_settings_tables_match_the_settings_dataclasses() -> None:
    problems = mismatches(documented(PAGE.read_text(encoding="utf-8")), in_code())
    assert not problems, "docs/configuration.md and the settings code disagree:\n" + "\n".join(problems)


def test_the_comparison_catches_drift() -> None:
    """The check itself: a removed row, a new field and a changed default each show up."""
    rows, code = documented(PAGE.read_text(encoding="utf-8")), in_code()
    assert "server.port" in rows and "auth.keys[].key" in rows and len(rows) == len(code)
    without = {k: v for k, v in rows.items() if k != "search.max_limit"}
    assert mismatches(without, code) == ["search.max_limit: a setting missing from docs/configuration.md"]
    assert mismatches(rows, {**code, "server.colour": "red"}) == [
        "server.colour: a setting missing from docs/configuration.md"
    ]
    assert mismatches(rows, {k: v for k, v in code.items() if k != "server.port"}) == [
        "server.port: documented but not a setting"
    ]
    changed = mismatches(rows, {**code, "server.port": 9000, "backend.es_verify_certs": 1, "backend.token": ""})
    assert [p.split(":")[0] for p in changed] == ["backend.es_verify_certs", "backend.token", "server.port"]


def _first_cells(heading: str) -> set[str]:
    """The backticked first cells of the table under ``## heading`` in the page."""
    section = PAGE.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for line in section.splitlines() if (m := _ROW.match(line))}


def test_the_feature_sections_are_the_ones_the_code_keeps() -> None:
    assert _first_cells("Feature sections") == {f"[{name}]" for name in SECTIONS}


def test_the_variables_that_are_not_settings_are_documented_and_read() -> None:
    assert _first_cells("Environment variables that are not settings") == {ENV_PREFIX + n for n in NON_SETTING_ENV}
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "assistant_bridge").rglob("*.py"))
    for name in NON_SETTING_ENV:
        assert f'"{ENV_PREFIX}{name}"' in source or f'ENV_PREFIX + "{name}"' in source, f"nothing reads {name}"


def test_every_variable_named_in_the_docs_exists() -> None:
    keys = in_code()
    unknown: list[str] = []
    for page in sorted(DOCS.glob("*.md")):
        if page.name == "benchmarks.md":
            continue
        for var in set(_ENV.findall(page.read_text(encoding="utf-8"))):
            rest = var[len(ENV_PREFIX) :]
            if not rest or rest in NON_SETTING_ENV:  # `ASSISTANT_BRIDGE_<SECTION>__<KEY>` is a pattern
                continue
            path = [p.lower() for p in rest.split("__") if p]
            key = ".".join(path)
            if path[0] in SECTIONS or key in keys or any(k.startswith(key + ".") for k in keys):
                continue
            unknown.append(f"{page.name}: {var}")
    assert not unknown, "variables that are neither settings nor read by the code:\n" + "\n".join(sorted(unknown))
