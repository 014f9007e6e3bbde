"""The command line as a script sees it: ``ingest`` exits non-zero when any file failed or the run was
interrupted, always with a summary; ``recover`` settles what a crash left."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.cli import main
from assistant_bridge.store import SQLiteStore

REPO = Path(__file__).resolve().parents[1]
CONFIG = {"backend": {"kind": "milvus-lite"}, "embedder": {"kind": "hashing"}}


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(CONFIG))  # JSON is YAML
    return str(path)


@pytest.mark.integration
def test_ingest_exit_codes_and_summary(tmp_path: Path, config: str, capsys: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The office closes on 25 December.")
    (docs / "b.md").write_text("# VPN\n\nInstall the client and connect.")
    common = ["--config", config, "--data-dir", str(tmp_path / "data")]
    assert main(["ingest", str(docs), *common]) == 0
    assert "ingested 2 new, 0 already present, 0 failed" in capsys.readouterr().out
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not a pdf")
    assert main(["ingest", str(docs), *common]) == 1  # one failure is a failure, whatever else worked
    out = capsys.readouterr()
    assert "0 new, 2 already present, 1 failed" in out.out and "failed: " in out.err and "broken.pdf" in out.err


@pytest.mark.integration
def test_pages_without_text_are_reported_apart_and_reindex_keeps_ids(tmp_path: Path, config: str, capsys: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The office closes on 25 December.")
    links = "".join(f'<li><a href="p{i}.html">Page {i}</a></li>' for i in range(8))
    (docs / "menu.html").write_text(f"<html><body><nav><ul>{links}</ul></nav><ul>{links}</ul></body></html>")
    common = ["--config", config, "--data-dir", str(tmp_path / "data")]
    assert main(["ingest", str(docs), *common]) == 0  # a page that is only navigation is not a failure
    out = capsys.readouterr()
    assert "ingested 1 new, 0 already present, 0 failed, 1 without text" in out.out
    assert "menu.html: skipped: " in out.err and "no main content" in out.err
    store = SQLiteStore(tmp_path / "data" / "meta.sqlite3")
    before = [d.id for d in store.list_documents(limit=10)]
    assert main(["ingest", str(docs), "--reindex", *common]) == 0
    assert "ingested 1 reindexed or new, 0 already present" in capsys.readouterr().out
    assert [d.id for d in store.list_documents(limit=10)] == before


@pytest.mark.integration
def test_a_reader_that_goes_away_ends_the_command_without_a_traceback(tmp_path: Path, config: str) -> None:
    """``assistant-bridge … | head -c 600``: the pipe closes before the command has written everything; it exits
    141 (128 + SIGPIPE, as a shell reports it) with no traceback."""
    (tmp_path / "a.txt").write_text("The office closes on 25 December.")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    cmd = [sys.executable, "-m", "assistant_bridge", "ingest", str(tmp_path / "a.txt"), "--config", config]
    cmd += ["--data-dir", str(tmp_path / "data")]
    proc = subprocess.run(cmd, cwd=REPO, stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(write)
    assert proc.returncode == 141, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.integration
@pytest.mark.slow
def test_an_interrupted_ingest_exits_130_with_a_summary(tmp_path: Path, config: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(400):
        (docs / f"{i:03d}.txt").write_text(f"Document {i}. " + "Some words about travel and expenses. " * 40)
    cmd = [
        sys.executable,
        "-m",
        "assistant_bridge",
        "ingest",
        str(docs),
        "--config",
        config,
        "--data-dir",
        str(tmp_path / "data"),
    ]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = tmp_path / "data" / "meta.sqlite3"
    for _ in range(600):  # until the first documents are in
        try:
            if db.exists() and SQLiteStore(db).list_documents(limit=1):
                break
        except Exception:  # the file is being created
            pass
        if proc.poll() is not None:
            break
        import time

        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted after" in out and "of 400 files" in out


@pytest.mark.integration
def test_recover_settles_a_dead_writers_intent(tmp_path: Path, config: str, capsys: Any) -> None:
    common = ["--config", config, "--data-dir", str(tmp_path / "data")]
    (tmp_path / "a.txt").write_text("Kept.")
    assert main(["ingest", str(tmp_path / "a.txt"), *common]) == 0
    store = SQLiteStore(tmp_path / "data" / "meta.sqlite3")
    store.begin_intent("00000000-0000-4000-8000-000000000001", "write", f"{socket.gethostname()}:999999999:1")
    assert main(["recover", *common]) == 0
    assert store.intents() == [] and "0 still open" in capsys.readouterr().out
    assert os.environ.get("ASSISTANT_BRIDGE_FAULT") is None
