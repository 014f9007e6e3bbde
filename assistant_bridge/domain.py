"""Domain types shared by every layer. Frozen, plain, no I/O.

A *document* is what a user ingests; a *chunk* is the unit that is embedded, stored, searched and cited.
Every chunk carries its scope fields (tenant, owner, workspaces, session) so that every search can be
filtered on the server side, and its location fields (page, boxes, times, character offsets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

SearchMode = Literal["lexical", "dense", "hybrid"]
Modality = Literal["text", "image_caption", "audio_transcript", "video_transcript"]
SEARCH_MODES: tuple[str, ...] = ("lexical", "dense", "hybrid")
MODALITIES: tuple[str, ...] = ("text", "image_caption", "audio_transcript", "video_transcript")


@dataclass(frozen=True)
class BBox:
    """A box on one PDF page, in PDF user-space points with the origin at the top left."""

    page_number: int
    x1: float
    y1: float
    x2: float
    y2: float
    layout_width: float | None = None
    layout_height: float | None = None

    @classmethod
    def union(cls, boxes: Sequence[BBox]) -> BBox:
        """The smallest box holding ``boxes`` (at least one, all on the page of the first)."""
        head = boxes[0]
        return cls(
            page_number=head.page_number,
            x1=min(box.x1 for box in boxes),
            y1=min(box.y1 for box in boxes),
            x2=max(box.x2 for box in boxes),
            y2=max(box.y2 for box in boxes),
            layout_width=head.layout_width,
            layout_height=head.layout_height,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "bbox": [self.x1, self.y1, self.x2, self.y2],
            "page_number": self.page_number,
            "layout_width": self.layout_width,
            "layout_height": self.layout_height,
        }


@dataclass(frozen=True)
class Principal:
    """Who is calling, after authentication.

    ``tenant`` is the end user (``X-End-User-ID`` / ``external_user_id``) a service key acts for; when it is
    set the caller sees only that tenant's documents plus global ones. ``admin`` callers without a tenant see
    everything (the UBIK "API key without external_user_id" rule). Who may *change* a document is
    :mod:`assistant_bridge.core.authz`'s rule.
    """

    user_id: str
    workspaces: tuple[str, ...] = ()
    tenant: str | None = None
    admin: bool = False
    key_id: str = "anonymous"
    admin_workspaces: tuple[str, ...] = ()  # workspaces whose documents this credential administers

    @property
    def owner_key(self) -> str:
        """Who a session, an execution or an ingestion job belongs to: the credential, the user and the end
        user it acts for. One caller is one owner everywhere."""
        return f"{self.key_id}|{self.user_id}|{self.tenant or ''}"


@dataclass(frozen=True)
class Scope:
    """What one request may read. Built from a :class:`Principal` plus the request's session."""

    principal: Principal
    session_id: str | None = None
    document_ids: tuple[str, ...] | None = None  # narrows, never widens

    @property
    def unrestricted(self) -> bool:
        return self.principal.admin and self.principal.tenant is None


@dataclass(frozen=True)
class Ownership:
    """Scope fields written on every chunk of a document at ingestion."""

    owner_user_id: str = ""
    workspace_ids: tuple[str, ...] = ()
    tenant: str = ""  # "" = global (created without an end user)
    session_id: str = ""  # "" = not attached to a chat session


@dataclass(frozen=True)
class Chunk:
    id: str
    document_id: str
    title: str
    text: str
    position: int = 0
    url: str | None = None
    start_char: int = 0  # offsets of the chunk in the document's full text
    end_char: int = 0
    language: str = ""
    modality: str = "text"
    page_number: int | None = None
    bboxes: tuple[BBox, ...] = ()
    start_time: float | None = None
    end_time: float | None = None
    filename: str = ""
    ownership: Ownership = field(default_factory=Ownership)


@dataclass(frozen=True)
class SearchHit:
    """One result of a backend search.

    :ivar similarity: the cosine of the query's and the chunk's vectors when the search had a dense side: a
        dense search (then it is also ``score``) or a ``weighted`` hybrid one (``Services._hybrid``); ``None``
        for lexical results and a backend's own ``rrf`` fusion. The extractive generator reads it to weigh
        passages (:class:`~assistant_bridge.generators.extractive.Tuning` ``w_similarity_gap``).
    """

    chunk: Chunk
    score: float
    highlights: tuple[str, ...] = ()
    similarity: float | None = None


@dataclass(frozen=True)
class SearchQuery:
    """A backend-neutral search. ``filter`` is a parsed filter-language expression (``core.filters``)."""

    text: str
    scope: Scope
    mode: SearchMode = "dense"
    limit: int = 10
    filter: Any = None
    collection: str | None = None
    vector: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    filename: str
    content_hash: str
    mime_type: str
    ownership: Ownership
    chunk_count: int
    created_at: float
    url: str | None = None
    language: str = ""
    status: str = "ready"
    text: str = ""
