"""The shared text module's helpers that no other test covers directly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant_bridge.text import pieces_at_spaces

pytestmark = pytest.mark.unit


@given(st.text(max_size=300), st.integers(min_value=1, max_value=40))
def test_pieces_concatenate_to_the_text_and_stay_small(text: str, size: int) -> None:
    pieces = pieces_at_spaces(text, size)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= size for p in pieces)


def test_pieces_end_at_spaces_where_there_are_any() -> None:
    assert pieces_at_spaces("one two three four", 9) == ["one two ", "three ", "four"]
    assert pieces_at_spaces("abcdefghij", 4) == ["abcd", "efgh", "ij"]
