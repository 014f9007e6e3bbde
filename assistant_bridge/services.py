"""The service container: one embedder, backend, store and ingestor per worker, built lightly and warmed
up once after gunicorn forks (``warm_up``), never at import."""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import numpy as np

from assistant_bridge.backends.base import SearchBackend, summed_fuse, weighted_fuse
from assistant_bridge.backends.factory import make_backend
from assistant_bridge.core.filters import matches, stored_record
from assistant_bridge.core.language import detect_language
from assistant_bridge.core.loop import OptionWords
from assistant_bridge.core.snippets import MAX_SNIPPETS
from assistant_bridge.domain import Chunk, Document, Scope, SearchHit, SearchQuery
from assistant_bridge.embedders.base import Embedder
from assistant_bridge.embedders.factory import make_embedder
from assistant_bridge.errors import BridgeError
from assistant_bridge.generators.sentences import (
    asked_words,
    base_terms,
    entry_word_share,
    terms,
    unknown_runs,
    unknown_words,
)
from assistant_bridge.ingest.queue import IngestQueue
from assistant_bridge.ingest.service import Ingestor, chunk_id, entry_hashes
from assistant_bridge.lru import Lru
from assistant_bridge.settings import Settings
from assistant_bridge.store import SQLiteStore
from assistant_bridge.text import (
    ENTRY_HEAD_CHARS,
    asked_programs,
    asks_for_command,
    asks_for_kind,
    asks_for_option,
    document_name,
    entry_term,
    holds_code_names,
    manual_page_name,
    named_documents,
    named_manual_pages,
    names_member,
    option_entries,
    overview_subject,
    passage_defines,
    titles_subject,
)

log = logging.getLogger(__name__)
# A blended lexical search (a conversation turn's rewrite beside the message as asked) weighs the BM25 of a
# rewrite that only adds words to the message by this much: the words it carries over (a page an earlier
# answer cited: "xz", "gitfaq") are rare, so BM25 weighs them far more than a vector does. Chosen on the FiQA
# conversations in hybrid mode (gain recovered / recall lost at 1.0, 0.5, 0.25: 130 / 5.8 %, 142 / 2.8 %,
# 92 / 5.8 %); docs/benchmarks.md.
BLENDED_BM25_QUERY_WEIGHT = 0.5
# A French or Japanese message that names a manual page only in another language ("ssh で踏み台ホストを経由して接続
# するオプションは？" and ssh(1) in English) finds pages in its own language by its words: when none of the
# first MAX_SNIPPETS results (the passages an answer is drawn from) comes from a page it names, that page's own
# best NAMED_PAGE_PASSAGES for the same search come first (:meth:`Services.with_named_pages`).
NAMED_PAGE_PASSAGES = 4
# a conversation's topic page lends this many of its passages to the head of a follow-up's results
# (:meth:`Services.with_topic_page`): the rest stay the search's, so an answer may still come from another page
# ("And extract it somewhere else?" after questions about zip: unzip(1))
TOPIC_PAGE_PASSAGES = 2
ENTRY_DOCUMENTS = 64  # documents whose option entries are kept (:meth:`Services.with_option_entry`)
# An option entry is chosen by its dense similarity with the message plus this much of the share of the message's
# words it holds (:func:`~assistant_bridge.generators.sentences.entry_word_share`): a page's entries are close
# to each other in a dense model's space (tcpdump's -r "Read packets from file" and -w "Write the raw packets to
# file": 0.895 and 0.904 for "Which tcpdump option reads packets from a saved capture file?"). Chosen on the 52
# option questions of the real-documents benchmark's earlier splits (the right entry first: 32 of 52 by
# similarity alone, 37 / 38 / 37 / 34 at 0.02 / 0.03 / 0.05 / 0.10) and checked on the 47 of two later splits
# (27 -> 36); docs/benchmarks.md.
OPTION_ENTRY_WORD_WEIGHT = 0.03
# an entry within this much cosine of the closest passage is as close as it: the entry's vector is made from its
# head (two sentences), a passage's from a dozen options, and a smaller difference says nothing either way
OPTION_ENTRY_TIE = 0.005
# ... unless one entry holds every word the message asks with (its idf-weighted share, 1.0 up to rounding): a
# Japanese message's vector is as close to the page's passages as to its entries ("gzip で伸長するオプションは何
# ですか？" and "-d --decompress --uncompress: 伸長します。"). Holding three quarters of them brought the wrong
# entry as often as the right one (the jobs builtin for "removes a job from the table of active jobs").
OPTION_ENTRY_FULL_SHARE = 0.99
OPENING_CHUNKS = 3  # where a document says what it is about (:meth:`Services.with_opening`)
_COMMAND_WORD = re.compile(r"[a-z][a-z0-9_.+-]*")  # what may name a command in a message (NFKC, lower case)
_COMMAND_WORDS = 16  # the message's first this many such words are looked up
# what no word of a language is spelt with, but a configuration file's name is: "ssh_config", "rsyncd.conf" (a
# program's name with a digit, "sqlite3", is also what other documents call the program: the CLI's own guide)
_NOT_A_WORD = re.compile(r"[_.]")


