"""Ingestion: parse uploaded files into plain text with locations, ready for :mod:`assistant_bridge.core.chunking`.

Public API: :func:`parse_file`, :func:`parse_text`, :class:`ParsedDocument`, :class:`Segment`,
:data:`SUPPORTED_EXTENSIONS` and :func:`sample_corpus_files` (the shipped demo documents).
"""

from __future__ import annotations

import json
from pathlib import Path

from assistant_bridge.core.document import ParsedDocument, Segment
from assistant_bridge.ingest.parsers import (
    SUPPORTED_EXTENSIONS,
    SUPPORTED_MIME_TYPES,
    detect_format,
    parse_file,
    parse_text,
)

SAMPLE_CORPUS_DIR = Path(__file__).resolve().parent.parent / "sample_corpus"

__all__ = [
    "SAMPLE_CORPUS_DIR",
    "SUPPORTED_EXTENSIONS",
    "SUPPORTED_MIME_TYPES",
    "ParsedDocument",
    "Segment",
    "detect_format",
    "parse_file",
    "parse_text",
    "sample_corpus_files",
    "sample_corpus_manifest",
]


def sample_corpus_manifest() -> list[dict[str, str]]:
    """The entries of ``sample_corpus/manifest.json``: ``file``, ``title``, ``language``, ``topic``."""
    data = json.loads((SAMPLE_CORPUS_DIR / "manifest.json").read_text(encoding="utf-8"))
    return list(data["documents"])


def sample_corpus_files() -> list[Path]:
    """Paths of the shipped sample documents, in manifest order."""
    return [SAMPLE_CORPUS_DIR / entry["file"] for entry in sample_corpus_manifest()]
