"""JSON Schema validation at the edge. The schemas live once, in the repository's ``schemas/`` folder; a built
package carries a copy of it (``setup.py``). Inner code trusts what passed here."""

from __future__ import annotations

import json
import os
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from assistant_bridge.errors import ConfigurationError, ValidationFailed

PACKAGED_SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SOURCE_SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


def _schema_dir() -> Path:
    """``$ASSISTANT_BRIDGE_SCHEMA_DIR`` when set; else the copy inside an installed package
    (``assistant_bridge/schemas/``, made by the build); else the repository's ``schemas/`` next to the package
    (a source checkout or an editable install)."""
    override = os.environ.get("ASSISTANT_BRIDGE_SCHEMA_DIR")
    if override:
        return Path(override)
    return PACKAGED_SCHEMA_DIR if PACKAGED_SCHEMA_DIR.is_dir() else SOURCE_SCHEMA_DIR


SCHEMA_DIR = _schema_dir()


@cache
def load_schema(name: str) -> dict[str, Any]:
    path = SCHEMA_DIR / f"{name}.schema.json"
    if not path.exists():
        raise ConfigurationError(f"missing JSON Schema {path}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=1)
def registry() -> Registry:
    """Every schema under its ``$id`` (file name), so ``$ref`` between files resolves offline."""
    resources = []
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        resources.append((data.get("$id", path.name), Resource.from_contents(data)))
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def warm_validators() -> int:
    """Compile every schema's validator now (a worker's start), so no first request pays for it."""
    names = [p.name[: -len(".schema.json")] for p in sorted(SCHEMA_DIR.glob("*.schema.json"))]
    for name in names:
        validator(name)
    return len(names)


def validate(name: str, body: Any) -> Any:
    """Validate ``body`` against ``schemas/<name>.schema.json``.

    :raises ValidationFailed: naming the JSON path and the problem of the most relevant error.
    """
    errors = list(validator(name).iter_errors(body))
    if errors:
        err = best_match(errors)
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        raise ValidationFailed(f"{path}: {err.message}"[:500], path=path, errors=len(errors))
    return body