@dataclass
class _PageEntries:
    """A document's option entries (:func:`~assistant_bridge.text.option_entries`) and, once a search reads them,
    the :func:`~assistant_bridge.generators.sentences.terms` of each and of the whole document."""

    spans: list[tuple[int, int]]
    words: list[frozenset[str]] | None = None
    page_words: frozenset[str] | None = None  # the terms of the whole document
    base_words: frozenset[str] | None = None  # the terms of its words without an inflection
    normal_text: str | None = None  # the whole document, NFKC
    hashes: tuple[str, tuple[list[str], list[str]]] | None = None  # the title they were made with, the entries' keys
    members: bool | None = None  # most entries name members of a module or a class (:meth:`api_reference`)

    def api_reference(self, text: str) -> bool:
        """Most of the document ``text``'s entries name members of a module or a class
        (:func:`~assistant_bridge.text.names_member`: "functools.partial(func, /, *args, **keywords)"), as an API
        reference's do; found once."""
        if self.members is None:
            heads = [entry_term(text[start : start + ENTRY_HEAD_CHARS]) for start, _ in self.spans]
            self.members = 2 * sum(names_member(h) for h in heads) > len(heads)
        return self.members

    def entry_hashes(self, title: str, text: str) -> tuple[list[str], list[str]]:
        """The entries' cache keys (:func:`~assistant_bridge.ingest.service.entry_hashes`), found once per title."""
        if self.hashes is None or self.hashes[0] != title:
            self.hashes = (title, entry_hashes(title, text, self.spans))
        return self.hashes[1]

    def normal(self, text: str) -> str:
        """The whole document ``text`` in NFKC, found once."""
        if self.normal_text is None:
            self.normal_text = unicodedata.normalize("NFKC", text)
        return self.normal_text

    def entry_terms(self, text: str) -> list[frozenset[str]]:
        """The terms of each entry of the document ``text``, and of its words without an inflection
        (:func:`~assistant_bridge.generators.sentences.base_terms`), found once."""
        if self.words is None:
            self.words = [frozenset(terms(text[start:end])) | base_terms(text[start:end]) for start, end in self.spans]
        return self.words

    def page_bases(self, text: str) -> frozenset[str]:
        """The terms of the whole document ``text``'s words without an inflection, found once."""
        if self.base_words is None:
            self.base_words = base_terms(text)
        return self.base_words

    def page_terms(self, text: str) -> frozenset[str]:
        """The terms of the whole document ``text``, found once."""
        if self.page_words is None:
            self.page_words = frozenset(terms(text))
        return self.page_words


@dataclass
class SearchTimings:
    embed_ms: float = 0.0
    backend_ms: float = 0.0


T = TypeVar("T")


