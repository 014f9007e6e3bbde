"""The filter strings watsonx Assistant users write in a custom-service search integration (the toolkit's
reference examples: ``product:widgets``): ``field:value`` clauses, quoted or bare values, ``AND``/``OR``/``NOT``
in any case, through the same safe parser and the same expression tree as the filter language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.core.filters import And, Comparison, Not, Or, parse_filter
from assistant_bridge.core.filters.parse import NO_SUCH_FIELD
from assistant_bridge.errors import FilterSyntaxError
from tests.conftest import make_services, make_settings

pytestmark = pytest.mark.unit
FR, EN = Comparison("language", "==", "fr"), Comparison("language", "==", "en")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("language:fr", FR),
        ('language:"fr"', FR),
        ("language:'fr'", FR),
        ("language : fr", FR),
        ("language:fr AND page_number:2", And((FR, Comparison("page_number", "==", 2)))),
        ("language:fr OR language:en", Or((FR, EN))),
        ("language:fr or language:en", Or((FR, EN))),
        ("NOT language:fr", Not(FR)),
        (
            '(language:fr OR language:en) AND NOT title:"Release notes"',
            And((Or((FR, EN)), Not(Comparison("title", "==", "Release notes")))),
        ),
        ("page_number:3", Comparison("page_number", "==", 3)),
        ("start_time:1.5", Comparison("start_time", "==", 1.5)),
        ("language:en-US", Comparison("language", "==", "en-US")),
        ("url:https://intranet/handbook", Comparison("url", "==", "https://intranet/handbook")),
        ('language == "fr" AND page_number:2', And((FR, Comparison("page_number", "==", 2)))),  # the two forms mix
        ("product:widgets", NO_SUCH_FIELD),  # a field no chunk has: matches nothing, not an error
        ("product:widgets OR language:fr", Or((NO_SUCH_FIELD, FR))),
    ],
)
def test_forms(text: str, expected: Any) -> None:
    assert parse_filter(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "tenant:u2",
        "owner:bob",
        "session_id:s1",
        "workspaces:w1",
        "language:",
        "page_number:abc",
        "language:fr AND",
        "product:",
    ],
)
def test_refused(text: str) -> None:
    with pytest.raises(FilterSyntaxError):
        parse_filter(text)


def test_they_filter_a_search(tmp_path: Path) -> None:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path)
    app = create_app(s, make_services(s))
    with app.test_client() as c:
        for title, text in (
            ("Congés", "Les congés payés se posent dans le portail RH."),
            ("Holidays", "Paid holidays are booked in the HR portal."),
        ):
            assert c.post("/v1/documents", json={"title": title, "text": text}).status_code == 201

        def titles(flt: str) -> list[str]:
            resp = c.post(
                "/v1/search",
                json={
                    "query": "holidays congés portal portail",
                    "filter": flt,
                    "metadata": {"mode": "lexical", "collection_name": s.backend.collection},
                },
            )
            assert resp.status_code == 200, resp.get_json()
            return sorted(r["title"] for r in resp.get_json()["search_results"])

        assert titles("language:fr") == ["Congés"]
        assert titles('language:"en"') == ["Holidays"]
        assert titles("language:fr OR language:en") == ["Congés", "Holidays"]
        assert titles("NOT language:fr") == ["Holidays"]
        assert titles("product:widgets") == []
        assert titles("NOT product:widgets") == ["Congés", "Holidays"]
        assert c.post("/v1/search", json={"query": "x", "filter": "tenant:u2"}).status_code == 400
