"""The OpenAI-compatible generator against a real endpoint, when one is configured.

Set ``LLM_BASE_URL`` (for example ``http://127.0.0.1:8080/v1``), and ``LLM_MODEL`` / ``LLM_API_KEY`` if the
server needs them.
"""

from __future__ import annotations

import os

import pytest

from assistant_bridge.core.snippets import Snippet
from assistant_bridge.generators.openai_chat import OpenAIChatGenerator

SNIPPETS = [
    Snippet("Expense reports must be submitted within 30 days.", "Expense policy", 3),
    Snippet("The VPN must be connected before opening finance tools.", "VPN guide", 5),
]


@pytest.mark.integration
@pytest.mark.skipif(not os.environ.get("LLM_BASE_URL"), reason="no LLM endpoint configured (LLM_BASE_URL)")
@pytest.mark.slow
def test_real_endpoint() -> None:
    g = OpenAIChatGenerator(
        base_url=os.environ["LLM_BASE_URL"],
        model=os.environ.get("LLM_MODEL", "default"),
        api_key=os.environ.get("LLM_API_KEY") or None,
        timeout=120,
    )
    out = g.generate("Within how many days must expense reports be submitted?", SNIPPETS, "concise")
    assert out.text and not out.declined
    assert "30" in out.text
    stream = g.stream("What is the CEO's phone number?", SNIPPETS, "concise")
    streamed = "".join(stream)
    assert streamed == stream.result().text