@dataclass
class Services:
    settings: Settings
    embedder: Embedder
    backend: SearchBackend
    store: SQLiteStore
    ingestor: Ingestor
    queue: IngestQueue
    _features: dict[type, Any] = field(default_factory=dict)  # feature runtimes and components, by their type
    _warm: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _features_lock: threading.Lock = field(default_factory=threading.Lock)
    # a document's option entries by (id, content hash): finding them reads its whole text (20 ms a megabyte)
    _entries: Lru[tuple[str, str], _PageEntries] = field(default_factory=lambda: Lru(ENTRY_DOCUMENTS))

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        backend: SearchBackend | None = None,
        store: SQLiteStore | None = None,
    ) -> Services:
        e = settings.embedder
        if embedder is None:
            embedder = make_embedder(**vars(e))  # the [embedder] table is the factory's options
        if store is None:
            settings.data_path.mkdir(parents=True, exist_ok=True)
            store = SQLiteStore(settings.data_path / "meta.sqlite3")
        if backend is None:
            backend = _LazyBackend(settings, embedder)
        assert backend is not None
        ingestor = Ingestor(backend, embedder, store, settings.ingest)
        queue = IngestQueue(store, ingestor, settings.data_path / "ingest-spool")
        return cls(settings, embedder, backend, store, ingestor, queue)

    def feature(self, kind: type[T], make: Callable[[Services], T]) -> T:
        """The feature runtime of type ``kind`` (the conversation, agentic or tools runtime), made by ``make(self)``
        on first use; a test may :meth:`register` its own beforehand."""
        with self._features_lock:
            found = self._features.get(kind)
            if found is None:
                found = self._features[kind] = make(self)
        return cast(T, found)

    def registered(self, kind: type[T]) -> T | None:
        """The ``kind`` registered or made so far, if any (nothing is made)."""
        return cast(T | None, self._features.get(kind))

    def register(self, component: T, kind: type[T] | None = None) -> T:
        """Use ``component`` as the ``kind`` (by default its own type): a runtime built with other parts, or
        the components a test gives ``rag_search``."""
        with self._features_lock:
            self._features[kind or type(component)] = component
        return component

    def components(self) -> list[Any]:
        """Everything registered or made so far (``/readyz`` asks each whether it is ready)."""
        return list(self._features.values())

    def warm_up(self) -> None:
        with self._lock:
            if self._warm:
                return
            t = time.perf_counter()
            self.embedder.warm_up()
            self.backend.warm_up()
            settled = self.ingestor.recover()  # what a crashed writer left (``ingest.service``)
            if settled:
                log.warning("ingest.recovery", extra={"settled": settled})
            for component in self.components():
                warm = getattr(component, "warm_up", None)
                if callable(warm):
                    warm()
            self._warm_search()
            self._warm = True
            log.info(
                "services.warm_up",
                extra={
                    "ms": round((time.perf_counter() - t) * 1000),
                    "backend": self.backend.name,
                    "embedder": self.embedder.name,
                    "engine": getattr(self.embedder, "engine", "") or self.embedder.name,
                },
            )

    def _warm_search(self) -> None:
        """One search of each mode the default path serves, so the first user's search runs warm code (the
        dense one also runs the embedder once, whose first run allocates)."""
        from assistant_bridge.domain import Principal

        scope = Scope(Principal("warm-up", admin=True))
        for mode in ("lexical", "dense"):
            try:
                self.search("warm up", scope, mode=mode, limit=1)
            except BridgeError as exc:  # a backend still starting: the first search pays, nothing fails
                log.info("services.warm_search_skipped", extra={"mode": mode, "code": exc.code})

    def search(
        self,
        text: str,
        scope: Scope,
        *,
        mode: str | None = None,
        limit: int | None = None,
        filter: Any = None,
        timings: SearchTimings | None = None,
        blend: tuple[str, float] | None = None,
    ) -> list[SearchHit]:
        """Embed the query when the mode needs it, then search the backend within ``scope``.

        :param blend: ``(other text, weight)``: a dense or hybrid search looks for the sum of the query's
            vector and ``weight`` times the other text's vector (both unit length), normalised: chunks close
            to both texts come first. A lexical search adds ``weight`` times the other text's BM25 scores to
            the query's, weighed down when the query only adds words to the other text
            (:meth:`_blended_lexical`). A conversation turn blends its rewritten query with the message as asked
            (``docs/conversation-and-safety.md``). A weighted hybrid search blends both of its sides so (a
            backend's own ``rrf`` fusion: its dense side only).
        """
        mode = mode or self.settings.backend.default_mode
        limit = limit or self.settings.search.default_limit
        if blend is not None and not (blend[1] > 0 and blend[0].strip() and blend[0] != text):
            blend = None
        t0 = time.perf_counter()
        vector = None
        if mode in ("dense", "hybrid"):
            own = self.embedder.embed_queries([text])[0]
            if blend is not None:
                mixed = own + blend[1] * self.embedder.embed_queries([blend[0]])[0]
                norm = float(np.linalg.norm(mixed))
                own = mixed / norm if norm > 0 else own
            vector = tuple(float(x) for x in own)
        t1 = time.perf_counter()
        query = SearchQuery(text=text, scope=scope, mode=mode, limit=limit, filter=filter, vector=vector)  # type: ignore[arg-type]
        if mode == "hybrid":
            hits = self._hybrid(query, blend)
        elif mode == "lexical" and blend is not None:
            hits = self._blended_lexical(query, blend, limit)
        else:
            hits = self.backend.search(query)
            if mode == "dense":  # every backend scores a dense search with the cosine
                hits = [replace(h, similarity=h.score) for h in hits]
        if timings is not None:
            timings.embed_ms = (t1 - t0) * 1000
            timings.backend_ms = (time.perf_counter() - t1) * 1000
        return hits

    def answer_hits(
        self,
        query: str,
        scope: Scope,
        *,
        mode: str | None = None,
        limit: int | None = None,
        filter: Any = None,
        blend: tuple[str, float] | None = None,
        topic: str | None = None,
    ) -> list[SearchHit]:
        """The hits a question is answered from, for the ``/message`` turn and the ``rag_search`` tool alike:
        :meth:`search`'s for ``query``, then the passages the message (the turn's words as asked, ``blend[0]``,
        else ``query``) asks for by name first (:meth:`with_named_pages`, :meth:`with_code_names`,
        :meth:`with_opening`), then those of the page of the conversation's ``topic`` when another page leads
        (:meth:`with_topic_page`), and the option entry that ``query`` asks about (:meth:`with_option_entry`; a
        rewrite names the page a follow-up only implies: "Only those bigger than 100 MB? — files / find"). Every
        step reads within ``scope`` and keeps to ``filter``."""
        hits = self.search(query, scope, mode=mode, limit=limit, filter=filter, blend=blend)
        message = blend[0] if blend is not None else query
        hits = self.with_named_pages(message, hits, query, scope, mode=mode, filter=filter, blend=blend)
        hits = self.with_code_names(message, hits)
        hits = self.with_opening(message, hits, scope, filter=filter)
        hits = self.with_topic_page(topic, message, hits, query, scope, mode=mode, filter=filter, blend=blend)
        return self.with_option_entry(query, hits, scope, filter=filter, asked=message)

    def with_named_pages(
        self,
        message: str,
        hits: list[SearchHit],
        text: str,
        scope: Scope,
        *,
        mode: str | None = None,
        filter: Any = None,
        blend: tuple[str, float] | None = None,
    ) -> list[SearchHit]:
        """``hits`` (the results of :meth:`search` for ``text``) with the best passages of the manual pages
        ``message`` names first, when none of the first hits (as many as an answer draws from,
        :data:`~assistant_bridge.core.snippets.MAX_SNIPPETS`) comes from a page it names, for each page ``scope``
        may read only in other languages than the message's (a page in its language is found by its words). Each page's passages come from the same search within that page; as
        many hits as before. For an English message, and for a page in the message's language, only a name that
        no word is spelt like (:data:`_NOT_A_WORD`: "ssh_config", "rsyncd.conf"): English uses many
        commands' names as words ("How can a new contributor find a sponsor?" is not about find(1), held in
        French), and a page in the message's language is found by its words unless a page with words much like
        its own is found instead ("Which ssh_config keyword sets the port to connect to on the remote host?"
        finds ssh(1)'s ``-p port: Port to connect to on the remote host``)."""
        language = detect_language(message)
        words = _command_words(message)
        if language == "en":  # "find a sponsor", "less than", "which file": English names commands as words
            words = [w for w in words if _NOT_A_WORD.search(w)]
        pages = self.store.manual_pages(dict.fromkeys(words[:_COMMAND_WORDS]), scope)
        if not pages:
            return hits
        names = named_manual_pages(message, (title for _, title, _ in pages))
        if names & {manual_page_name(h.chunk.title or "") for h in hits[:MAX_SNIPPETS]}:
            return hits  # the search found a page the message names: its subject
        named: dict[str, list[tuple[str, str]]] = {}
        for document, title, lang in pages:
            if (name := manual_page_name(title)) in names:
                named.setdefault(name, []).append((document, lang))
        first: list[SearchHit] = []
        for name, documents in sorted(named.items()):
            if any(lang == language for _, lang in documents) and not _NOT_A_WORD.search(name):
                continue
            within = replace(scope, document_ids=tuple(d for d, _ in documents))  # narrower: what scope may read
            first += self.search(text, within, mode=mode, limit=NAMED_PAGE_PASSAGES, filter=filter, blend=blend)
        if not first:
            return hits
        log.debug("search.named_pages", extra={"language": language, "pages": sorted(named), "first": len(first)})
        return _put_first(first, hits, max(len(hits), len(first)))

    def with_topic_page(
        self,
        topic: str | None,
        message: str,
        hits: list[SearchHit],
        text: str,
        scope: Scope,
        *,
        mode: str | None = None,
        filter: Any = None,
        blend: tuple[str, float] | None = None,
    ) -> list[SearchHit]:
        """``hits`` (the results of :meth:`search` for ``text``, a conversation turn's rewrite) with the best
        :data:`TOPIC_PAGE_PASSAGES` passages of the manual page of ``topic`` first, when the first hit comes from
        another page. ``topic`` is the command a follow-up is about (:attr:`~assistant_bridge.conversation.rewrite.
        Rewrite.topic`: the user named it and its page answered): "How do I only see what it would run without
        running it? — make" is a question about make(1), whose ``-n`` entry a search of every page ranks below
        less(1)'s passages on what "running" shows. Unchanged when ``message`` (the turn as asked) names a manual
        page itself ("When I unzip it, can it overwrite without asking?" after questions about zip), when no page
        of ``topic`` is one ``scope`` may read, or when the search within it finds nothing that passes ``filter``.
        The passages come from the same search within that page; as many hits as before."""
        if topic is None or not hits or (manual_page_name(hits[0].chunk.title or "") or "").lower() == topic:
            return hits
        words = _command_words(message)
        if self.store.manual_pages(dict.fromkeys(w for w in words[:_COMMAND_WORDS] if w != topic), scope):
            return hits  # the message names a page of its own: its subject, not the topic's
        pages = [d for d, _, _ in self.store.manual_pages([topic], scope)]
        if not pages:
            return hits
        within = replace(scope, document_ids=tuple(pages))  # narrower: what scope may read
        first = self.search(text, within, mode=mode, limit=TOPIC_PAGE_PASSAGES, filter=filter, blend=blend)
        if not first:
            return hits
        log.debug("search.topic_page", extra={"topic": topic, "first": len(first)})
        return _put_first(first, hits, len(hits))

    @staticmethod
    def with_code_names(message: str, hits: list[SearchHit]) -> list[SearchHit]:
        """``hits`` with those that write a name ``message`` writes as code (:func:`~assistant_bridge.text.code_names`:
        ``ifnull()``, ``group_concat``, ``os.path.join``) first, each group in search order. "What does ifnull()
        return in SQLite?" is answered by the passage that defines ``ifnull()``; a dense search ranks the pages
        about NULLs above it, since they say more about NULLs. No such name, or no hit writing it: unchanged."""
        writes = holds_code_names(message, [h.chunk.text for h in hits])
        if not any(writes) or all(writes):
            return hits
        return [h for h, w in zip(hits, writes, strict=True) if w] + [
            h for h, w in zip(hits, writes, strict=True) if not w
        ]

    def with_opening(self, message: str, hits: list[SearchHit], scope: Scope, *, filter: Any = None) -> list[SearchHit]:
        """``hits`` with the opening passage of the document ``message`` asks about first, when it asks what a
        named thing is or does (:func:`~assistant_bridge.text.overview_subject`: "What does git rebase do?") and
        one of the hits comes from a document whose title names it (:func:`~assistant_bridge.text.titles_subject`:
        git-rebase(1)). A document starts with what it is about (a manual page's NAME line and description, a
        README's first paragraph); a search for the subject's name finds its later passages as often, since each
        of them names it too. Among several such documents, the first in the message's language, else the best
        ranked. The opening passages are its first chunk and, when that one says what the subject is only in a
        line without a sentence, the first of its first :data:`OPENING_CHUNKS` chunks that says it in a sentence
        (:func:`~assistant_bridge.text.passage_defines`); they must pass ``filter`` as the hits did. As many hits
        as before."""
        subject = overview_subject(message)
        if subject is None or not hits:
            return hits
        named = [h for h in hits if titles_subject(h.chunk.title or "", subject, h.chunk.filename)]
        if not named:
            return hits
        language = detect_language(message)
        best = next((h for h in named if h.chunk.language == language), named[0])
        wanted = [chunk_id(best.chunk.document_id, p) for p in range(OPENING_CHUNKS)]  # not the whole document
        chunks = sorted(self.backend.get_chunks(wanted, scope), key=lambda c: c.position)
        chunks = [c for c in chunks if matches(filter, stored_record(c))]
        if not chunks:
            return hits
        # the first chunk, and the one whose prose says what the subject is when the first does not: a manual
        # page's synopsis may fill its first chunk after the NAME line ("tar - Utilitaire d'archivage"), and its
        # description ("GNU tar est un programme d'archivage…") comes next
        prose = (c for c in chunks if passage_defines(subject, c.text, kinds=("what", "does")))
        opening = list(dict.fromkeys([chunks[0], next(prose, chunks[0])]))
        log.debug("search.opening", extra={"subject": subject, "document": chunks[0].document_id})
        similarity = max((h.similarity or 0.0) for h in named)
        first = [SearchHit(c, hits[0].score, similarity=similarity) for c in opening]
        return _put_first(first, hits, len(hits))

    def with_option_entry(
        self, message: str, hits: list[SearchHit], scope: Scope, *, filter: Any = None, asked: str | None = None
    ) -> list[SearchHit]:
        """``hits`` with the chunk of the option entry that best matches ``message`` first, when ``message`` names
        a manual page one of the hits comes from, or another manual of a program (an Info or HTML manual,
        :func:`~assistant_bridge.text.named_documents`; a manual page first when both are named), does not
        ask what the page's command is (:meth:`with_opening` does), and that chunk is not among the first
        :data:`~assistant_bridge.core.snippets.MAX_SNIPPETS` hits. A long page (curl(1): some 270 options in
        190 chunks) holds a dozen options in each chunk, and a question about one ("Which curl option fetches the
        headers only?") does not find its chunk among them; each entry
        (:func:`~assistant_bridge.text.option_entries`) is matched on its own, by the embedder's similarity
        with the message, from the vectors ingestion cached (:meth:`~assistant_bridge.ingest.service.Ingestor.
        embed_entries`; a document ingested before that has none until ``ingest --reindex``: nothing changes), plus
        :data:`OPTION_ENTRY_WORD_WEIGHT` times the share of the message's words it holds (``asked``: the words of a
        conversation turn as asked, when ``message`` is its rewrite). Some entry must be closer to the message
        than every passage among the first hits, or as close within :data:`OPTION_ENTRY_TIE` (a part of a page
        that answers a question matches it better than a whole passage does; when none does, the question is
        about something else), or hold every word the message asks with (:data:`OPTION_ENTRY_FULL_SHARE`); the
        best entry's chunk (of the chunks that hold the entry's term, the one that
        holds most of the entry, :meth:`_chunk_at`) must pass ``filter`` as the hits did. As many hits as
        before."""
        if not hits or overview_subject(message):
            return hits
        named = named_documents(message, (h.chunk.title or "" for h in hits))
        read = functools.cache(self.store.get_document)  # each document once
        page = _manual_first(
            hits, lambda h: h.chunk.title or "", named, lambda h: self._lists_entries(h.chunk.document_id, read)
        )
        doc, unnamed = self._asked_manual(
            asked_programs(message),
            read(page.chunk.document_id) if page is not None else None,
            [(h.chunk.document_id, h.chunk.title or "") for h in hits],
            read,
        )
        if doc is not None and asks_for_command(message) and not asks_for_option(message):
            doc, unnamed = self._command_manual(doc, unnamed, asked_programs(message), hits, read)
        if doc is None:
            return hits
        page = next((h for h in hits if h.chunk.document_id == doc.id), hits[0])
        entries = self._page_entries(doc)
        spans = entries.spans
        if not spans:
            return hits
        vectors = self.ingestor.cached_entries(
            doc.title, doc.text, spans, hashes=entries.entry_hashes(doc.title, doc.text)
        )
        if not vectors:
            log.info("search.option_entries_not_cached", extra={"document": doc.id, "entries": len(spans)})
            return hits
        indices = list(vectors)
        similarity = np.vstack([vectors[i] for i in indices]) @ self.embedder.embed_queries([message])[0]
        words = entries.entry_terms(doc.text)
        # the words of the question as asked: a conversation turn's rewrite adds the terms that name its page
        # ("Only those by one author? — graph / commit history / git-log"), which are not what it asks for
        said = asked if asked is not None else message
        share = entry_word_share(said, document_name(doc.title) or "", [words[i] for i in indices])
        if (
            not unnamed
            and similarity.max() <= max((h.similarity or 0.0) for h in hits[:MAX_SNIPPETS]) - OPTION_ENTRY_TIE
            and share.max() < OPTION_ENTRY_FULL_SHARE
        ):
            return hits  # no entry matches better than a passage found already: no option was asked about
        best_entry = int(np.argmax(similarity + OPTION_ENTRY_WORD_WEIGHT * share))
        best = self._chunk_at(doc.id, doc.chunk_count, spans[indices[best_entry]][0], scope)
        if best is None or not matches(filter, stored_record(best)):
            return hits
        if any(h.chunk.id == best.id for h in hits[:MAX_SNIPPETS]):
            return hits
        log.debug("search.option_entry", extra={"document": doc.id, "position": best.position})
        return _put_first([SearchHit(best, hits[0].score, similarity=page.similarity)], hits, len(hits))

    def option_words(self, message: str, documents: Sequence[tuple[str, str, str]]) -> OptionWords | None:
        """When ``message`` asks which option of a manual page does something ("Which zstd option encrypts the
        compressed file with a password?"), and a page it names is among the results (``documents``: their
        ``(document id, title, language)``) in the message's language: the largest share of the message's words
        that one option entry of that page holds
        (:func:`~assistant_bridge.generators.sentences.entry_word_share`), and how many of its words the page
        never uses (of its :func:`~assistant_bridge.generators.sentences.asked_words`). A message that asks for a
        command or a keyword of the page is measured the same way, to be judged by its unknown words only
        (:attr:`~assistant_bridge.core.loop.OptionWords.entries`), and so is a Japanese message, whose words are
        its runs of kanji and katakana (:func:`~assistant_bridge.generators.sentences.unknown_runs`): the
        character pairs it is searched by share too little with a paraphrase for an entry's share to say
        anything. The page may be another manual of the program, an Info or HTML one that lists entries
        (:func:`~assistant_bridge.text.named_documents`), and a question for a variable, a function, a builtin, a
        test or an action of it is judged by its unknown words as a command question is
        (:func:`~assistant_bridge.text.asks_for_kind`); a manual page comes first when both are named. ``None``
        for any other message, for one that asks what the page's command is and for a page in another language
        (a French question about an English page shares no words with it)."""
        language = detect_language(message)
        options = asks_for_option(message)
        if not (options or asks_for_kind(message)) or overview_subject(message):  # a command is a kind too
            return None
        programs = asked_programs(message)
        read = functools.cache(self.store.get_document)  # each document once, for the checks below
        if options and _program_unwritten(programs, [d[0] for d in documents], read):
            return OptionWords(0.0, 0, unwritten=True)  # "Which locate option…" answered from ssh(1)
        named = named_documents(message, (title for _, title, _ in documents))
        found = _manual_first(
            [d for d in documents if d[2] == language], lambda d: d[1], named, lambda d: self._lists_entries(d[0], read)
        )
        if found is None and named:
            return None  # the manual the titles name is in another language
        doc, _ = self._asked_manual(
            programs,
            read(found[0]) if found is not None else None,
            [(d[0], d[1]) for d in documents if d[2] == language],
            read,
        )
        if doc is None:
            return None
        entries = self._page_entries(doc)
        if manual_page_name(doc.title) is None and (not entries.spans or entries.api_reference(doc.text)):
            # a manual other than a page lists its options and commands as entries, or none are known; an API
            # reference's entries describe a function in other words than a question asks with ("freezes some
            # portion of a function's arguments" for "arguments already fixed"): its words judge nothing
            return None
        # a manual page that writes its options in prose ("L'option -l permet d'afficher la crontab…") has no
        # entries to hold one: an option question is judged by the words the page never uses (OptionWords.prose)
        prose = options and not entries.spans
        if language == "ja":
            unknown, runs = unknown_runs(message, entries.normal(doc.text))
            return OptionWords(0.0, unknown, entries=False, asked=runs, prose=prose)
        name = document_name(doc.title) or ""
        held = entries.entry_terms(doc.text)
        share = float(entry_word_share(message, name, held).max()) if held else 0.0
        asked = asked_words(message, name)
        unknown = unknown_words(message, asked, entries.page_terms(doc.text), entries.page_bases(doc.text))
        return OptionWords(share, unknown, entries=options and not prose, asked=len(asked), prose=prose)

    @staticmethod
    def _asked_manual(
        programs: set[str],
        named: Document | None,
        documents: Sequence[tuple[str, str]],
        read: Callable[[str], Document | None],
    ) -> tuple[Document | None, bool]:
        """The manual an option question (a command, a variable… question) asks about, and whether no title named
        it. ``named``: the manual the titles name, kept when it writes the program the question asks an option of
        (``programs``, :func:`~assistant_bridge.text.asked_programs`) as a word, or the question names none. Else
        the first of ``documents`` (id, title; ``read`` opens one) that is a manual other than a manual page and
        writes that program: the diffutils manual, "Comparing and Merging Files", for "Which cmp option…"; "GNU
        Findutils" for "Which locate option searches a database on a remote host over SSH?", where the titles
        named ssh(1), which never writes "locate". A manual page of the program would have been named by its
        title."""
        if named is not None and (not programs or _writes_program(f"{named.title}\n{named.text}", programs)):
            return named, False
        doc = _manual_writing(programs, documents, read) if programs else None
        return doc, doc is not None

    def _command_manual(
        self,
        doc: Document,
        unnamed: bool,
        programs: set[str],
        hits: Sequence[SearchHit],
        read: Callable[[str], Document | None],
    ) -> tuple[Document, bool]:
        """For a question that asks for a command of a program, its manual that lists commands: ``doc`` when it
        does, else the first of the hits' documents that is not a manual page, writes the program and lists
        commands ("Which sqlite3 dot-command loads data from a file into a table?": sqlite3(1) lists options, the
        SQLite shell's page the dot-commands its .help prints), no title naming it. ``doc`` when none does."""
        if not programs or self._lists_commands(doc):
            return doc, unnamed
        others = [(h.chunk.document_id, h.chunk.title or "") for h in hits if h.chunk.document_id != doc.id]
        other = _manual_writing(programs, others, read, self._lists_commands)
        return (other, True) if other is not None else (doc, unnamed)

    def _lists_commands(self, doc: Document) -> bool:
        """The document lists entries that are not options (commands, functions, settings)."""
        return any(doc.text[start] != "-" for start, _ in self._page_entries(doc).spans)

    def _lists_entries(self, document_id: str, read: Callable[[str], Document | None]) -> bool:
        """The document (``read`` opens it) lists option entries (:meth:`_page_entries`)."""
        doc = read(document_id)
        return doc is not None and bool(self._page_entries(doc).spans)

    def _page_entries(self, doc: Document) -> _PageEntries:
        """A document's option entries, kept for the last :data:`ENTRY_DOCUMENTS` documents asked about."""
        entries = self._entries.get((doc.id, doc.content_hash))
        if entries is None:
            entries = _PageEntries(option_entries(doc.text))
            self._entries.put((doc.id, doc.content_hash), entries)
        return entries

    def _chunk_at(self, document_id: str, chunk_count: int, offset: int, scope: Scope) -> Chunk | None:
        """The last chunk of a document that starts at or before ``offset`` of its text, if it holds it: of the
        (overlapping) chunks that hold it, the one that holds the most after it. A binary search over positions,
        one chunk read by its id at each step (a document may have thousands of chunks)."""
        low, high, found = 0, chunk_count - 1, None
        while low <= high:
            middle = (low + high) // 2
            chunks = self.backend.get_chunks([chunk_id(document_id, middle)], scope)
            if not chunks:
                return None
            if chunks[0].start_char <= offset:
                found, low = chunks[0], middle + 1
            else:
                high = middle - 1
        return found if found is not None and offset < found.end_char else None

    def _blended_lexical(self, query: SearchQuery, blend: tuple[str, float], limit: int) -> list[SearchHit]:
        """BM25 of the query plus ``weight`` × BM25 of the blended text, both to ``search.hybrid_depth``
        (:func:`~assistant_bridge.backends.base.summed_fuse`); the ``limit`` best. A query that is the blended
        text with words added (the embedded rewriter's "message — carried / terms") counts
        :data:`BLENDED_BM25_QUERY_WEIGHT`; one that rephrases it (an LLM's rewrite, which resolves "it" into
        what it stands for) counts in full."""
        lexical = replace(query, mode="lexical", limit=max(limit, self.settings.search.hybrid_depth))
        runs = [self.backend.search(replace(lexical, text=t)) for t in (query.text, blend[0])]
        own = BLENDED_BM25_QUERY_WEIGHT if query.text.startswith(blend[0].strip()) else 1.0
        return summed_fuse(runs, (own, blend[1]), limit)

    def _hybrid(self, query: SearchQuery, blend: tuple[str, float] | None = None) -> list[SearchHit]:
        """A hybrid search as ``search.hybrid_fusion`` says: the backend's own fusion, or a dense and a lexical
        search fused here (:func:`~assistant_bridge.backends.base.weighted_fuse`), the lexical one blended as
        a lexical search is. Each hit carries the dense cosine (:attr:`SearchHit.similarity`)."""
        s = self.settings.search
        if s.hybrid_fusion == "rrf":
            return self.backend.search(query)
        depth = max(query.limit, s.hybrid_depth)
        runs = [
            self.backend.search(replace(query, mode="dense", limit=depth)),
            self.backend.search(replace(query, mode="lexical", limit=depth))
            if blend is None
            else self._blended_lexical(query, blend, depth),
        ]
        fused = weighted_fuse(runs, (s.hybrid_dense_weight, 1.0 - s.hybrid_dense_weight), query.limit)
        # the dense run's cosine where it found the hit; below its last one (its lowest) where only BM25 did
        cosine = {h.chunk.id: h.score for h in runs[0]}
        floor = min(cosine.values(), default=None)
        return [replace(h, similarity=cosine.get(h.chunk.id, floor)) for h in fused]


