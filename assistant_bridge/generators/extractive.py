"""The extractive generator: answers with the snippet sentences that best answer the query. No LLM.

The candidates are the snippets' sentences as :mod:`~assistant_bridge.generators.sentences` cuts them
(headings, list labels and table rows flagged as labels, list markers removed). Each is scored::

    relevance = w_embed * cos(query, sentence)        # semantic match (optional embedder, e.g. USE-multilingual)
              + coverage(query terms, sentence)       # idf-weighted share of the query's terms in the sentence
              + w_heading * match of its heading / d  # the heading d sentences above it matches the query
              + w_entry * entry match                 # a definition entry ("-l, --lines: print …") of the option
                                                      # the query names, or of the kind it asks for
    score = relevance
          + w_number * holds a number                 # when the query asks how many, how large, which port…
                                                      # (a date or a length of time when it asks when,
                                                      # an e-mail address when it asks whom to write to;
                                                      # twice with the unit it counts: "how many days")
          + w_phrase * phrase match                   # idf-weighted share of the query's adjacent term pairs
          + w_code_name * its snippet writes a name the query writes as code ("group_concat", "count(*)")
          - w_position * log(1 + index in its snippet)
          - w_rank * log(1 + snippet order)
          - w_similarity_gap * (best snippet similarity - its snippet's similarity)   # own dense/hybrid search
                                                      # (not for a snippet of entries or of the code name)
          - fragment_penalty                          # chunk edges cut mid-sentence
          - 10 for a label or a line shorter than min_chars (used only when nothing else exists)

Terms are case-folded words of three or more characters cut to five characters (a cheap stemmer that works
for English and French alike), numbers, CJK character bigrams, identifiers kept whole besides
(``ServerAliveCountMax`` is not just "serve"), and command-line options as written (``-P`` is not ``-p``);
their idf comes from the candidate sentences themselves, so words that appear everywhere (stopwords, the
page's topic) weigh nothing. Question words ("how", "when", "quand"…), Japanese particle bigrams and the
bigrams of 何 and 誰 ("what", "who") are left out of the query: they are rare in documents, so their idf is high,
but a sentence holding "how" answers nothing better; the words that frame a question ("what", "which", "does",
"happen", "many"…) weigh half their idf (``frame_term_weight``).

Selection: the best-scoring sentence first. When it is a definition entry of what the query asks about,
the answer is that entry with its own further sentences ("… The default value is 3.", in its further
paragraphs too, up to the next entry or heading), joined only by
entries that match as well (two options that do the same). When it introduces a list (the list items follow
it), the items are the rest of the answer, in order, within the character cap; when it ends with a colon
("Run the following to test Rich output on your terminal:"), the block after it (up to a blank line: a
command, a code sample) is, for a list item as for a sentence (a list item is not followed by its own list);
so it is when it announces a block with a full stop ("Add the following lines to ~/.bashrc.",
"以下の行を…追加し…"), one sentence ending with a colon allowed between them.
Otherwise, up to the response length (concise 1, moderate 3, verbose 5 sentences, with a character cap),
the best other sentences whose relevance clears a floor
relative to the best one's (``min_ratio_same`` in the best sentence's snippet from the sentence right
before it on, the stricter ``min_ratio`` earlier in that snippet and in the other snippets, and
``min_query_relevance`` in absolute terms), a sentence of a snippet already used
getting ``same_snippet_bonus`` so that one passage stays together; near-duplicates skipped; a joining sentence
that ends with a colon brings the first line of what it introduces, or stays out when that does not fit. The answer
prints the best sentence's snippet first, then the others in result order, each in reading order; line
breaks inside a sentence become spaces, and a part that ends no sentence (a table row, a manual page's NAME
line, a command, a line ending with a colon) is followed by a line break. A question that asks only what a
command is or does, answered from its manual page, is answered by the page's sentence that says it, after the
NAME line when that sentence does not say what the NAME line says (:func:`_overview`). A question that asks the
name of a kind of thing is declined when the chosen sentences hold none of the words it asks with
(:func:`~.sentences.holds_asked_word`: "Which jq option reads YAML input?" and "--version: Output the jq
version…"). Each sentence is cited
exactly: ``Citation.text`` is the source sentence (its line breaks flattened) and its range covers it in the
answer.

Measured on the CLAPNQ dev answerable questions, gold passage and retrieved passages (``bench/clapnq.py``;
the weights were chosen on the gold passages, the floors on the sample corpus): see
``docs/conversational-search.md`` and ``docs/benchmarks.md``.

Invariant: the answer consists only of sentences copied from the snippets, up to whitespace (a sentence
longer than the cap is cut at a word boundary and ends with "…"), so extractiveness is 1.0 unless a sentence
was cut.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assistant_bridge.core.citations import Citation
from assistant_bridge.core.language import STOPWORDS
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.embedders.base import Embedder
from assistant_bridge.generators.base import (
    IDK_TEXT,
    Generation,
    GenerationStream,
    ResponseLength,
    approx_tokens,
    validate_response_length,
)
from assistant_bridge.generators.sentences import (
    ENDS_SENTENCE,
    FRAME_TERMS,
    NAME_LINE,
    QUESTION_WORDS,  # noqa: F401  (re-exported)
    Candidate,
    announces,
    answer_type_terms,
    asked_commands,
    asked_value_match,
    candidates,
    command_terms,
    defines,
    entry_match,
    entry_sentences,
    flatten,
    holds_asked_word,
    introduces,
    is_cjk_text,
    names_asked_kind,
    names_subject,
    page_terms,
    query_terms,
    same_option,
    section_match,
    terms,
    text_width,
    writes_cjk,
    writes_option,
)
from assistant_bridge.text import (
    NAME_LINE_PARTS,
    OPTION_WORD,
    TABLE_CELL,
    asks_default,
    asks_for_option,
    asks_how_to,
    asks_whether,
    code_names,
    holds_code_names,
    manual_page_name,
    match_form,
    mentions,
    named_manual_pages,
    states_default,
)

ENTRY_PEER_RATIO = 0.9
# a sentence of another passage whose score is at least this share of the best one's joins the answer
RUNNER_UP_RATIO = 0.9
MAX_LIST_ITEMS = 12
INHERITED_WEIGHT = 0.5  # of a query term a sentence opening with "This" says through the one before it
DEFAULT_AHEAD = 6  # how far after the best sentence, in its section, the sentence that states a default may be
_NO_SPACE_AFTER = re.compile(r"[。！？」』]$")  # a CJK sentence ends: the next one follows without a space
# the share of the heading match (Tuning.w_heading) that counts for a question whether something holds
WHETHER_HEADING_SHARE = 0.5
CONTAINED_MIN_CHARS = 20  # a sentence another holds whole is said by it: not a word or two ("Yes.", "See below.")
ENTRY_OF_ANY = 2  # how far up an entry's term line opens the answer to a question that asks for no entry (_entry_of)


@dataclass(frozen=True)
class LengthPolicy:
    """How many sentences and characters one response length allows."""

    sentences: int
    max_chars: int


DEFAULT_LENGTHS: dict[str, LengthPolicy] = {
    "concise": LengthPolicy(sentences=1, max_chars=300),
    "moderate": LengthPolicy(sentences=3, max_chars=700),
    "verbose": LengthPolicy(sentences=5, max_chars=1400),
}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


@dataclass(frozen=True)
class Tuning:
    """The scoring weights and floors of :class:`ExtractiveGenerator`, each a keyword of its constructor and a key
    of the ``[generator]`` settings table.

    :ivar w_embed: weight of the query-sentence cosine.
    :ivar w_position: penalty per log position inside a snippet (leading sentences carry definitions).
    :ivar w_rank: penalty per log rank of the snippet (later results are less relevant).
    :ivar fragment_penalty: subtracted from a sentence cut by a chunk boundary.
    :ivar min_chars: sentences shorter than this are used only when nothing else exists (a CJK character counts
        twice, :func:`~assistant_bridge.generators.sentences.text_width`).
    :ivar min_relevance: if set, decline ("I don't know") when the best score is below it.
    :ivar max_embedded: cap on sentences sent to the embedder (the best by lexical score); bounds latency.
    :ivar min_ratio: a sentence of another snippet than the best sentence's is added only when its relevance
        is at least this share of the best one's (keeps off-topic results out of the answer).
    :ivar min_ratio_same: the same floor for sentences of the best sentence's snippet, from the one right
        before it (its lead-in) on.
    :ivar min_query_relevance: the absolute floor of relevance for any sentence after the first.
    :ivar same_snippet_bonus: added, when choosing the next sentence, to those of snippets already used.
    :ivar w_heading: weight of the match between the query and the heading above a sentence.
    :ivar w_entry: weight of a definition entry that answers the kind of thing asked for
        (:func:`~assistant_bridge.generators.sentences.entry_match`: the option the query names, an option when
        it asks which option does something).
    :ivar w_number: weight of holding a number when the query asks for one (how many, how large, which port), or
        a date or a length of time when it asks when (``when``, ``quand``, ``いつ``, a deadline), or an e-mail
        address when it asks whom to contact or where to send something ("Whom should I contact to offer a
        mirror?"); twice for a number with the unit the query counts ("how many days",
        :func:`~.sentences.asked_unit`).
    :ivar w_phrase: weight of holding the query's pairs of adjacent terms in the same order ("Format field",
        "machine-readable format"), each pair weighing the idf of its more common term.
    :ivar w_define: weight of saying what the query's subject is when the query asks only that ("What does
        rsync do?" → "rsync - a fast, versatile, local/remote file-copying tool";
        :func:`~assistant_bridge.generators.sentences.defines`).
    :ivar w_code_name: weight of belonging to a snippet that writes a name the query writes as code
        (``group_concat``, ``count(*)``, ``os.path.join``: :func:`~assistant_bridge.text.code_names`);
        such a snippet is also exempt from ``w_similarity_gap``. A question about ``group_concat`` is answered by
        the passage that names it, not by a passage about another separator that the search ranked higher.
    :ivar w_option: weight of a sentence that writes an option the query names, other than that option's entry
        ("the --reload flag in development mode will use watchfiles." for a question about ``--reload``).
    :ivar w_name: weight of a sentence whose subject is a name written in lower case when the query asks which
        tool, program, script, package or command does something ("alien converts binary packages…" for "Which
        tool converts RPM packages into Debian packages?"; :func:`~.sentences.names_subject`), or that writes a name
        beside the kind of thing the query asks the name of ("The nmudiff script…" for "Which script helps send the
        patch…?", "…on the debian-vote@lists.debian.org mailing list" for "On which mailing list…?", a path for
        "Which file holds the hostname…?"; :func:`~.sentences.names_asked_kind`); such a sentence is also exempt
        from ``w_similarity_gap``.
    :ivar w_off_page: how much lower a sentence ranks whose passage never names the manual page the query names,
        when another passage does (:func:`_off_page`): the loop refuses such an answer as off its subject, so a
        sentence of the named page about as good answers instead; one much worse does not (the refusal then
        stands, a question the page does not answer is declined).
    :ivar frame_term_weight: the share of its idf that a word framing the question weighs in the coverage
        (:data:`~assistant_bridge.generators.sentences.FRAME_TERMS`: "what", "which", "does", "happen", "many"…;
        documents seldom write them, so their idf among the candidates is high, though a sentence holding them
        answers no better).
    :ivar w_similarity_gap: penalty per unit of cosine by which a sentence's snippet falls short of the most
        similar snippet, when every snippet carries the dense search's similarity
        (:attr:`~assistant_bridge.core.snippets.Snippet.similarity`; the service's own dense or weighted hybrid
        search sets it). A passage the search ranked far below the best one must match much better to answer;
        one that scored about as high is not held back by its rank alone. Snippets holding definition entries are exempt
        (:func:`_similarity_gap`). Chosen on CLAPNQ train questions, reported on dev
        (``docs/conversational-search.md``).
    :ivar whether_gap_share: the share of ``w_similarity_gap`` a question that asks whether something holds
        (:func:`~assistant_bridge.text.asks_whether`) weighs: the search ranks passages by the question's topic,
        and the one sentence that says yes or no ("Views are read-only in SQLite.", "The column may not have a
        PRIMARY KEY or UNIQUE constraint.") often lies in a passage it ranked lower. Chosen on the
        real-documents benchmark's older splits with ``bench/sentence_weights.py``
        (``docs/benchmarks.md``).
    """

    w_embed: float = 0.5
    w_position: float = 0.06
    w_rank: float = 0.1
    fragment_penalty: float = 0.1
    min_chars: int = 20
    min_relevance: float | None = None
    max_embedded: int = 48
    min_ratio: float = 0.6
    min_ratio_same: float = 0.2
    min_query_relevance: float = 0.0
    same_snippet_bonus: float = 0.5
    w_heading: float = 1.0
    w_entry: float = 0.6
    w_number: float = 0.2
    w_phrase: float = 0.3
    w_similarity_gap: float = 20.0
    whether_gap_share: float = 0.35
    w_define: float = 1.0
    w_code_name: float = 0.5
    w_option: float = 0.3
    w_name: float = 0.2
    w_off_page: float = 0.1
    frame_term_weight: float = 0.5


@dataclass(frozen=True)
class _Scored:
    """What :meth:`ExtractiveGenerator._scored` computes for each candidate sentence: its score; its relevance,
    the query-match part of the score (no priors); its entry match
    (:func:`~assistant_bridge.generators.sentences.entry_match`); how well it says what the query's subject is
    (:func:`~assistant_bridge.generators.sentences.defines`); whether it is a command line holding every term
    of the query (:func:`~assistant_bridge.generators.sentences.asked_commands`); and whether the query asks how
    to do something."""

    cands: list[Candidate]
    scores: np.ndarray
    relevance: np.ndarray
    entries: np.ndarray
    defined: np.ndarray
    asked: np.ndarray
    # the query asks how to do something (:func:`~assistant_bridge.text.asks_how_to`), which option does something
    # (:func:`~assistant_bridge.text.asks_for_option`)
    asks_how: bool = False
    asks_option: bool = False
    asks_default: bool = False  # what something is or does by default (:func:`~assistant_bridge.text.asks_default`)
    # the parts of the score, by name (:meth:`ExtractiveGenerator._prior`'s features, and ``coverage``, ``entry``,
    # ``cosine``, ``heading``, ``gap_exempt``, ``unusable``): what ``bench/sentence_weights.py`` fits the weights on
    features: dict[str, np.ndarray] = field(default_factory=dict)
    headers: dict[int, int] = field(default_factory=dict)  # each table row with its header row (:func:`_headers`)
    # where each snippet's document goes on in the next chunk, when that is a snippet (:func:`_continuations`)
    continuations: dict[int, int] = field(default_factory=dict)
    # the entries whose first sentence another entry's is too: their next sentence says what they do
    # (:func:`_undistinguished_entries`)
    undistinguished: frozenset[int] = frozenset()


class ExtractiveGenerator:
    """Sentence-selection answers with exact citations.

    :param embedder: optional sentence embedder (``embed_queries``/``embed_passages``, normalised rows). Without
        one the score is lexical and positional only.
    :param tuning: the scoring weights and floors, as keywords (see :class:`Tuning`).
    :param context_tokens: the snippet budget the loop truncates to.
    """

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        context_tokens: int = 16384,
        lengths: dict[str, LengthPolicy] | None = None,
        **tuning: Any,
    ) -> None:
        self.embedder = embedder
        self.tuning = Tuning(**tuning)
        self.context_tokens = context_tokens
        self.lengths = dict(DEFAULT_LENGTHS if lengths is None else lengths)
        self.model = "extractive" if embedder is None else f"extractive+{embedder.name}"

    def warm_up(self) -> None:
        if self.embedder is not None:
            self.embedder.warm_up()

    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int:
        return approx_tokens(query) + sum(approx_tokens(s.title) + approx_tokens(s.text) + 4 for s in snippets)

    def score(self, query: str, snippets: Sequence[Snippet]) -> tuple[list[Candidate], np.ndarray]:
        """Score every candidate sentence; exposed for the benchmark and tests."""
        scored = self._scored(query, snippets)
        return scored.cands, scored.scores

    def _scored(self, query: str, snippets: Sequence[Snippet]) -> _Scored:
        """Every candidate sentence with its score and the parts :meth:`_select` reads again (:class:`_Scored`)."""
        cands = _in_script_of(query, candidates(snippets))
        if not cands:
            empty = np.zeros(0)
            return _Scored(cands, empty, empty, empty, empty, empty)
        n = len(cands)
        qterms = query_terms(query)
        titles = [s.title for s in snippets]
        entries = entry_match(query, cands, titles)
        if entries.any():  # "which option…", "which command…": the answer is an entry, not a sentence about options
            qterms -= answer_type_terms(query) | command_terms(query)
        implied = page_terms(query, titles)
        said = [c.terms | implied[c.snippet] for c in cands]
        undistinguished = _undistinguished_entries(cands)
        for i in undistinguished:
            # "-c, --count: Ne pas afficher les résultats normaux." says what -l says too: what sets it apart is its
            # next sentence ("À la place, afficher un décompte des lignes correspondant au motif…")
            for j in entry_sentences(cands, i)[:1]:
                said[i] = said[i] | cands[j].terms
        # a sentence that opens with "This" or "These" speaks of what the one before it says (:func:`_antecedent`:
        # "The REINDEX command is used to delete and recreate indices. This is useful when…"): its terms count for
        # it at half their weight. Not "It" or "They", which name a thing more often than a statement
        continuations = _continuations(cands, snippets)
        antecedents = [
            _antecedent(cands, i, continuations) if _DEMONSTRATIVE.match(cands[i].text) else None for i in range(n)
        ]
        inherited = [(cands[a].terms - said[i]) if a is not None else frozenset() for i, a in enumerate(antecedents)]
        # a table row says what its header row's columns name ("route(8) | ip route | routing table entry" under
        # "obsolete net-tools | new iproute2 etc. | manipulation"): their terms count for it as a demonstrative's do
        headers = _headers(cands)
        for i, h in headers.items():
            inherited[i] = inherited[i] | (cands[h].terms - said[i])
        df = {t: sum(1 for ts in said if t in ts) for t in qterms}
        frame = self.tuning.frame_term_weight
        idf = {t: max(0.0, math.log((n + 1) / (df[t] + 0.5))) * (frame if t in FRAME_TERMS else 1.0) for t in qterms}
        total = sum(idf.values())
        phrases = _phrase_match([t for t in terms(query) if t in qterms], cands, idf)
        coverage = np.array(
            [
                (sum(idf[t] for t in qterms & ts) + INHERITED_WEIGHT * sum(idf[t] for t in qterms & more)) / total
                if total > 0
                else 0.0
                for ts, more in zip(said, inherited, strict=True)
            ],
            dtype=np.float64,
        )
        relevance = coverage + self.tuning.w_entry * entries
        # ranking cues, not measures of relevance: they choose the best sentence but do not raise the floor
        # that the others must clear
        defined = defines(query, cands, titles, [s.filename for s in snippets])
        named = np.array(holds_code_names(query, [s.text for s in snippets]), dtype=bool)
        if code_names(query) <= {manual_page_name(t) for t in titles}:
            named[:] = False  # "Which rsyncd.conf parameter…" names the page: each of its passages is about it
        # a sentence that names a thing of the kind the query asks for ("the debian-vote@… mailing list") answers
        # it wherever the search ranked its passage: no similarity gap
        kind_named = names_asked_kind(query, cands) if self.tuning.w_name else np.zeros(len(cands))
        exempt = named.copy()  # a snippet that holds the entry the query names ("quit: …") is read whatever its rank
        exempt[[c.snippet for c, e in zip(cands, entries, strict=True) if e >= 1.0]] = True
        features = {
            "number": asked_value_match(query, cands),
            "phrase": phrases,
            "define": defined.astype(np.float64),
            "code_name": np.array([named[c.snippet] for c in cands], dtype=np.float64),
            "option": writes_option(query, cands),
            "name": np.maximum(names_subject(query, cands), kind_named),
            "position": np.array([-math.log1p(c.position) for c in cands]),
            "rank": np.array([-math.log1p(c.snippet) for c in cands]),
            "fragment": np.array([-1.0 if c.fragment else -0.0 for c in cands]),
            "off_page": -_off_page(query, snippets)[[c.snippet for c in cands]],
            "similarity_gap": -_similarity_gap(cands, snippets, exempt),
        }
        whether = asks_whether(query)
        if whether:
            # "Are transactions over several attached databases atomic when the journal mode is WAL?": the search
            # ranks passages by the topic, while the sentence that says whether it holds ("If … the journal_mode
            # is WAL, then transactions continue to be atomic within each individual database file") may sit in
            # a passage it ranked lower
            features["similarity_gap"] = self.tuning.whether_gap_share * features["similarity_gap"]
        prior = self._prior(features, kind_named)
        if self.embedder is not None and self.tuning.w_embed:
            lexical = relevance + self.tuning.w_heading * section_match(cands, relevance, snippets)
            chosen = np.argsort(-(lexical + prior), kind="stable")[: self.tuning.max_embedded]
            qvec = self.embedder.embed_queries([query])[0]
            svecs = self.embedder.embed_passages([cands[i].text for i in chosen])
            cosine = np.full(n, -1.0)
            cosine[chosen] = svecs @ qvec
            relevance = relevance + self.tuning.w_embed * cosine
            features["cosine"] = cosine
        heading = section_match(cands, relevance, snippets)
        if whether:
            # "Is the GLOB operator case sensitive?": the heading names the subject ("The LIKE, GLOB, REGEXP…
            # operators"), only a sentence says whether it holds ("Also, GLOB is case sensitive, unlike LIKE.")
            heading = WHETHER_HEADING_SHARE * heading
        relevance = relevance + self.tuning.w_heading * heading
        scores = relevance + prior
        asked = asked_commands(query, cands)  # "pip install httpx": short, a label, and the answer
        # a manual page's NAME line is a label, but it says what the page's command does ("diff - compare files
        # line by line") when nothing else there does
        unusable = np.array(
            [
                (text_width(c.text) < self.tuning.min_chars or (c.label and not defined[i])) and not asked[i]
                for i, c in enumerate(cands)
            ]
        )
        how = asks_how_to(query)
        if not how:
            # an interactive session's lines show how a call is made and what it printed: they answer a how-to
            # question, not what something is or does ("What type does orjson.dumps return?" is not answered by
            # ">>> orjson.dumps(decimal.Decimal(…))" and its error)
            unusable = unusable | _in_sessions(cands, snippets)
        if not unusable.all():
            scores = np.where(unusable, scores - 10.0, scores)
        return _Scored(
            cands,
            scores,
            relevance,
            entries,
            defined,
            asked,
            how,
            asks_for_option(query),
            asks_default(query),
            {
                **features,
                "coverage": coverage,
                "entry": entries,
                "heading": heading,
                "gap_exempt": kind_named,
                "unusable": unusable.astype(np.float64),
            },
            headers,
            continuations,
            frozenset(undistinguished),
        )

    def _prior(self, f: dict[str, np.ndarray], kind_named: np.ndarray) -> np.ndarray:
        """The ranking cues and penalties of each candidate weighed by :class:`Tuning` (each feature is signed so
        that its weight is positive: a penalty is a negative feature). A sentence naming the asked kind is exempt
        from the similarity gap."""
        t = self.tuning
        cues = (
            t.w_number * f["number"]
            + t.w_phrase * f["phrase"]
            + t.w_define * f["define"]
            + t.w_code_name * f["code_name"]
            + t.w_option * f["option"]
            + t.w_name * f["name"]
        )
        prior = cues + (t.w_position * f["position"] + t.w_rank * f["rank"]) + t.fragment_penalty * f["fragment"]
        prior = prior + t.w_off_page * f["off_page"]
        return prior + t.w_similarity_gap * f["similarity_gap"] * (1.0 - kind_named)

    def _select(self, scored: _Scored, snippets: Sequence[Snippet], response_length: ResponseLength) -> list[Candidate]:
        """The best sentence, then the best others that clear the relevance floor, grouped by snippet (the best
        sentence's snippet first) and in reading order within each; a table's row under its header row."""
        policy = self.lengths[validate_response_length(response_length)]
        return _under_headers(self._choose(scored, snippets, policy), scored.cands, scored.headers, policy.max_chars)

    def _choose(self, scored: _Scored, snippets: Sequence[Snippet], policy: LengthPolicy) -> list[Candidate]:
        """:meth:`_select`'s sentences, the best first."""
        cands, scores, relevance, entries = scored.cands, scored.scores, scored.relevance, scored.entries
        if not cands:
            return []
        top = _with_what_follows(cands, int(np.argmax(scores)))
        if self.tuning.min_relevance is not None and scores[top] < self.tuning.min_relevance:
            return []
        name, top = _overview(scored, snippets, top)
        lead = top  # the sentence that says it; the answer opens with the entry it belongs to, if any
        if not scored.defined[top]:
            top = _entry_of(cands, top, entries)
        anchor = lead  # the sentence whose relevance the others are measured against
        if lead == top and top in scored.undistinguished and (own_next := entry_sentences(cands, top)[:1]):
            lead = own_next[0]  # "-c, --count: Ne pas afficher les résultats normaux." then what sets it apart
        best = cands[top]
        unusable = scores < scores[top] - 5.0  # labels and short lines, unless nothing else exists
        # the best sentence's passage, from the sentence right before it (its lead-in) on, is read at the lenient
        # floor; what comes earlier in that passage, like the other passages, must be relevant on its own (a
        # page's preamble is not the answer's lead-in, nor is the last line of the entry before an entry's term
        # line: "--no-fq-socket-pacing: This option is deprecated…" above iperf3's "-t, --time n")
        lead_in = 0 if best.entry else 1
        floor = np.array(
            [
                self.tuning.min_ratio_same
                if c.snippet == best.snippet and c.position >= best.position - lead_in
                else self.tuning.min_ratio
                for c in cands
            ]
        )
        keep = (relevance >= floor * relevance[anchor]) & (relevance >= self.tuning.min_query_relevance) & ~unusable
        if entries[top] > 0:
            # the entry of the option (or setting) asked about answers by itself: its neighbours on the
            # reference page are other options; only an entry that matches as well may join it, and the
            # entry's own further sentences ("… The default value is 3.")
            own = np.zeros(len(cands), dtype=bool)
            own[entry_sentences(cands, top)] = True
            # the same option's entry in another passage (a help listing's "--rsyncable   make rsync-friendly
            # archive" beside the manual's) tells again what the entry's own sentences tell better
            again = np.array([c.snippet != best.snippet and same_option(c.entry, best.entry) for c in cands])
            keep &= ((entries >= entries[top]) & (relevance >= ENTRY_PEER_RATIO * relevance[anchor]) & ~again) | own
        chosen: list[Candidate] = [best]
        if lead != top:  # the entry's term, and its sentence that says what was asked
            chosen.append(cands[lead])
            keep[lead] = False
        if scored.defined[top]:
            # "What does rsync do?" answers with what its document says first about it: the sentence that says what
            # it is and the ones after it in its paragraph, up to the next heading; after its manual page's NAME
            # line, when there is one
            if name is not None and name != top:
                chosen.insert(0, cands[name])
            paragraph = itertools.takewhile(lambda c: c.snippet == best.snippet and not c.label, cands[top + 1 :])
            return _as_far_as_fits(chosen, list(paragraph)[: policy.sentences - len(chosen)], policy.max_chars)
        continuations = scored.continuations
        antecedent = _antecedent(cands, top, continuations)
        asked = scored.asked
        if antecedent is None and top > 0 and asked[top]:
            # "pip install threadpoolctl" answers with the line that introduces it ("For users, install the last
            # published version from PyPI:")
            prev = cands[top - 1]
            antecedent = top - 1 if prev.snippet == best.snippet and introduces(prev.text) else None
        if antecedent is not None:
            # "This causes data to be sent from the server to the client." answers with what "this" is: the
            # sentence or the command right before it ("… specifying the -R flag on the client.", "$ pip install
            # 'uvicorn[standard]'")
            chosen.insert(0, cands[antecedent])
            keep[antecedent] = False
        term = _defined_term(cands, top, snippets[best.snippet].text)
        if term is not None and cands[term] not in chosen:
            # "rw-build-tree" answers "Which autopkgtest restriction…?" with its description: the term first
            chosen.insert(0, cands[term])
            keep[term] = False
        used = sum(len(c.text) + 1 for c in chosen)
        opening = 0
        if not entries[top]:
            # in its document: a passage that ends with the sentence goes on in the next chunk when that is a snippet
            after = [cands[i] for i in _read_on(cands, top, continuations, 1 + MAX_LIST_ITEMS)]
            # a sentence that introduces a list ("The search follows this list:", "libffi is missing a few
            # features.") answers with the list: its items join it, in order, as far as the length allows
            # ("…features. We welcome patches to add support for these." — one sentence may come between);
            # a list item is followed by its peers, not its list
            opening = 1 if len(after) > 1 and not after[0].item and after[1].item else 0
            items = [] if best.item else list(itertools.takewhile(lambda c: c.item, after[opening:]))
            if len(items) >= 2:
                return _as_far_as_fits(chosen, after[:opening] + items, policy.max_chars)
            # "Add the following lines to ~/.bashrc." announces a block that may come after one more sentence
            # ("The second line gives dquilt the same completion as quilt:")
            announcing = announces(best.text)
            between = after[:1] if len(after) > 1 and announcing and introduces(after[0].text) else []
            rest = after[len(between) :]
            announced = announcing and bool(rest) and (rest[0].label or bool(_COMMAND_LINE.match(rest[0].text)))
            if (
                introduces(best.text)
                or announced
                or _shown_command(cands, top, asked, continuations, how=scored.asks_how) is not None
            ) and rest:
                # "Run the following to test Rich output on your terminal:" answers with what it introduces:
                # the block that follows it (a command, a code sample), up to the next blank line (:func:`_block`)
                block = _block(rest, snippets[rest[0].snippet].text)
                if used + sum(len(c.text) + 1 for c in between) + len(block[0].text) <= policy.max_chars:
                    return _as_far_as_fits(chosen, between + block, policy.max_chars)
        qualifier = _qualifier(cands, top, scored.asks_how, scored.asks_option, continuations)
        # a qualifier qualified in its turn ("…neither crontab nor cron detects the mistake. Instead, crontab appears
        # to load normally. However, the command will never run.") is read with it
        further = _qualifier(cands, qualifier, continuations=continuations) if qualifier is not None else None
        stated = _default_stated(cands, top, continuations) if scored.asks_default else None
        for joined in (qualifier, further, stated):
            if joined is None or cands[joined] in chosen or len(chosen) >= policy.sentences:
                continue
            if used + len(cands[joined].text) <= policy.max_chars:
                chosen.append(cands[joined])
                used += len(cands[joined].text) + 1
            keep[joined] = False
        pool = [i for i in np.argsort(-scores, kind="stable").tolist() if i != top and keep[i]]
        runner_up = pool[0] if pool else None  # the second best sentence
        while pool and len(chosen) < policy.sentences:
            # a sentence of a snippet already used continues its passage: it gets a bonus over the others
            snippets_used = {c.snippet for c in chosen}
            pick = max(
                pool,
                key=lambda i: (
                    scores[i] + (self.tuning.same_snippet_bonus if cands[i].snippet in snippets_used else 0.0)
                ),
            )
            pool.remove(pick)
            cand = cands[pick]
            if any(_near_duplicate(cand, c) for c in chosen) or used + len(cand.text) > policy.max_chars:
                continue
            chosen.append(cand)
            used += len(cand.text) + 1
            shown = _shown_command(cands, pick, asked, continuations)
            if shown is not None and cands[shown] not in chosen and used + len(cands[shown].text) <= policy.max_chars:
                # "To learn the status of all the packages, execute the command" answers with the command, and the
                # lines of its block after it ("$ sudo dpkg -r gentoo", "$ sudo dpkg -P gentoo", …)
                for brought in _block_that_fits(cands, shown, snippets, chosen, policy.max_chars - used):
                    chosen.append(brought)
                    used += len(brought.text) + 1
                    if (k := cands.index(brought)) in pool:
                        pool.remove(k)
        if (
            runner_up is not None
            and policy.sentences > 1
            and not entries[top]
            and cands[runner_up].snippet != best.snippet
            and cands[runner_up] not in chosen
            and scores[top] > 0
            and scores[runner_up] >= RUNNER_UP_RATIO * scores[top]
            # as relevant as the first or the second sentence of the first passage (``opening``, the list's
            # lead-in count above, read as a sentence's index): so measured; against the lead sentence itself the
            # replay lost five answers, and with no such floor a sentence of a passage about another thing
            # ("Address option ftruncate without value uses default 1") joined an answer
            and relevance[runner_up] >= relevance[opening]
            and used + len(cands[runner_up].text) <= policy.max_chars
            and not _adds_nothing(cands[runner_up], chosen)
            and not any(_near_duplicate(cands[runner_up], c) for c in chosen)
        ):
            # another passage answers about as well: its sentence follows the best passage's ("The DROP COLUMN
            # syntax is used to remove an existing column…", then "The DROP TABLE statement removes a table…" for
            # "What does DROP TABLE remove?"), one more than the length's count of sentences
            chosen.append(cands[runner_up])
        chosen = _introduced(chosen, cands, best, snippets, policy.max_chars)
        chosen = _bridged(chosen, cands, scores, snippets, policy.max_chars)
        # the best sentence's snippet first, with the chunks of its document right before and after it in place
        rank = {best.snippet: 0.0}
        for k, first in continuations.items():
            if cands[first].snippet == best.snippet:
                rank[k] = -0.5
            elif k == best.snippet:
                rank[cands[first].snippet] = 0.5
        chosen.sort(key=lambda c: (rank.get(c.snippet, 1.0 + c.snippet), c.position))
        return chosen

    def _compose(self, chosen: Sequence[Candidate], snippets: Sequence[Snippet], max_chars: int) -> Generation:
        if not chosen:
            return Generation(text=IDK_TEXT, citations=(), declined=True, model=self.model)
        parts: list[str] = []
        citations: list[Citation] = []
        length = 0
        for k, cand in enumerate(chosen):
            if parts:
                row = TABLE_CELL in cand.text or TABLE_CELL in chosen[k - 1].text  # a table's row keeps its own line
                sep = (
                    ""
                    if _NO_SPACE_AFTER.search(parts[-1])
                    else " "
                    if ENDS_SENTENCE.search(parts[-1]) and not row
                    else "\n"
                )
                parts.append(sep)
                length += len(sep)
            flat = flatten(cand.text)
            sentence = _cut(flat, max_chars)
            snippet = snippets[cand.snippet]
            citations.append(
                Citation(
                    title=snippet.title,
                    text=flat,
                    body=snippet.text,
                    search_result_index=snippet.result_index,
                    ranges=((length, length + len(sentence)),),
                )
            )
            parts.append(sentence)
            length += len(sentence)
        return Generation(text="".join(parts), citations=tuple(citations), declined=False, model=self.model)

    def generate(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> Generation:
        scored = self._scored(query, snippets)
        chosen = self._select(scored, snippets, response_length)
        if not holds_asked_word(query, " ".join(c.text for c in chosen)):
            chosen = []  # "Which jq option reads YAML input?" is not answered by "--version: Output the jq version…"
        return self._compose(chosen, snippets, self.lengths[response_length].max_chars)

    def stream(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> GenerationStream:
        generation = self.generate(query, snippets, response_length)

        def deltas() -> Iterator[str]:
            cursor = 0
            for citation in generation.citations:
                end = citation.ranges[0][1]
                yield generation.text[cursor:end]
                cursor = end
            if cursor < len(generation.text):
                yield generation.text[cursor:]

        return GenerationStream(deltas(), lambda _text: generation)


def _undistinguished_entries(cands: Sequence[Candidate]) -> list[int]:
    """The definition entries whose first sentence another entry's is too, word for word ("-c, --count: Ne pas
    afficher les résultats normaux." and "-l, --files-with-matches: Ne pas afficher les résultats normaux." in
    grep(1))."""
    described = {i: _entry_description(c) for i, c in enumerate(cands) if c.entry}
    terms_of: dict[str, set[str]] = {}
    for i, description in described.items():
        terms_of.setdefault(description, set()).add(cands[i].entry)
    return [i for i, description in described.items() if len(terms_of[description]) > 1]


def _entry_description(cand: Candidate) -> str:
    """What a definition entry's first sentence says of its term, folded."""
    text = cand.text[len(cand.entry) :] if cand.text.startswith(cand.entry) else cand.text
    return " ".join(text.lstrip(": ").casefold().split())


def _phrase_match(sequence: Sequence[str], cands: Sequence[Candidate], idf: dict[str, float]) -> np.ndarray:
    """For each candidate, the idf-weighted share of the query's adjacent term pairs it holds adjacent too (a
    pair weighs the idf of its more common term, so pairs with a stop word weigh little)."""
    pairs = {(a, b): min(idf.get(a, 0.0), idf.get(b, 0.0)) for a, b in itertools.pairwise(sequence) if a != b}
    total = sum(pairs.values())
    if total <= 0:
        return np.zeros(len(cands))
    return np.array([sum(w for pair, w in pairs.items() if pair in c.pairs) / total for c in cands])


def _off_page(query: str, snippets: Sequence[Snippet]) -> np.ndarray:
    """Per snippet, 1.0 when the query names a manual page among the snippets' titles
    (:func:`~assistant_bridge.text.named_manual_pages`) and the snippet names none of them in its title or text
    while another snippet does: "How do I make tree leave empty directories out of its output?" is answered from
    tree(1)'s ``--prune``, not from rsync(1)'s "This option can still leave empty directories…", which the loop
    would refuse as off the question's subject."""
    pages = named_manual_pages(query, [s.title for s in snippets])
    if not pages:
        return np.zeros(len(snippets))
    forms = [match_form(f"{s.title} {s.text}") for s in snippets]
    said = np.array([any(mentions(form, page) for page in pages) for form in forms], dtype=bool)
    return (~said).astype(np.float64) if said.any() else np.zeros(len(snippets))


# a paragraph that opens with the prompt of Python's interactive interpreter: a session, its calls and what they
# printed
_SESSION = re.compile(r"\s*>>>")


def _in_sessions(cands: Sequence[Candidate], snippets: Sequence[Snippet]) -> np.ndarray:
    """Per candidate, whether it lies in a paragraph of its snippet that opens with ``>>>`` (:data:`_SESSION`);
    only snippets that write the prompt are read."""
    prompted = [">>>" in s.text for s in snippets]
    out = np.zeros(len(cands), dtype=bool)
    for i, c in enumerate(cands):
        if prompted[c.snippet]:
            text = snippets[c.snippet].text
            para = text.rfind("\n\n", 0, c.start)
            out[i] = _SESSION.match(text, 0 if para < 0 else para + 2) is not None
    return out


def _similarity_gap(cands: Sequence[Candidate], snippets: Sequence[Snippet], exempt: np.ndarray) -> np.ndarray:
    """Per candidate, how far its snippet's dense similarity falls below the best snippet's.

    Zeros unless every snippet has one (a lexical search, a backend's ``rrf`` fusion, a custom search server:
    their scores have no common scale), and for the sentences of a snippet that holds definition entries or the
    rows of a table: a reference page's chunk lists many options (or a table many rows), and its similarity to the
    question says little about the one entry asked for (on the real-documents benchmark, weighing them lost
    ``find -mtime`` and ``nano --backup``)."""
    sims = [s.similarity for s in snippets]
    if not sims or any(s is None for s in sims):
        return np.zeros(len(cands))
    top = max(s for s in sims if s is not None)
    reference = {c.snippet for c in cands if c.entry or c.header >= 0} | {int(i) for i in np.flatnonzero(exempt)}
    return np.array([0.0 if c.snippet in reference else top - (sims[c.snippet] or 0.0) for c in cands])


def _in_script_of(query: str, cands: list[Candidate]) -> list[Candidate]:
    """The candidates a question written without Chinese or Japanese characters can be answered by: not those
    written mostly in them (the Japanese manual page of a program found beside its English manual: "How much
    larger is gzip output made with --rsyncable?" is not answered with "--rsyncable: 2 つのコンピューター間で…"),
    unless nothing else is left. A Japanese question keeps every candidate: a Japanese page writes its options and
    commands in Latin letters, and an English document answers where no Japanese one does."""
    if writes_cjk(query):
        return cands
    kept = [c for c in cands if not is_cjk_text(c.text)]
    return kept or cands


# a sentence that opens by pointing back at the one before it: a demonstrative points at what it says ("This is
# useful when…"), a pronoun ("It", "They", "Il", "Elles") more often at a thing it names; a sentence in
# parentheses remarks on the one before it ("debian-mentors@lists.debian.org メーリングリスト。(初心者向けメーリング
# リストです。)")
_DEMONSTRATIVES = r"This|These|Those|Such|Ceci|Cela|Cette|Ces"
# "In this case, the first expression is used as the OFFSET expression": the case the sentence before it states
_IN_THIS_CASE = r"(?:In|Dans)\s+(?:this|that|these|those|such|either|ce|ces|tel|tels)\s+cas(?:es?)?\b"
_ANAPHOR = re.compile(rf"(?:{_DEMONSTRATIVES}|It|They|Il|Elle|Ils|Elles)\b|{_IN_THIS_CASE}|これ|この|それ|その")
_PARENTHETICAL = re.compile(r"[(（][^()（）]*[)）][.。]?$")
_DEMONSTRATIVE = re.compile(rf"(?:{_DEMONSTRATIVES})\b|{_IN_THIS_CASE}|これ|この|それ|その")
# French impersonal "il", which refers to nothing: "Il n'y a pas de barre oblique…", "Il est préférable de…"
_IMPERSONAL = re.compile(r"Il (?:n['’]|ne )?(?:y\s|faut|est|existe|suffit|vaut|semble|s['’]agit|convient|reste)")
# a sentence that opens by qualifying the one before it: "According to the SQL standard, PRIMARY KEY should
# always imply NOT NULL. Unfortunately, due to a bug in some early versions, this is not the case in SQLite.";
# or by saying how to do what it says can be done: "It is possible to make SQLite treat NULLs as distinct… To do
# so, one should change the value of the NULL_ALWAYS_DISTINCT #define…"
_QUALIFIES = re.compile(
    r"(?:However|But|Unfortunately|Nevertheless|Nonetheless|Yet|Except|Cependant|Mais|Toutefois|Néanmoins|Pourtant"
    r"|Malheureusement|Sauf|Instead|Au contraire)\b|ただし|しかし|ところが|それどころか"
)
# a sentence whose subject is what the one before it spoke of ("Les Autotools sont les outils de construction
# GNU. Ils comprennent Autoconf, Automake, Libtool et gettext."), or the case it states ("…two scalar expressions
# separated by a comma. In this case, the first expression is used as the OFFSET expression"); plural only: "It …"
# goes on about other things as often (docs/conversational-search.md)
_GOES_ON = re.compile(rf"(?:They|These|Ils|Elles|Ceux-ci|Celles-ci)\s|{_IN_THIS_CASE}|これら[はの]")
_SAYS_HOW = re.compile(
    r"(?:To do (?:so|this|that)|In order to do (?:so|this|that)|To achieve this|Pour (?:ce faire|cela|y parvenir))\b|"
    r"そのためには|これを行うには"
)
# a line typed at a shell prompt: "$ split -b 2000m large_file"
_PROMPT_LINE = re.compile(r"\$\s+\S")
# "$ pip install …", "iperf3 -c host -R", "pip install 'uvicorn[standard]'": a command, not a heading
_COMMAND_LINE = re.compile(r"\$\s|[a-z][\w.-]*\s.*(?:(?<![\w-])-{1,2}\w|[\[\]'\"=/<>|{}])")
# a document's credit line ("Copyright © 1999, 2001 Raphaël Hertzog, Brendan O'Dea", "Written by …"): a label that
# the sentence after it may speak of ("These are the copyright dates of the original Debian Perl Policy.")
_CREDIT_LINE = re.compile(
    r"(?:copyright\s*(?:©|\(c\)|\d{4})|(?:©|\(c\))\s*\d{4}|written by\s|authors?:\s)", re.IGNORECASE
)


# a sentence that ends on the word for a command ("…, execute the command", "…la commande", "…コマンド"): it
# introduces what follows, as one ending with a colon does (:func:`~.sentences.introduces`)
_ENDS_ON_COMMAND = re.compile(r"(?:\b(?:command|commande)|コマンド)\s*$", re.IGNORECASE)


def _bridged(
    chosen: list[Candidate],
    cands: Sequence[Candidate],
    scores: np.ndarray,
    snippets: Sequence[Snippet],
    max_chars: int,
) -> list[Candidate]:
    """``chosen`` with the one sentence between two of its sentences of one paragraph when it points back at the
    one before it or qualifies it (:data:`_ANAPHOR`, :data:`_QUALIFIES`): what links them, as far as the length
    allows; of several such gaps, the best-scored sentence, and one at most (the length's count of sentences and
    one more). patch's manual says "Sometimes the file names given in a patch contain leading
    directories, but you keep your files in a directory different from the one given in the patch. In those cases,
    you can use the '--strip=NUMBER' ('-pNUMBER') option to set the file name strip count to NUMBER. The strip
    count tells 'patch' how many slashes…": an answer of the first and the third sentence left out the option that
    answers "How do I tell patch to strip leading directories…?". Not a heading or another label, a definition
    entry, a list item, nor a sentence cut by the chunk's edge. Any sentence between (not only one that points
    back) lowered CLAPNQ's RAG RougeL on train questions: Wikipedia's sentences go on to other facts."""
    index = {(c.snippet, c.position): k for k, c in enumerate(cands)}
    have = {(c.snippet, c.position) for c in chosen}
    room = max_chars - sum(len(c.text) + 1 for c in chosen)
    gaps = []
    for c in chosen:
        mid, after = index.get((c.snippet, c.position + 1)), index.get((c.snippet, c.position + 2))
        if mid is None or after is None or (c.snippet, c.position + 2) not in have:
            continue
        m, a = cands[mid], cands[after]
        if (
            (m.snippet, m.position) not in have
            and not any(x.label or x.entry or x.item for x in (c, m, a))
            and not m.fragment
            and (_ANAPHOR.match(m.text) or _QUALIFIES.match(m.text))
            and "\n\n" not in snippets[c.snippet].text[c.start : a.start]
            and len(m.text) + 1 <= room
        ):
            gaps.append(mid)
    if not gaps:
        return chosen
    return [*chosen, cands[max(gaps, key=lambda k: scores[k])]]


def _shown_command(
    cands: Sequence[Candidate],
    i: int,
    asked: np.ndarray,
    continuations: Mapping[int, int] | None = None,
    how: bool = False,
) -> int | None:
    """The command line the sentence ``cands[i]`` introduces ("To learn the status of all the packages, execute
    the command" then ``dpkg --list``, "The following is the safe way to clear the contents of the file." then
    ``$ :>file_to_be_cleared``): the candidate right after it in its document (:func:`_following`: a chunk that
    ends with the sentence goes on in the next one when that is a snippet too, ``continuations``), when that is a
    command line; also, after any sentence, a command line that holds every term of the question (``asked``,
    :func:`~.sentences.asked_commands`: "Install with pip or your favorite PyPI package manager." then
    ``python -m pip install rich``); and for a question that asks how to do something (``how``), a shell prompt's
    line right after the sentence, which shows how it is done ("…you can backup its content after splitting it
    into, e.g. 2000MiB chunks and merge those chunks back into the original file." then ``$ split -b 2000m
    large_file``); else ``None``."""
    nxt = _following(cands, i, continuations or {})
    if nxt is None:
        return None
    if asked[nxt]:
        return nxt
    if how and _PROMPT_LINE.match(cands[nxt].text):
        return nxt
    if not (introduces(cands[i].text) or announces(cands[i].text) or _ENDS_ON_COMMAND.search(cands[i].text)):
        return None
    return nxt if _COMMAND_LINE.match(cands[nxt].text) else None


def _antecedent(cands: Sequence[Candidate], top: int, continuations: Mapping[int, int] | None = None) -> int | None:
    """The candidate a sentence opening with a pronoun or a demonstrative ("This causes…", "It has the same
    effect…", "Cette option…"), or wholly in parentheses ("(初心者向けメーリングリストです。)"), refers back to: the
    one right before it in its document (:func:`_preceding`), when that is a sentence, or a line of code, a command
    or a credit line (a label, but no heading: :data:`_CREDIT_LINE`), and for a remark in parentheses the list item
    it follows; else ``None``."""
    best = cands[top]
    remark = _PARENTHETICAL.match(best.text) is not None
    if not (_ANAPHOR.match(best.text) or remark) or _IMPERSONAL.match(best.text):
        return None
    at = _preceding(cands, top, continuations or {})
    if at is None:
        return None
    prev = cands[at]
    # a remark in parentheses may follow the list item it remarks on, in that item
    if best.item or (prev.item and not remark):
        return None
    if prev.label and not (_COMMAND_LINE.match(prev.text) or _CREDIT_LINE.match(prev.text)):
        return None
    return at


_TERM_WORDS = 5  # a definition list's term: a name or a few words ("rw-build-tree", "Depends", "Build-Depends-Indep")


def _defined_term(cands: Sequence[Candidate], top: int, text: str) -> int | None:
    """The term of a definition list whose description holds the best sentence ``top``: a short list item that
    stands alone right before the description's paragraph, as an HTML ``<dl>`` reads ("- rw-build-tree" above
    "The test(s) needs write access to the built source tree…", "- Depends" above "le paquet ne sera pas
    installé…"), and is not one of a list of short items (the item before it is none); else ``None``. ``text`` is
    the snippet's."""
    best = cands[top]
    if best.label or best.item:
        return None
    first = top  # the first sentence of the best sentence's paragraph
    while first > 0 and cands[first - 1].snippet == best.snippet and not cands[first - 1].label:
        if "\n\n" in text[cands[first - 1].end : cands[first].start]:
            break
        first -= 1
    term = first - 1
    if term < 0 or cands[term].snippet != best.snippet or not (cands[term].label and cands[term].item):
        return None
    if len(cands[term].text.split()) > _TERM_WORDS or "\n\n" not in text[cands[term].end : cands[first].start]:
        return None
    before = cands[term - 1] if term > 0 and cands[term - 1].snippet == best.snippet else None
    return None if before is not None and before.item and before.label else term


def _entry_of(cands: Sequence[Candidate], top: int, entries: np.ndarray) -> int:
    """The definition entry whose description the best sentence ``top`` is part of, when the sentence is not one
    (nor an entry the query asks for, ``entries``, :func:`~.sentences.entry_match`): "Which mtr option
    runs a number of cycles and then prints statistics and exits?" is answered by "-r, --report: This option
    puts mtr into report mode.", whose next sentence says it ("When in this mode, mtr will run for the number
    of cycles …"); that sentence alone names no option. The entry runs on over its paragraphs back to its term,
    as far as no heading or other entry comes between (as :meth:`ExtractiveGenerator._select` reads an entry's
    own sentences forwards). For any other question, an entry at most :data:`ENTRY_OF_ANY` sentences up: "The
    certificate is self-signed, how do I get past that? — curl" is answered by "This option makes curl skip the
    verification step and proceed without checking.", which tells how only after "-k, --insecure: …" right above
    it; further down, what a page writes after an entry may be another thing that no term line opens
    (git-remote(1)'s commands "add", "remove, rm" after its ``-v, --verbose``). Else ``top``."""
    if entries[top] > 0 or cands[top].label or cands[top].entry:
        return top  # an entry (or a heading) is its own term line
    best = cands[top]
    for i in range(top - 1, -1, -1):
        c = cands[i]
        if c.snippet != best.snippet or c.label:
            return top
        if c.entry:
            return i if entries[i] > 0 or top - i <= ENTRY_OF_ANY else top
    return top


def _introduced(
    chosen: list[Candidate], cands: Sequence[Candidate], best: Candidate, snippets: Sequence[Snippet], max_chars: int
) -> list[Candidate]:
    """A sentence that joins the best one and introduces what follows it ("Currently there are three versions of
    Debian GNU/Linux:", "Utilisez la commande dpkg comme ceci pour les essayer :") brings that, as the best
    sentence's own step does (:func:`_block`: the lines up to the next blank line, as far as the length allows), or
    leaves the answer when not even its first line fits: an answer does not end on a colon with nothing after it."""
    used = sum(len(c.text) + 1 for c in chosen)
    out: list[Candidate] = []
    for cand in chosen:
        i = cands.index(cand)
        if (
            cand is best
            or cand.entry
            or not introduces(cand.text)
            or not _continues(cands, i)
            or cands[i + 1] in chosen
        ):
            out.append(cand)
            continue
        nxt = cands[i + 1]
        if (nxt.label and not nxt.item) or used + len(nxt.text) + 1 > max_chars:  # a heading is no continuation
            used -= len(cand.text) + 1
            continue
        brought = _block_that_fits(cands, i + 1, snippets, chosen, max_chars - used)
        out += [cand, *brought]
        used += sum(len(c.text) + 1 for c in brought)
    return out


def _headers(cands: Sequence[Candidate]) -> dict[int, int]:
    """Each candidate that is a row of a table with a header row, with that header row's index (``Candidate.header``
    is its position in the snippet)."""
    index = {(c.snippet, c.position): i for i, c in enumerate(cands)}
    rows = ((i, index.get((c.snippet, c.header))) for i, c in enumerate(cands) if c.header >= 0)
    return {i: h for i, h in rows if h is not None}


def _under_headers(
    chosen: list[Candidate], cands: Sequence[Candidate], heads: dict[int, int], max_chars: int
) -> list[Candidate]:
    """``chosen`` with the header row of each table row in it (``heads``, :func:`_headers`), where the length allows:
    a row's cells mean what its header names ("Type | Description" over "boolean | Holds "true" or "false".")."""
    used = sum(len(c.text) + 1 for c in chosen)
    out: list[Candidate] = []
    for cand in chosen:
        h = heads.get(cands.index(cand))
        if h is not None and cands[h] not in out and cands[h] not in chosen and used + len(cands[h].text) <= max_chars:
            out.append(cands[h])  # right before the first of its rows
            used += len(cands[h].text) + 1
        out.append(cand)
    return out


def _block(following: Sequence[Candidate], text: str) -> list[Candidate]:
    """The first of ``following`` and those after it in the same passage up to the next blank line of ``text`` (the
    passage) or the next sentence that introduces another: the block a sentence ending with a colon introduces (a
    command, a code sample, a few lines, a list). A PDF's text has no blank lines: "Les séquences suivantes devraient
    être essayées :" after three command lines opens another block."""
    block = list(following[:1])
    for prev, nxt in zip(following, following[1:], strict=False):
        if nxt.snippet != prev.snippet or "\n\n" in text[prev.end : nxt.start] or introduces(nxt.text):
            break
        block.append(nxt)
    return block


def _block_that_fits(
    cands: Sequence[Candidate], first: int, snippets: Sequence[Snippet], chosen: Sequence[Candidate], room: int
) -> list[Candidate]:
    """The block that starts at ``cands[first]`` (:func:`_block`), without what is ``chosen`` already, as far as
    ``room`` characters allow: what a sentence that joins the answer brings after it."""
    block = [c for c in _block(cands[first:], snippets[cands[first].snippet].text) if c not in chosen]
    return _as_far_as_fits([], block, room)


def _continues(cands: Sequence[Candidate], i: int) -> bool:
    """Another candidate of the same snippet follows ``cands[i]``."""
    return i + 1 < len(cands) and cands[i + 1].snippet == cands[i].snippet


def _continuations(cands: Sequence[Candidate], snippets: Sequence[Snippet]) -> dict[int, int]:
    """Where each snippet's document goes on among the candidates: for a snippet that is a chunk of the service's
    own index (:attr:`~assistant_bridge.core.snippets.Snippet.position`) whose next chunk is a snippet too, the
    first candidate of that chunk past the sentences the two share (consecutive chunks may overlap).
    ``{snippet: candidate index}``."""
    chunk = {(s.document_id, s.position): k for k, s in enumerate(snippets) if s.document_id and s.position is not None}
    out: dict[int, int] = {}
    for k, s in enumerate(snippets):
        nxt = chunk.get((s.document_id, s.position + 1)) if s.document_id and s.position is not None else None
        if nxt is None:
            continue
        shared = {c.text for c in cands if c.snippet == k}
        first = next((i for i, c in enumerate(cands) if c.snippet == nxt and c.text not in shared), None)
        if first is not None:
            out[k] = first
    return out


def _following(cands: Sequence[Candidate], i: int, continuations: Mapping[int, int]) -> int | None:
    """The candidate that comes right after ``cands[i]`` in its document: the next one of its snippet, or, after the
    last one, where the next chunk goes on (:func:`_continuations`); else ``None``."""
    if _continues(cands, i):
        return i + 1
    return continuations.get(cands[i].snippet)


def _preceding(cands: Sequence[Candidate], i: int, continuations: Mapping[int, int]) -> int | None:
    """The candidate that comes right before ``cands[i]`` in its document: the one before it in its snippet, or, for
    the first sentence a chunk adds to the one before it (:func:`_continuations`), that chunk's last; else
    ``None``."""
    if i > 0 and cands[i - 1].snippet == cands[i].snippet:
        return i - 1
    before = next((k for k, first in continuations.items() if first == i), None)
    return max((j for j, c in enumerate(cands) if c.snippet == before), default=None)


def _read_on(cands: Sequence[Candidate], i: int, continuations: Mapping[int, int], n: int) -> list[int]:
    """The indices of up to ``n`` candidates after ``cands[i]`` in its document, in order (:func:`_following`)."""
    out: list[int] = []
    at = _following(cands, i, continuations)
    while at is not None and len(out) < n:
        out.append(at)
        at = _following(cands, at, continuations)
    return out


def _qualifier(
    cands: Sequence[Candidate],
    top: int,
    asks_how: bool = False,
    asks_option: bool = False,
    continuations: Mapping[int, int] | None = None,
) -> int | None:
    """The sentence right after the best one in its document (:func:`_following`) when it opens by qualifying it ("However, …",
    "Unfortunately, …", "ただし…": :data:`_QUALIFIES`) or by speaking of what it spoke of ("They …", "Ils
    comprennent …", "In this case, …": :data:`_GOES_ON`), or, for a query that asks how, by saying how to do what the
    best one says can be done ("To do so, …", "Pour ce faire, …": :data:`_SAYS_HOW`), or, for a query that asks
    which option does something, by naming an option the best one does not name ("By default, dpkg-buildpackage
    will include the original source tar file if and only if… This behavior may be modified by using -sa to always
    include it"); else ``None``. What the best sentence says may hold only with it, or be done only by it."""
    following = _following(cands, top, continuations or {})
    if following is None:
        return None
    nxt = cands[following]
    names_option = asks_option and bool(OPTION_WORD.search(nxt.text)) and not OPTION_WORD.search(cands[top].text)
    opens = (
        _QUALIFIES.match(nxt.text)
        or _GOES_ON.match(nxt.text)
        or (asks_how and _SAYS_HOW.match(nxt.text))
        or names_option
    )
    return None if nxt.label or nxt.item or not opens else following


def _default_stated(cands: Sequence[Candidate], top: int, continuations: Mapping[int, int] | None = None) -> int | None:
    """For a query that asks what something is or does by default, when the best sentence does not say it: the
    first of the :data:`DEFAULT_AHEAD` sentences after it in its document (:func:`_read_on`) that says what the default is, before
    the next heading, list item or entry ("read only: This parameter determines whether clients will be able to
    upload files or not. … The default is for all modules to be read only."; "-F, --separator separateur: … Par
    défaut ‘:’."; "Maximum Depth Of An Expression Tree: SQLite parses expressions into a tree…", then in the
    paragraph after it "The current implementation has a default value of 1000."); else ``None``."""
    if states_default(cands[top].text):
        return None
    for i in _read_on(cands, top, continuations or {}, DEFAULT_AHEAD):
        c = cands[i]
        if c.label or c.item or c.entry:
            return None  # another item, entry or section: another thing's default
        if states_default(c.text):
            return i
    return None


def _overview(scored: _Scored, snippets: Sequence[Snippet], top: int) -> tuple[int | None, int]:
    """For a question that asks only what a command is or does, answered from its manual page: ``(its NAME line
    or None, the sentence to answer with)``. The page's best sentence that says what the command is or does
    answers in place of ``top`` ("Qu'est-ce que grep ?" is not answered by the entry of an option that the
    sentence scores ranked higher), or the NAME line when no sentence says it. The NAME line is the page's own
    one-line summary, so it opens the answer when that sentence does not already say what it says: "strace -
    trace system calls and signals" before "strace is a useful diagnostic, instructional, and debugging tool.",
    but not "rsync - a fast, versatile, local/remote file-copying tool" before "Rsync is a fast and
    extraordinarily versatile file copying tool." (more than half of its words other than stop words).
    Without a NAME line, the best sentence that says what the thing is (a README's line under its name) answers.
    ``(None, top)`` for any other question or document."""
    defined, scores, cands = scored.defined, scored.scores, scored.cands
    names = np.flatnonzero(defined == NAME_LINE)
    if names.size == 0:
        # no manual page: the best sentence that says what the thing is, when one does ("A specification for
        # pythonic filesystems." under fsspec's README heading, not "would install the base fsspec.")
        whats = np.flatnonzero(defined >= 1.0)
        return None, (int(max(whats, key=lambda i: scores[i])) if whats.size else top)
    name = int(max(names, key=lambda i: scores[i]))
    title = snippets[cands[name].snippet].title
    says = [int(i) for i in np.flatnonzero(defined > NAME_LINE)]
    own = [i for i in says if snippets[cands[i].snippet].title == title] or says
    if not own:
        return None, name
    answer = max(own, key=lambda i: scores[i])
    # the NAME line's words, without the command's name(s) before its dash
    parts = NAME_LINE_PARTS.match(cands[name].text)
    words = (parts.group(2) if parts else cands[name].text).split()
    summary = set(terms(" ".join(w for w in words if w.lower() not in STOPWORDS)))
    said = len(summary & cands[answer].terms) > len(summary) / 2
    return (None if said else name), answer


def _with_what_follows(cands: Sequence[Candidate], top: int) -> int:
    """``top``, or the copy of the same sentence in another snippet when ``top`` ends its snippet and that copy
    does not: consecutive chunks overlap, and the sentence is read with what comes after it in the later one."""
    if _continues(cands, top):
        return top
    best = cands[top]
    copies = (i for i, c in enumerate(cands) if c.snippet != best.snippet and c.text == best.text)
    return next((i for i in copies if _continues(cands, i)), top)


def _as_far_as_fits(chosen: list[Candidate], following: Sequence[Candidate], max_chars: int) -> list[Candidate]:
    """``chosen``, then ``following`` in order as far as the answer's ``max_chars`` allows."""
    out = list(chosen)
    used = sum(len(c.text) + 1 for c in out)
    for nxt in following:
        if used + len(nxt.text) > max_chars:
            break
        out.append(nxt)
        used += len(nxt.text) + 1
    return out


def _near_duplicate(a: Candidate, b: Candidate) -> bool:
    """``a`` and ``b`` say the same: one holds the other, or most of their terms are shared. Entries of two
    different terms never do, whatever words they share: socat(1)'s "-r <file>: Dumps the raw (binary) data flowing
    from left to right address to the given file." and "-R <file>: Dumps the raw (binary) data flowing from right to
    left address…" are two options."""
    if a.entry and b.entry and a.entry != b.entry and not same_option(a.entry, b.entry):
        return False
    # one holds the other whole: a PDF's text joins a paragraph's last sentence to the next paragraph's first
    # ("…${misc:Depends}, etc. dh_shlibdeps(1) calcule les dépendances…"), which the HTML form keeps apart
    # (case kept: lsof(1)'s "…selected with the -z option." and "…with the -Z option." are two sentences)
    shorter, longer = sorted((_as_said(a.text), _as_said(b.text)), key=len)
    if len(shorter) >= CONTAINED_MIN_CHARS and shorter in longer:
        return True
    if not a.terms or not b.terms:
        return a.text.strip().casefold() == b.text.strip().casefold()
    overlap = len(a.terms & b.terms) / len(a.terms | b.terms)
    return overlap >= 0.8


def _as_said(text: str) -> str:
    """``text`` on one line, its spaces collapsed, without the stop or the spaces at its ends."""
    return " ".join(flatten(text).split()).strip(" .。")


def _adds_nothing(cand: Candidate, chosen: Sequence[Candidate]) -> bool:
    """The sentences ``chosen`` already hold most of ``cand``'s terms: "There are a lot of Debian-related mailing
    lists." (a page's PDF form) after "There are a lot of Debian-related mailing lists
    (https://www.debian.org/MailingLists/)." (its HTML form)."""
    said = frozenset().union(*(c.terms for c in chosen))
    return len(cand.terms & said) >= 0.8 * len(cand.terms)
