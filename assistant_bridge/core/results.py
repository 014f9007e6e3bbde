"""The search result as the conversational search loop sees it, in the watsonx Custom-service wire shape.

A :class:`SearchResult` is what a custom search server returns in ``search_results[]`` (spec §A.1) and what
a client sends back in a ``search_results`` message (§A.2)::

    {"result_metadata": {"score": 0.8, ...}, "title": "...", "body": "...", "url": "...",
     "highlight": {"body": ["...", "..."]}}

Invariant: a ``SearchResult`` never changes after it is built. ``result_metadata`` is copied into a read-only
mapping, so unknown keys a server put there are passed through untouched (IBM: "The assistant passes the
information as part of the ``search_results`` object in the final response").
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class SearchResult:
    """One search result.

    :param title: shown on citation cards and sent to the generator with each snippet.
    :param body: the passage (or the whole document when ``highlight_body`` carries the passages).
    :param url: link shown on citation cards; ``None`` when the server sent none.
    :param highlight_body: the ``highlight.body`` list. ``None`` when absent. When present and non-empty its
        elements, not ``body``, become the snippets (see :mod:`assistant_bridge.core.snippets`).
    :param result_metadata: passed through as received (``score``, ``document_retrieval_source``, custom keys).
    :param id: the result id when the source has one; IBM notes it "may not be unique".
    :param similarity: the query–passage cosine of the service's own dense search
        (:attr:`~assistant_bridge.domain.SearchHit.similarity`); never read from nor written to the wire, since a
        custom search server's ``score`` has no known scale. ``None`` otherwise.
    """

    title: str
    body: str
    url: str | None = None
    highlight_body: tuple[str, ...] | None = None
    result_metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    similarity: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "result_metadata", _frozen_mapping(self.result_metadata))
        if self.highlight_body is not None and not isinstance(self.highlight_body, tuple):
            object.__setattr__(self, "highlight_body", tuple(self.highlight_body))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchResult:
        """Build from one ``search_results[]`` item.

        The edge validates the JSON against its schema first; this function is still lenient so that it
        never raises on a well-formed object: a missing ``title``/``body`` becomes ``""``, a ``highlight.body``
        that is not a list is ignored, and non-string list elements are skipped.
        """
        highlight = data.get("highlight")
        hl_body: tuple[str, ...] | None = None
        if isinstance(highlight, Mapping):
            raw = highlight.get("body")
            if isinstance(raw, (list, tuple)):
                hl_body = tuple(item for item in raw if isinstance(item, str))
        metadata = data.get("result_metadata")
        raw_id = data.get("id")
        url = data.get("url")
        return cls(
            title=str(data.get("title") or ""),
            body=str(data.get("body") or ""),
            url=url if isinstance(url, str) else None,
            highlight_body=hl_body,
            result_metadata=metadata if isinstance(metadata, Mapping) else {},
            id=None if raw_id is None else str(raw_id),
        )

    def to_json(self) -> dict[str, Any]:
        """The Custom-service wire shape. ``url``, ``highlight`` and ``id`` are left out when unset."""
        out: dict[str, Any] = {
            "result_metadata": copy.deepcopy(dict(self.result_metadata)),
            "title": self.title,
            "body": self.body,
        }
        if self.url is not None:
            out["url"] = self.url
        if self.highlight_body is not None:
            out["highlight"] = {"body": list(self.highlight_body)}
        if self.id is not None:
            out["id"] = self.id
        return out