def _program_unwritten(programs: set[str], document_ids: Sequence[str], read: Callable[[str], Document | None]) -> bool:
    """A question asks an option of a program (``programs``, :func:`~assistant_bridge.text.asked_programs`) that
    none of the documents (``read`` opens one) writes as a word, in its title or its text."""
    if not programs:
        return False
    for document_id in dict.fromkeys(document_ids):
        doc = read(document_id)
        if doc is None or _writes_program(f"{doc.title}\n{doc.text}", programs):
            return False
    return True


def _manual_writing(
    programs: set[str],
    documents: Sequence[tuple[str, str]],
    read: Callable[[str], Document | None],
    lists: Callable[[Document], bool] | None = None,
) -> Document | None:
    """The first of ``documents`` (id, title; ``read`` opens one) that is a manual other than a manual page, writes
    one of ``programs`` (:func:`_writes_program`) and, given ``lists``, passes it (lists commands)."""
    for document_id, title in dict.fromkeys(documents):
        doc = None if manual_page_name(title) else read(document_id)
        if doc is not None and _writes_program(doc.text, programs) and (lists is None or lists(doc)):
            return doc
    return None


def _writes_program(text: str, programs: set[str]) -> bool:
    """``text`` writes one of ``programs`` as a word of its own (:func:`_writes_word`)."""
    return any(_writes_word(text, p) for p in programs)


