"""``Services.search``: how a hybrid search is fused (``search.hybrid_fusion``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.backends.base import weighted_fuse
from assistant_bridge.domain import Ownership, Principal, Scope
from tests.conftest import make_services, make_settings, refused

pytestmark = pytest.mark.unit

TEXTS = {
    "Reset your password": "Open the self-service portal and choose reset password; a code arrives by SMS.",
    "Expense reports": "Submit expense reports with receipts within thirty days of the purchase.",
    "VPN access": "Install the VPN client and sign in with your badge number to reach the intranet.",
}
SCOPE = Scope(principal=Principal("admin", admin=True))


def loaded(tmp_path: Path, **search: Any) -> Any:
    svc = make_services(make_settings(tmp_path, search=search))
    for title, text in TEXTS.items():
        svc.ingestor.ingest_text(text, title=title, ownership=Ownership())
    return svc


def test_weighted_hybrid_fuses_a_dense_and_a_lexical_search(tmp_path: Path, monkeypatch: Any) -> None:
    svc = loaded(tmp_path, hybrid_depth=7, hybrid_dense_weight=0.7)
    asked: list[tuple[str, int]] = []
    search = svc.backend.search

    def spy(query: Any) -> Any:
        asked.append((query.mode, query.limit))
        return search(query)

    monkeypatch.setattr(svc.backend, "search", spy)
    hits = svc.search("receipts for expense reports", SCOPE, mode="hybrid", limit=2)
    assert asked == [("dense", 7), ("lexical", 7)]  # each side searched to the depth, not the limit
    dense = svc.search("receipts for expense reports", SCOPE, mode="dense", limit=7)
    lexical = svc.search("receipts for expense reports", SCOPE, mode="lexical", limit=7)
    expected = weighted_fuse([dense, lexical], (0.7, 0.3), 2)
    assert [h.chunk.id for h in hits] == [h.chunk.id for h in expected]
    assert hits[0].chunk.title == "Expense reports"
    assert [h.score for h in hits] == pytest.approx([h.score for h in expected])


def test_rrf_hybrid_is_the_backends_own(tmp_path: Path, monkeypatch: Any) -> None:
    svc = loaded(tmp_path, hybrid_fusion="rrf")
    modes: list[str] = []
    search = svc.backend.search
    monkeypatch.setattr(svc.backend, "search", lambda q: modes.append(q.mode) or search(q))
    assert svc.search("expense receipts", SCOPE, mode="hybrid")[0].chunk.title == "Expense reports"
    assert modes == ["hybrid"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("hybrid_fusion", "linear"), ("hybrid_dense_weight", 1.5), ("hybrid_depth", 0)],
)
def test_bad_hybrid_settings_are_refused(tmp_path: Path, key: str, value: Any) -> None:
    with refused(f"search.{key}"):
        make_settings(tmp_path, search={key: value})
