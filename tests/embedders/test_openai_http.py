"""The OpenAI-compatible embeddings client over an httpx mock transport (no embeddings server runs here)."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from assistant_bridge.embedders.openai_http import OpenAIEmbedder
from assistant_bridge.errors import EmbedderError
from assistant_bridge.http import RetryPolicy

pytestmark = pytest.mark.unit


def _embedder(handler: object, retries: int = 1) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        base_url="http://emb.test/v1/",
        model="m",
        api_key="sk-emb-1",
        dim=2,
        transport=httpx.MockTransport(handler),  # type: ignore[arg-type]
        retry=RetryPolicy(max_retries=retries, sleep=lambda s: None),
    )


def test_rows_in_index_order_normalised_with_the_key_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, json={"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [3, 0]}]}
        )

    rows = _embedder(handler).embed_passages(["a", "b"])
    assert np.allclose(rows, [[1, 0], [0, 1]])
    assert seen[0].url == "http://emb.test/v1/embeddings" and seen[0].headers["Authorization"] == "Bearer sk-emb-1"


def test_a_503_is_retried_then_reported_without_the_key() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(503)

    with pytest.raises(EmbedderError) as info:
        _embedder(handler, retries=2).embed_queries(["q"])
    assert len(calls) == 3 and info.value.details["reason"] == "http_503" and "sk-emb" not in info.value.message


def test_a_garbage_body_is_an_embedder_error() -> None:
    with pytest.raises(EmbedderError, match="unexpected body"):
        _embedder(lambda r: httpx.Response(200, json={"rows": []})).embed_queries(["q"])