def _writes_word(text: str, word: str) -> bool:
    """``text`` writes ``word`` as a word of its own, in any case: not inside a longer word ("find" in "findutils"),
    but after a hyphen or a dash ("--waitretry", "fd-find"). A plain search over a whole manual: not
    :func:`~assistant_bridge.text.mentions`, whose :func:`~assistant_bridge.text.match_form` would rewrite every
    document read."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None


def _manual_first(
    items: Sequence[T], title: Callable[[T], str], named: set[str], lists_entries: Callable[[T], bool]
) -> T | None:
    """The first of ``items`` whose ``title`` is among the ``named`` manuals' titles
    (:func:`~assistant_bridge.text.named_documents`), a manual page before another manual of the same program
    (socat(1) before socat's HTML page), and one that ``lists_entries`` before one that lists none: the Bash
    Reference Manual's ``unset: unset [-fnv] [name]`` entry answers "Which bash builtin removes a variable or
    function?", which the PDF of bash's manual page, found first, holds only as lines of text. ``None`` when
    none is named."""
    found = sorted((i for i in items if title(i) in named), key=lambda i: manual_page_name(title(i)) is None)
    return next((i for i in found if lists_entries(i)), found[0] if found else None)


class _LazyBackend:
    """Defers building the backend until the embedder's dimension is known (after warm-up)."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        self._settings = settings
        self._embedder = embedder
        self._inner: SearchBackend | None = None
        self.name = settings.backend.kind

    def _get(self) -> SearchBackend:
        if self._inner is None:
            self._embedder.warm_up()
            self._inner = make_backend(self._settings, self._embedder.dim)
        return self._inner

    def warm_up(self) -> None:
        self._get().warm_up()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)


def _command_words(message: str) -> list[str]:
    """The words of ``message`` that may name a command (:data:`_COMMAND_WORD`), in lower case, in order."""
    return [w.rstrip(".-") for w in _COMMAND_WORD.findall(unicodedata.normalize("NFKC", message).lower())]


def _put_first(first: list[SearchHit], hits: list[SearchHit], limit: int) -> list[SearchHit]:
    """``first``, then ``hits`` without the chunks of ``first``, ``limit`` of them in all."""
    moved = {h.chunk.id for h in first}
    return [*first, *(h for h in hits if h.chunk.id not in moved)][:limit]
