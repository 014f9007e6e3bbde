"""Every benchmark script starts from a plain checkout: ``python bench/<script>.py --help`` works from any
directory when the package is *not* installed (the installed copy, if any, is hidden from the child
process), so a script that imports the package before putting the repository on ``sys.path`` fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))

# Hide an installed or editable assistant_bridge, then run the script as ``python script --help`` would.
RUNNER = """
import os, runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path[:] = [p for p in sys.path if p and not os.path.isdir(os.path.join(p, "assistant_bridge"))]
sys.modules.pop("assistant_bridge", None)
script = sys.argv[1]
sys.argv = [script, "--help"]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
"""


def test_the_runner_really_hides_the_package(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import assistant_bridge\n")
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(probe)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0 and "No module named 'assistant_bridge'" in done.stderr


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_runs_from_a_checkout(script: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.startswith("usage:")
