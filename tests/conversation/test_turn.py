"""One turn without HTTP: text chunking for streaming, and a turn over a fake source."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant_bridge.conversation.sources import FakeSource
from assistant_bridge.conversation.turn import Turn, TurnRequest, chunk_text
from assistant_bridge.domain import Principal, Scope
from assistant_bridge.errors import ValidationFailed
from tests.conversation.helpers import build

pytestmark = pytest.mark.unit


@given(st.text(max_size=300), st.integers(min_value=1, max_value=40))
def test_chunks_concatenate_to_the_text_and_stay_small(text: str, size: int) -> None:
    pieces = chunk_text(text, size)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= size for p in pieces)


def test_turn_over_a_fake_source(tmp_path: Path) -> None:
    _, _, runtime = build(tmp_path)
    source = FakeSource([{"title": "VPN", "body": "Install the VPN client. Then sign in."}])
    runtime._sources[("default", "default")] = source
    assistant = runtime.assistants.get("default")
    scope = Scope(Principal(user_id="u"))
    result = Turn(runtime, assistant, TurnRequest(text="  vpn?  ", debug=True), scope).run()
    assert source.queries == ["vpn?"] and result.outcome == "answer"
    assert result.generic[0]["text"] == "Install the VPN client."
    assert result.debug is not None and result.debug["turn_events"][0]["callout"]["search"]["engine"] == "fake"
    with pytest.raises(ValidationFailed):
        Turn(runtime, assistant, TurnRequest(text=""), scope)
    with pytest.raises(ValidationFailed):
        Turn(runtime, assistant, TurnRequest(message_type="search_results", text="q"), scope)
