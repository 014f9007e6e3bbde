"""An OpenAPI client generator (openapi-python-client) over the service's document: it must generate the
operations clients need, the agentic and Bedrock ones included (it once dropped them, unable to follow
references into another schema's ``$defs``: ``hoist_defs`` moves those to components of their own)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_bridge.web.openapi import build_document

pytestmark = [pytest.mark.integration, pytest.mark.slow]
EXPECTED = {
    "agentic/agentic_retrieve_stream.py",
    "agentic/bedrock_retrieve.py",
    "agentic/bedrock_retrieve_and_generate.py",
    "search/search.py",
    "documents/list_documents.py",
    "message/message.py",
    "tools/execute_tool.py",
}


def test_the_generated_client_has_the_operations(tmp_path: Path) -> None:
    exe = shutil.which("openapi-python-client") or str(Path(sys.executable).with_name("openapi-python-client"))
    if not Path(exe).exists():
        pytest.skip("the test extra installs openapi-python-client")
    doc = build_document(None)
    assert not any("/$defs/" in ref for ref in _refs(doc))
    (tmp_path / "openapi.json").write_text(json.dumps(doc))
    done = subprocess.run(
        [exe, "generate", "--path", "openapi.json", "--meta", "none", "--output-path", "client"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    generated = {str(p.relative_to(tmp_path / "client" / "api")) for p in (tmp_path / "client" / "api").rglob("*.py")}
    assert EXPECTED <= generated, sorted(EXPECTED - generated)


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref" and isinstance(v, str)] + [
            r for v in node.values() for r in _refs(v)
        ]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []
