"""Planning for agentic retrieval: the planner protocol, its records, and the embedded planner (no LLM).

A planner is called once per iteration with a :class:`PlanningState` (the question, the retrievers, what has
been searched and what was found, the pre-generation filter's confidence) and answers with a :class:`Plan`:
the sub-queries of the next round, each aimed at one or more retrievers, documents to read whole, or
``sufficient=True`` to stop.

The :class:`EmbeddedPlanner` (``foundationModelType: MANAGED``) works from :func:`~.analysis.analyze`:

* **comparison** → one search per compared entity that has no passage of its own yet ("Arthur's Magazine
  started", "First for Women started"); sufficient once each has one.
* **conjunction** → one search per clause first, then as a single question.
* **single** → a search for each named entity of the question without a passage of its own, and a *bridge
  hop* when the question describes something instead of naming it or the evidence is weak: names found in
  the best passages that the question does not mention (:func:`~.analysis.bridge_candidates`) are searched
  with the question's focus words. Sufficient when every entity is covered, the bridge hop (if needed) found
  a passage, and the confidence reaches its threshold.

An entity is *covered* when a found passage's title names it, or when it was already searched and a
passage of that search mentions it. Invariant: a planner never repeats a sub-query text it has issued.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .analysis import (
    Passage,
    QuestionAnalysis,
    about,
    analyze,
    bridge_candidates,
    content_words,
    fold,
    mentions,
    same_name,
)

Purpose = Literal["question", "entity", "clause", "bridge", "keywords", "llm"]
MAX_SUB_QUERIES = 4
FOCUS_WORDS = 4


@dataclass(frozen=True)
class RetrieverInfo:
    id: str
    description: str = ""


@dataclass(frozen=True)
class SubQuery:
    """One search text, sent to each retriever in ``retrievers``; ``target`` is the entity/clause it aims at."""

    text: str
    retrievers: tuple[str, ...]
    target: str = ""
    purpose: Purpose = "question"


@dataclass(frozen=True)
class EvidenceView:
    """What a planner sees of one found passage (best first in :attr:`PlanningState.evidence`)."""

    title: str
    text: str
    document_id: str
    retriever: str
    round: int
    query: str
    target: str = ""
    rank: int = 0  # rank in the search that found it first, 0-based


@dataclass(frozen=True)
class PlanningState:
    question: str
    retrievers: tuple[RetrieverInfo, ...]
    iteration: int  # 1-based
    max_iterations: int
    history: tuple[SubQuery, ...] = ()
    evidence: tuple[EvidenceView, ...] = ()
    confidence: float | None = None  # pre-generation filter score of the best passages, when available
    confidence_threshold: float | None = None
    conversation: tuple[tuple[str, str], ...] = ()  # (role, text), oldest first, the question last
    expanded: tuple[str, ...] = ()  # document ids already read whole


@dataclass(frozen=True)
class Plan:
    """One round's decision. ``fallback_code`` is the error code (of the error tree) of the planner model's
    failure when another planner planned this round instead; the caller counts it."""

    sub_queries: tuple[SubQuery, ...] = ()
    sufficient: bool = False
    expand_documents: tuple[str, ...] = ()
    reason: str = ""
    planner: str = "embedded"
    warnings: tuple[str, ...] = field(default_factory=tuple)
    fallback_code: str | None = None

    @property
    def stops(self) -> bool:
        return self.sufficient or not (self.sub_queries or self.expand_documents)


class Planner(Protocol):
    name: str

    def plan(self, state: PlanningState) -> Plan: ...


def route(text: str, retrievers: Sequence[RetrieverInfo]) -> tuple[str, ...]:
    """The retrievers a sub-query goes to: the one whose description shares the most words with it when
    exactly one does, otherwise all of them."""
    ids = tuple(r.id for r in retrievers)
    if len(retrievers) < 2:
        return ids
    words = set(content_words(text))
    scored = [(len(words & set(content_words(r.description))), r.id) for r in retrievers]
    best = max(s for s, _ in scored)
    winners = tuple(rid for s, rid in scored if s == best)
    return winners if best > 0 and len(winners) == 1 else ids


class EmbeddedPlanner:
    """Rule-based planner; see the module docstring. Deterministic and free of I/O."""

    name = "embedded"

    def __init__(
        self, *, max_sub_queries: int = MAX_SUB_QUERIES, bridge_sources: int = 1, bridge_candidates: int = 3
    ) -> None:
        self.max_sub_queries = max_sub_queries
        self.bridge_sources = bridge_sources
        self.bridge_limit = bridge_candidates

    # -------------------------------------------------------------------------------------- coverage
    @staticmethod
    def covered(entity: str, state: PlanningState) -> bool:
        for e in state.evidence:
            if about(e.title, entity):
                return True
            if e.target and same_name(e.target, entity) and e.rank < 3 and mentions(e.text, entity):
                return True
        return False

    @staticmethod
    def _tried(state: PlanningState) -> set[str]:
        return {fold(q.text) for q in state.history}

    @staticmethod
    def _targets(state: PlanningState, purpose: Purpose | None = None) -> list[str]:
        return [q.target for q in state.history if q.target and (purpose is None or q.purpose == purpose)]

    def _entity_query(
        self, entity: str, a: QuestionAnalysis, state: PlanningState, purpose: Purpose, tried: set[str]
    ) -> SubQuery | None:
        """The bare entity first (its own passage ranks first that way); with the question's focus words
        when that was tried and did not cover it."""
        focus = [w for w in a.focus if not mentions(entity, w)][:FOCUS_WORDS]
        for text in (entity, " ".join([entity, *focus])):
            if fold(text) not in tried:
                return SubQuery(text, route(text, state.retrievers), target=entity, purpose=purpose)
        return None

    # ------------------------------------------------------------------------------------------- plan
    def plan(self, state: PlanningState) -> Plan:
        a = analyze(state.question)
        tried = self._tried(state)
        subs: list[SubQuery] = []
        notes: list[str] = []

        def add(sq: SubQuery | None) -> None:
            if sq is not None and fold(sq.text) not in tried and len(subs) < self.max_sub_queries:
                tried.add(fold(sq.text))
                subs.append(sq)

        if not state.evidence and not state.history:
            add(SubQuery(state.question, route(state.question, state.retrievers), purpose="question"))
        if a.kind == "comparison":
            missing = [e for e in a.entities if not self.covered(e, state)]
            if not missing:
                return Plan(
                    sufficient=True,
                    reason=f"Comparison: each of the {len(a.entities)} compared entities has a passage of its own.",
                )
            for e in missing:
                add(self._entity_query(e, a, state, "entity", tried))
            notes.append(f"comparison: one search per entity without a passage ({len(missing)} of {len(a.entities)})")
            return self._finish(subs, notes, state)
        if a.kind == "conjunction" and not self._targets(state, "clause"):
            for clause in a.clauses:
                add(SubQuery(clause, route(clause, state.retrievers), target=clause, purpose="clause"))
            notes.append(f"conjunction: one search per clause ({len(a.clauses)})")
            return self._finish(subs, notes, state)
        return self._single(a, state, tried, subs, notes, add)

    def _single(
        self,
        a: QuestionAnalysis,
        state: PlanningState,
        tried: set[str],
        subs: list[SubQuery],
        notes: list[str],
        add: Callable[[SubQuery | None], None],
    ) -> Plan:
        confident = (
            state.confidence is None
            or state.confidence_threshold is None
            or state.confidence >= state.confidence_threshold
        )
        if state.confidence is not None and confident and not a.bridge_cue and state.evidence and not subs:
            return Plan(
                sufficient=True,
                reason=f"Evidence judged sufficient: confidence {state.confidence:.2f} "
                "reaches its threshold and the question names what it asks about.",
            )
        missing = [e for e in a.entities if not self.covered(e, state)]
        for e in missing:
            add(self._entity_query(e, a, state, "entity", tried))
        if missing:
            notes.append(f"{len(missing)} named entit{'y' if len(missing) == 1 else 'ies'} without a passage")
        hops = self._targets(state, "bridge")
        hop_found = any(self.covered(t, state) for t in hops)
        need_hop = (a.bridge_cue or not confident) and not hop_found
        if need_hop and state.evidence:
            # first hop: the passages about the question's own entities, then the best passages
            first = [e for e in state.evidence if any(about(e.title, x) for x in a.entities)]
            sources = list({id(e): e for e in [*first, *state.evidence]}.values())[: self.bridge_sources]
            passages = [Passage(e.title, e.text) for e in sources]
            exclude = [*hops, *a.entities]
            found = bridge_candidates(state.question, passages, limit=self.bridge_limit, exclude=exclude)
            for name in found:
                add(self._entity_query(name, a, state, "bridge", tried))
            if found:
                notes.append(
                    f"bridge hop through {len(found)} name{'s' if len(found) > 1 else ''} found in the best passages"
                )
        if not subs and not confident and a.focus:
            keywords = " ".join(a.focus[:6] + tuple(a.entities))
            add(SubQuery(keywords, route(keywords, state.retrievers), purpose="keywords"))
            if subs:
                notes.append("low confidence: keyword reformulation")
        if not subs:
            why = "every named entity has a passage" if not missing else "nothing new left to search"
            if hops:
                why += "; the bridge hop " + ("found its passage" if hop_found else "was tried")
            if state.confidence is not None:
                why += f"; confidence {state.confidence:.2f}"
            return Plan(
                sufficient=not missing and (hop_found or not need_hop) and confident,
                reason=f"Evidence judged {'sufficient' if confident else 'as good as it gets'}: {why}.",
            )
        return self._finish(subs, notes, state)

    @staticmethod
    def _finish(subs: list[SubQuery], notes: list[str], state: PlanningState) -> Plan:
        if not subs:
            return Plan(sufficient=False, reason="Nothing new left to search.")
        reason = "; ".join(notes) or "search the question"
        return Plan(sub_queries=tuple(subs), reason=f"Iteration {state.iteration}: {reason}.")
