"""SearchResult: the Custom-service wire shape in and out."""

from __future__ import annotations

import pytest

from assistant_bridge.core.results import SearchResult

pytestmark = pytest.mark.unit


def test_round_trip_keeps_every_field_and_custom_metadata() -> None:
    wire = {
        "result_metadata": {"score": 0.8, "image_url": "https://x/y.png"},
        "title": "Reset",
        "body": "Go to Settings.",
        "url": "https://docs/reset",
        "highlight": {"body": ["Go to", "Settings."]},
        "id": "doc-1",
    }
    result = SearchResult.from_json(wire)
    assert result.highlight_body == ("Go to", "Settings.")
    assert result.result_metadata["image_url"] == "https://x/y.png"
    assert result.to_json() == wire


def test_optional_fields_absent_stay_absent() -> None:
    result = SearchResult.from_json({"title": "T", "body": "B"})
    assert result.url is None and result.highlight_body is None and result.id is None
    assert result.to_json() == {"result_metadata": {}, "title": "T", "body": "B"}


def test_lenient_on_odd_but_wellformed_input() -> None:
    result = SearchResult.from_json({"body": None, "highlight": {"body": ["ok", 3, None]}, "id": 7, "url": 5})
    assert result.title == "" and result.body == "" and result.url is None
    assert result.highlight_body == ("ok",)
    assert result.id == "7"
    assert (
        SearchResult.from_json({"title": "t", "body": "b", "highlight": {"body": "not a list"}}).highlight_body is None
    )


def test_empty_highlight_list_is_kept_as_empty() -> None:
    assert SearchResult.from_json({"title": "t", "body": "b", "highlight": {"body": []}}).highlight_body == ()


def test_metadata_is_read_only_and_detached_from_the_input() -> None:
    source = {"score": 1.0}
    result = SearchResult(title="t", body="b", result_metadata=source)
    source["score"] = 2.0
    assert result.result_metadata["score"] == 1.0
    with pytest.raises(TypeError):
        result.result_metadata["score"] = 3.0  # type: ignore[index]
    out = result.to_json()
    out["result_metadata"]["score"] = 5.0
    assert result.result_metadata["score"] == 1.0
