"""Backends for the contract suite. Each fixture yields a warmed-up backend of dimension 64.

Real servers: Milvus Lite embedded (in-process), Milvus Lite in server mode (a ``milvus-lite server`` side
process, as ``serve`` runs it). Elasticsearch joins when its backend module and a server are available.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator

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


FACTORIES = {"memory": _memory, "milvus-lite": _milvus_embedded, "milvus-lite-server": _milvus_server}


@pytest.fixture(params=list(FACTORIES), scope="module")
def backend(request: Any, tmp_path_factory: Any) -> Iterator[Any]:
    if request.param != "memory":
        request.applymarker(pytest.mark.integration)
    yield from FACTORIES[request.param](tmp_path_factory.mktemp(request.param))
