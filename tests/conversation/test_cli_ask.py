"""``assistant-bridge ask``: the answer, its citations and scores, ``--json``, and refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge import cli
from assistant_bridge.services import Services
from assistant_bridge.validation import validate
from tests.conversation.helpers import build, ingest

pytestmark = pytest.mark.unit


@pytest.fixture
def prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data dir whose services (memory backend, fakes) hold the test documents; ``ask`` gets them."""
    app, services, _ = build(tmp_path, post=0.9)
    ingest(app.test_client())
    monkeypatch.setattr(Services, "from_settings", classmethod(lambda cls, settings, **kw: services))
    config = tmp_path / "c.toml"
    config.write_text('[backend]\nkind = "memory"\n[embedder]\nkind = "hashing"\n')
    return config


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ask_prints_answer_citations_and_scores(prepared: Path, capsys: Any) -> None:
    code, out, _ = run(capsys, "ask", "how do I reset my password", "--config", str(prepared))
    assert code == 0
    lines = out.splitlines()
    assert "self-service portal" in lines[0]
    assert "How do we know?" in lines and any(
        ln.startswith("  [1] Reset your password (result 1, score") for ln in lines
    )
    assert "outcome: answer" in out and "scores: pre_gen 0.90 (threshold 0.50), post_gen 0.90" in out
    assert "time: search" in out


def test_ask_json_is_a_message_response(prepared: Path, capsys: Any) -> None:
    code, out, _ = run(
        capsys,
        "ask",
        "expense receipts",
        "--config",
        str(prepared),
        "--json",
        "--threshold",
        "rarely",
        "--response-length",
        "concise",
    )
    body = json.loads(out)
    validate("message_response", body)
    assert code == 0 and body["output"]["generic"][0]["response_length_option"] == "concise"


def test_ask_refuses_client_side_and_unknown_assistants(prepared: Path, capsys: Any) -> None:
    code, _, err = run(capsys, "ask", "q", "--config", str(prepared), "--assistant", "client-side")
    assert code == 2 and "hands its searches to the client" in err
    code, _, err = run(capsys, "ask", "q", "--config", str(prepared), "--assistant", "nobody")
    assert code == 2 and "unknown assistant 'nobody'" in err
