"""The built package carries the repository's ``schemas/`` (copied in by ``setup.py``) and finds them without
``ASSISTANT_BRIDGE_SCHEMA_DIR``: what a wheel or a non-editable install gets. The build runs on a copy of the
sources, so the repository stays untouched; no virtual environment is made."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    "setup.py",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "MANIFEST.in",
    "assistant_bridge",
    "schemas",
    "filters_models",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``build_py`` of a copy of the sources; returns the build directory (what a wheel holds)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    lib = tmp_path_factory.mktemp("lib")
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=src,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return lib


def test_every_schema_file_of_the_repository_is_in_the_built_package(built: Path) -> None:
    repo = sorted(p.name for p in (ROOT / "schemas").iterdir() if p.is_file())
    packaged = sorted(p.name for p in (built / "assistant_bridge" / "schemas").iterdir())
    assert packaged == repo
    assert "openapi.base.yaml" in packaged and "search_request.schema.json" in packaged
    for name in repo:
        assert (built / "assistant_bridge" / "schemas" / name).read_bytes() == (ROOT / "schemas" / name).read_bytes()


def test_the_built_package_finds_its_schemas_by_itself(built: Path) -> None:
    code = (
        "from assistant_bridge import validation as v; from assistant_bridge.web.openapi import build_document;"
        " v.validate('search_request', {'query': 'x'}); build_document(None); print(v.SCHEMA_DIR)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("ASSISTANT_BRIDGE_SCHEMA_DIR", "PYTHONPATH")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=built,
        env={**env, "PYTHONPATH": str(built)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(built / "assistant_bridge" / "schemas")


def test_a_source_checkout_reads_the_repository_schemas() -> None:
    from assistant_bridge.validation import SCHEMA_DIR

    if os.environ.get("ASSISTANT_BRIDGE_SCHEMA_DIR"):
        pytest.skip("ASSISTANT_BRIDGE_SCHEMA_DIR is set")
    assert SCHEMA_DIR == ROOT / "schemas"
    assert not (ROOT / "assistant_bridge" / "schemas").exists()  # a stale copy there would shadow schemas/


def test_the_built_package_carries_the_filter_models(built: Path) -> None:
    from assistant_bridge.filters.onnx_filters import MODEL_FILES

    packaged = built / "assistant_bridge" / "filters_models"
    assert sorted(p.name for p in packaged.iterdir()) == sorted(MODEL_FILES)
    for name in MODEL_FILES:
        assert (packaged / name).read_bytes() == (ROOT / "filters_models" / name).read_bytes()
    code = (
        "from assistant_bridge.filters import default_model_dir, load_thresholds;"
        " from assistant_bridge.filters.cross import CrossEncoder;"
        " d = default_model_dir(); CrossEncoder(d); load_thresholds('less_often', d); print(d)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("ASSISTANT_BRIDGE_FILTERS_DIR", "PYTHONPATH")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=built,
        env={**env, "PYTHONPATH": str(built)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(packaged)


def test_setup_copies_the_files_the_filters_load() -> None:
    import ast

    from assistant_bridge.filters.onnx_filters import MODEL_FILES

    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    listed = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "MODEL_FILES" for t in n.targets)
    )
    assert tuple(listed) == MODEL_FILES
    assert not (ROOT / "assistant_bridge" / "filters_models").exists()  # a stale copy would shadow filters_models/
