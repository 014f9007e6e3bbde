"""``Services.search``: how a hybrid search is fused (``search.hybrid_fusion``) and a blended one looks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assistant_bridge.backends.base import summed_fuse, weighted_fuse
from assistant_bridge.core.loop import OPTION_WORDS_MIN, OptionWords
from assistant_bridge.domain import Chunk, Ownership, Principal, Scope, SearchHit
from assistant_bridge.services import BLENDED_BM25_QUERY_WEIGHT, Services
from assistant_bridge.text import named_documents, option_entries
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


def test_a_blended_dense_search_looks_for_the_sum_of_the_two_query_vectors(tmp_path: Path, monkeypatch: Any) -> None:
    svc = loaded(tmp_path)
    vectors: list[Any] = []
    search = svc.backend.search
    monkeypatch.setattr(svc.backend, "search", lambda q: vectors.append(q.vector) or search(q))
    svc.search("expense receipts", SCOPE, mode="dense", blend=("How do I get a VPN badge?", 0.5))
    own, other = (svc.embedder.embed_queries([t])[0] for t in ("expense receipts", "How do I get a VPN badge?"))
    mixed = own + 0.5 * other
    assert vectors[0] == pytest.approx(tuple(mixed / np.linalg.norm(mixed)))
    for blend in (None, ("expense receipts", 1.0), ("VPN", 0.0), ("  ", 1.0)):  # nothing to add
        svc.search("expense receipts", SCOPE, mode="dense", blend=blend)
        assert vectors[-1] == pytest.approx(tuple(own))
    svc.search("expense receipts", SCOPE, mode="lexical", blend=("VPN", 1.0))
    assert vectors[-1] is None  # a lexical search has no vector to blend


def test_a_blended_lexical_search_adds_the_other_texts_scores(tmp_path: Path, monkeypatch: Any) -> None:
    svc = loaded(tmp_path, hybrid_depth=7)
    texts: list[tuple[str, int]] = []
    search = svc.backend.search
    monkeypatch.setattr(svc.backend, "search", lambda q: texts.append((q.text, q.limit)) or search(q))
    drifted = "How long is the code valid? — VPN client / badge number"
    blended = svc.search(drifted, SCOPE, mode="lexical", limit=2, blend=("password reset code", 1.0))
    assert texts == [(drifted, 7), ("password reset code", 7)]  # both searched to the depth
    runs = [svc.search(t, SCOPE, mode="lexical", limit=7) for t in (drifted, "password reset code")]
    assert [h.chunk.id for h in blended] == [h.chunk.id for h in summed_fuse(runs, (1.0, 1.0), 2)]
    assert "Reset your password" in [h.chunk.title for h in blended]


def test_a_rewrite_that_only_adds_words_weighs_its_bm25_down(tmp_path: Path) -> None:
    """The embedded rewriter's "message — carried / terms": the carried words weigh less than the message's."""
    svc = loaded(tmp_path)
    asked = "How long is the code valid?"
    carried = f"{asked} — VPN client / badge number"
    blended = svc.search(carried, SCOPE, mode="lexical", limit=3, blend=(asked, 1.0))
    runs = [svc.search(t, SCOPE, mode="lexical", limit=50) for t in (carried, asked)]
    assert BLENDED_BM25_QUERY_WEIGHT < 1.0
    expected = summed_fuse(runs, (BLENDED_BM25_QUERY_WEIGHT, 1.0), 3)
    assert [h.chunk.id for h in blended] == [h.chunk.id for h in expected]
    assert [h.score for h in blended] == [h.score for h in expected]


def test_the_message_as_asked_keeps_what_it_finds_beside_a_rewrite_that_drifted(tmp_path: Path) -> None:
    svc = loaded(tmp_path)
    drifted = "How long is it valid? — VPN client / badge number"  # the conversation's old topic
    alone = svc.search(drifted, SCOPE, mode="dense", limit=1)
    blended = svc.search(
        drifted, SCOPE, mode="dense", limit=3, blend=("How long is the password reset code valid?", 1.0)
    )
    assert alone[0].chunk.title == "VPN access"
    assert "Reset your password" in [h.chunk.title for h in blended[:2]]


def test_a_dense_search_tells_the_cosine_of_each_hit_and_the_others_do_not(tmp_path: Path) -> None:
    svc = loaded(tmp_path)
    dense = svc.search("expense receipts", SCOPE, mode="dense")
    assert dense and all(h.similarity == h.score for h in dense)
    blended = svc.search("expense receipts", SCOPE, mode="dense", blend=("VPN badge", 1.0))
    assert all(h.similarity == h.score for h in blended)  # the cosine with the blended vector
    assert all(h.similarity is None for h in svc.search("expense receipts", SCOPE, mode="lexical"))  # BM25
    cosines = {h.chunk.id: h.score for h in svc.search("expense receipts", SCOPE, mode="dense", limit=50)}
    for hit in svc.search("expense receipts", SCOPE, mode="hybrid"):  # fused: the dense run's cosine
        assert hit.similarity == cosines.get(hit.chunk.id, min(cosines.values()))


MANUAL = {
    "ssh(1): OpenSSH remote login client": "-J destination Connect to the target host by first making an ssh "
    "connection to the jump host described by destination and then establishing a TCP forwarding.",
    "tar(1)": "tar は、アーカイブを作成したり展開したりするためのプログラムです。オプション -x でファイルを抽出します。",
    "gzip(1)": "gzip は、ファイルを圧縮するプログラムです。オプション -d でファイルを伸長します。",
    "tar(1): an archiving utility": "-x, --extract Extract files from an archive.",
    **{
        f"{name}(1)": f"{name} のオプション: 接続するホストを経由してファイルを送ります。踏み台のホストを使うオプションです。"
        for name in ("rsync", "scp", "sftp", "wget", "curl")
    },
}
ASKED_IN_JAPANESE = "ssh で踏み台ホストを経由して接続するオプションは？"


def manuals(tmp_path: Path, **owners: str) -> Any:
    svc = make_services(make_settings(tmp_path))
    for title, text in MANUAL.items():
        svc.ingestor.ingest_text(text, title=title, ownership=Ownership(owner_user_id=owners.get(title[:3], "")))
    return svc


def named(svc: Any, message: str, scope: Scope = SCOPE) -> list[str]:
    hits = svc.search(message, scope, mode="hybrid", limit=6)
    return [h.chunk.title for h in svc.with_named_pages(message, hits, message, scope, mode="hybrid")]


def test_a_manual_page_named_in_another_language_comes_first(tmp_path: Path) -> None:
    """A Japanese question about ssh(1), whose manual the corpus holds in English only, finds pages in
    Japanese by its words; the page it names comes first, with as many results as before."""
    svc = manuals(tmp_path)
    assert svc.store.manual_pages(["ssh", "*", "tar"], SCOPE)
    assert not svc.store.manual_pages(["*", "ss?", "[s]sh"], SCOPE)
    assert [t for _, t, _ in svc.store.manual_pages(["ssh"], SCOPE)] == ["ssh(1): OpenSSH remote login client"]
    asked = svc.search(ASKED_IN_JAPANESE, SCOPE, mode="hybrid", limit=6)
    assert "ssh(1): OpenSSH remote login client" not in [h.chunk.title for h in asked[:5]]
    titles = named(svc, ASKED_IN_JAPANESE)
    assert titles[0] == "ssh(1): OpenSSH remote login client" and len(titles) == len(asked) == 6


def test_a_named_page_in_the_messages_language_or_among_the_results_is_left_where_it_is(tmp_path: Path) -> None:
    svc = manuals(tmp_path)
    for message in (
        "tar でアーカイブからファイルを抽出するオプションは何ですか？",  # tar(1) in Japanese: found by its words
        "Which ssh option connects through a jump host?",  # ssh(1) in English
        "どのプログラムがファイルを抽出しますか？",  # no page named
        "How can I find a host to connect through with rsync?",  # English: rsync(1) is Japanese, but English
        # names commands as words ("find", "less", "file"), and its words find its pages
    ):
        hits = svc.search(message, SCOPE, mode="hybrid", limit=3)
        assert svc.with_named_pages(message, hits, message, SCOPE, mode="hybrid") == hits


def test_a_name_no_word_is_spelt_like_brings_its_page_in_english_too(tmp_path: Path) -> None:
    """ "ssh_config" is no English word: an English message that names it gets its page first, though ssh(1),
    in the same language, has a line much like the message's words."""
    svc = manuals(tmp_path)
    config = "Port: Specifies the port number. The default is 22.\n\nUser: Specifies the user to log in as."
    svc.ingestor.ingest_text(config, title="ssh_config(5): client configuration", ownership=Ownership())
    for i in range(4):
        line = f"-p port: Port to connect to on the remote host, option {i} of ssh."
        svc.ingestor.ingest_text(line, title="ssh(1): OpenSSH remote login client", ownership=Ownership())
    message = "Which ssh_config keyword sets the port to connect to on the remote host?"
    hits = svc.search(message, SCOPE, mode="lexical", limit=6)
    assert "ssh_config(5): client configuration" not in [h.chunk.title for h in hits[:5]]
    titles = [h.chunk.title for h in svc.with_named_pages(message, hits, message, SCOPE, mode="lexical")]
    assert titles[0] == "ssh_config(5): client configuration" and len(titles) == len(hits)


def test_a_named_page_comes_only_from_what_the_caller_may_read(tmp_path: Path) -> None:
    svc = manuals(tmp_path, ssh="alice")
    bob = Scope(principal=Principal("bob"))
    assert not svc.store.manual_pages(["ssh"], bob)
    assert "ssh(1): OpenSSH remote login client" not in named(svc, ASKED_IN_JAPANESE, bob)
    alice = Scope(principal=Principal("alice"))
    assert named(svc, ASKED_IN_JAPANESE, alice)[0] == "ssh(1): OpenSSH remote login client"


def test_no_page_comes_first_when_the_results_hold_one_the_message_names(tmp_path: Path) -> None:
    """lsof(8) among the first results is the message's subject; rsync(1), held only in Japanese, is not
    brought in for a French message that names both."""
    svc = manuals(tmp_path)
    for name in ("lsof", "fuser", "pgrep", "ps", "top"):
        text = f"{name} liste les fichiers ouverts d'un processus : -p pid choisit les fichiers d'un processus lancé."
        svc.ingestor.ingest_text(text, title=f"{name}(8)", ownership=Ownership())
    message = "Comment lister avec lsof les fichiers ouverts par un processus lancé par rsync ?"
    hits = svc.search(message, SCOPE, mode="hybrid", limit=6)
    assert "lsof(8)" in [h.chunk.title for h in hits[:5]] and "rsync(1)" not in [h.chunk.title for h in hits[:5]]
    assert svc.with_named_pages(message, hits, message, SCOPE, mode="hybrid") == hits


def test_a_long_message_looks_up_a_bounded_number_of_names(tmp_path: Path, monkeypatch: Any) -> None:
    svc = manuals(tmp_path)
    asked: list[list[str]] = []
    lookup = svc.store.manual_pages
    monkeypatch.setattr(
        svc.store, "manual_pages", lambda names, scope: asked.append(list(names)) or lookup(names, scope)
    )
    message = "".join(f"w{i} のオプションと" for i in range(2000)) + "？"  # Japanese, with 2,000 Latin words
    assert svc.with_named_pages(message, [], message, SCOPE, mode="hybrid") == []
    assert len(asked) == 1 and len(asked[0]) == 16


TOPIC_PAGES = {
    "make(1): GNU make utility": "-n, --just-print: Print the commands that would be executed, but do not execute them.",
    "less(1): opposite of more": "You see what it would run without running it: the screen shows what less runs next.",
    "zip(1): package files": "-sf: Show the files that would be operated on, then exit.",
    "unzip(1): list and extract": "-d exdir: An optional directory to which to extract files.",
}
FOLLOW_UP = "How do I only see what it would run without running it? — make"


def topic_pages(tmp_path: Path, **owners: str) -> Any:
    svc = make_services(make_settings(tmp_path))
    for title, text in TOPIC_PAGES.items():
        owner = owners.get(title.split("(")[0], "")
        svc.ingestor.ingest_text(text, title=title, ownership=Ownership(owner_user_id=owner))
    return svc


def test_a_follow_ups_topic_page_comes_first_when_another_page_leads(tmp_path: Path) -> None:
    """ "How do I only see what it would run without running it?" after a question about make: less(1)'s words
    lead a search of every page, and the turn's topic brings make(1)'s best passages to the head, with as many
    results as before."""
    svc = topic_pages(tmp_path)
    message = FOLLOW_UP.split(" — ")[0]
    hits = svc.search(message, SCOPE, mode="lexical", limit=3)  # the message as asked weighs in too
    assert hits[0].chunk.title.startswith("less(1)")
    moved = svc.with_topic_page("make", message, hits, FOLLOW_UP, SCOPE, mode="lexical")
    assert moved[0].chunk.title.startswith("make(1)") and len(moved) == len(hits)
    assert svc.with_topic_page(None, message, hits, FOLLOW_UP, SCOPE, mode="lexical") == hits
    # the topic's page leads already; a message that names a page of its own is about it
    assert svc.with_topic_page("less", message, hits, FOLLOW_UP, SCOPE, mode="lexical") == hits
    unzip = "When I unzip it, can it show what it would run?"
    found = svc.search(unzip, SCOPE, mode="lexical", limit=3)
    assert not found[0].chunk.title.startswith("make(1)")
    assert svc.with_topic_page("make", unzip, found, unzip, SCOPE, mode="lexical") == found


def test_a_topic_page_comes_only_from_what_the_caller_may_read(tmp_path: Path) -> None:
    svc = topic_pages(tmp_path, make="alice")
    message = FOLLOW_UP.split(" — ")[0]
    bob = Scope(principal=Principal("bob"))
    hits = svc.search(FOLLOW_UP, bob, mode="lexical", limit=3)
    assert svc.with_topic_page("make", message, hits, FOLLOW_UP, bob, mode="lexical") == hits
    assert all(not h.chunk.title.startswith("make(1)") for h in hits)


RSYNC_PAGE = "\n\n".join(
    [
        "Name\n\nrsync - a fast, versatile, local/remote file-copying tool\n\nSynopsis\n\nrsync [OPTION...] SRC DEST",
        "Description\n\nRsync is a fast and extraordinarily versatile file copying tool. It can copy locally or to "
        "a remote host, and it is widely used for backups and mirroring.",
        *(
            f"--option-{i} makes rsync do step {i} of the transfer differently; rsync then reports step {i}. "
            + "This paragraph describes what rsync does in that mode, and how rsync behaves. " * 3
            for i in range(12)
        ),
    ]
)


def rsync_pages(tmp_path: Path) -> Any:
    svc = make_services(make_settings(tmp_path))
    svc.ingestor.ingest_text(RSYNC_PAGE, title="rsync(1): a fast, versatile, local/remote file-copying tool",
                             ownership=Ownership())  # fmt: skip
    svc.ingestor.ingest_text("cp copies files and directories.", title="cp(1): copy files", ownership=Ownership())
    return svc


def test_a_question_about_what_a_named_thing_is_starts_from_its_documents_opening(tmp_path: Path) -> None:
    svc = rsync_pages(tmp_path)
    message = "What does rsync do?"
    hits = svc.search(message, SCOPE, mode="hybrid", limit=5)
    assert len({h.chunk.document_id for h in hits}) >= 1 and hits[0].chunk.position > 0
    opened = svc.with_opening(message, hits, SCOPE)
    assert opened[0].chunk.position == 0 and "Rsync is a fast" in " ".join(h.chunk.text for h in opened[:2])
    assert len(opened) == len(hits) and len({h.chunk.id for h in opened}) == len(opened)
    for other in ("What is the default port of rsync?", "What does tar do?", "How do I copy with rsync?"):
        hits = svc.search(other, SCOPE, mode="hybrid", limit=5)
        assert svc.with_opening(other, hits, SCOPE) == hits  # not asked what it is, or no document of it found
    from assistant_bridge.core.filters import parse_filter

    hits = svc.search(message, SCOPE, mode="hybrid", limit=5)
    assert svc.with_opening(message, hits, SCOPE, filter=parse_filter('title == "elsewhere"')) == hits


CURL_PAGE = "\n\n".join(
    [
        "Name\n\ncurl - transfer a URL\n\nDescription\n\ncurl is a tool for transferring data from or to a server.",
        *(
            f"--option-{i}: sets step {i} of the job; it then reports step {i} in its log, and the job goes on as "
            "before with the server."
            for i in range(30)
        ),
        "-I, --head: Fetch the headers only! HTTP servers answer HEAD requests with the headers alone.",
        *(f"--late-{i}: changes part {i} of the job, as it does for the server." for i in range(30)),
    ]
)


def test_a_question_about_one_option_of_a_long_page_finds_that_option_entry(tmp_path: Path) -> None:
    """A page of sixty options holds several in each chunk; the one asked for is matched on its own (its vector
    is computed at ingestion), and its chunk comes first when the search did not find it."""
    svc = make_services(make_settings(tmp_path), dim=1024)  # few hash collisions between words
    svc.ingestor.ingest_text(CURL_PAGE, title="curl(1): transfer a URL", ownership=Ownership())
    svc.ingestor.ingest_text("cp copies files and directories.", title="cp(1): copy files", ownership=Ownership())
    doc = next(d for d in svc.store.list_documents() if d.title.startswith("curl"))
    assert doc.chunk_count > 5
    spans = option_entries(doc.text)
    assert len(spans) == 61 and doc.text[spans[30][0] :].startswith("-I, --head: Fetch the headers only!")
    assert len(svc.ingestor.cached_entries(doc.title, doc.text, spans)) == 61  # ingestion made them
    message = "Which curl option fetches the headers only?"
    missed = [h for h in svc.search(message, SCOPE, mode="hybrid", limit=10) if "--head" not in h.chunk.text]
    found = svc.with_option_entry(message, missed, SCOPE)
    assert "-I, --head: Fetch the headers only!" in found[0].chunk.text
    assert len(found) == len(missed) and found[1:] == missed[: len(missed) - 1]
    assert svc.with_option_entry(message, found, SCOPE) == found  # already among the first five: unchanged
    from assistant_bridge.core.filters import parse_filter

    assert svc.with_option_entry(message, missed, SCOPE, filter=parse_filter('title == "elsewhere"')) == missed
    for other in ("What is curl?", "Which option fetches the headers only?", "How do I copy files with cp?"):
        hits = [h for h in svc.search(other, SCOPE, mode="hybrid", limit=10) if "--head" not in h.chunk.text]
        assert svc.with_option_entry(other, hits, SCOPE) == hits  # what it is; no page named; no option entries
    # an entry that matches the question no better than a passage found already is not brought in, unless it
    # holds every word the question asks with
    closer = [replace(h, similarity=0.99) if i == 3 else h for i, h in enumerate(missed)]
    assert "--head" in svc.with_option_entry(message, closer, SCOPE)[0].chunk.text
    partly = "Which curl option fetches the response headers only?"
    assert svc.with_option_entry(partly, closer, SCOPE) == closer
    # a document ingested before entries were embedded has none cached: no change, and no embedding in a search
    svc.store.execute("DELETE FROM embeddings")
    calls = []
    svc.embedder.embed_passages = lambda texts: calls.append(texts)  # type: ignore[method-assign]
    assert svc.with_option_entry(message, missed, SCOPE) == missed and calls == []


def test_a_question_for_an_option_is_measured_by_the_words_the_best_entry_of_the_named_page_holds(
    tmp_path: Path,
) -> None:
    svc = make_services(make_settings(tmp_path), dim=1024)
    doc = svc.ingestor.ingest_text(CURL_PAGE, title="curl(1): transfer a URL", ownership=Ownership()).document
    documents = [(doc.id, doc.title, doc.language)]

    def words(message: str, found: list[tuple[str, str, str]] = documents) -> OptionWords | None:
        return svc.option_words(message, found)

    head = words("Which curl option fetches the headers only?")
    assert head is not None and head.share >= 0.9 and head.unknown == 0 and head.found
    secret = words("Which curl option encrypts the upload with a password?")
    assert secret is not None and secret.share < OPTION_WORDS_MIN and secret.unknown == 3 and secret.missing
    assert words("How does curl fetch the headers only?") is None  # asks for no option
    # a program none of the results writes: the results cannot say which of its options does it
    wget = words("Which wget option fetches the headers only?")
    assert wget is not None and wget.unwritten and wget.missing
    assert words("Quelle option de curl chiffre le transfert ?") is None  # the page is in another language
    assert words("curl でヘッダーだけを取得するオプションは？") is None  # the page is in another language
    assert words("Which curl option fetches the headers only?", [("gone", doc.title, doc.language)]) is None
    # a command or a keyword of the page is asked for by the page's words, not necessarily those of its entries
    command = words("Which curl command fetches the headers only?")
    assert command is not None and not command.entries and command.unknown == 0 and not command.missing
    assert not command.found  # it never lets a refused question through
    video = words("Which curl command records the transfer as a video clip?")
    assert video is not None and video.unknown >= 2 and video.missing
    assert words("What does the curl command do?") is None  # what the page's command is: another question


def test_the_manual_of_a_program_that_is_no_manual_page_is_named_by_its_program(tmp_path: Path) -> None:
    """An Info or HTML manual titled by its program ("GNU Curl: transfer a URL") is that program's page when a
    question asks which of its options does something, as a manual page is; a one-word title that is no program's
    manual (it lists no entries) and a manual page without its header ("file: …") are not named by their title."""
    svc = make_services(make_settings(tmp_path), dim=1024)
    doc = svc.ingestor.ingest_text(CURL_PAGE, title="GNU Curl: transfer a URL", ownership=Ownership()).document
    found = svc.option_words("Which curl option fetches the headers only?", [(doc.id, doc.title, doc.language)])
    assert found is not None and found.share >= 0.9 and found.found
    secret = svc.option_words("Which curl option encrypts the upload with a password?", [(doc.id, doc.title, "en")])
    assert secret is not None and secret.missing
    plain = svc.ingestor.ingest_text("A transaction starts with BEGIN.", title="Transaction", ownership=Ownership())
    assert svc.option_words("Which command starts a transaction?", [(plain.document.id, "Transaction", "en")]) is None
    # a manual whose title opens with the program a question asks a variable of; judged by its unknown words
    readline = svc.ingestor.ingest_text(
        "bell-style: Controls what happens when Readline wants to ring the terminal bell.\n\n"
        + "\n\n".join(f"history-{w}: sets the {w} part of the line editor's history." for w in "abcdef"),
        title="GNU Readline Library",
        ownership=Ownership(),
    ).document
    manual = [(readline.id, readline.title, "en")]
    bell = svc.option_words("Which readline variable controls the terminal bell?", manual)
    assert bell is not None and not bell.entries and bell.unknown == 0 and not bell.missing
    cloud = svc.option_words("Which readline variable saves the history to a cloud service?", manual)
    assert cloud is not None and cloud.unknown >= 2 and cloud.missing
    # a manual page without its header is named by no title, but it writes the program asked of: read as the
    # results' manual of that program
    headless = svc.ingestor.ingest_text(CURL_PAGE, title="curl: transfer a URL", ownership=Ownership()).document
    assert named_documents("Which curl option fetches the headers only?", [headless.title]) == set()
    read = svc.option_words("Which curl option fetches the headers only?", [(headless.id, headless.title, "en")])
    assert read is not None and read.found


def test_an_api_references_functions_are_not_judged_by_the_words_its_page_never_uses(tmp_path: Path) -> None:
    """A Python module's reference lists its functions by their signatures ("functools.partial(func, /, *args,
    **keywords): Return a new partial object…"), and says what each does in other words than a question asks
    with: "Which functools function returns a callable with some arguments already fixed?" is not declined for
    "already" and "fixed", which the page never writes."""
    svc = make_services(make_settings(tmp_path), dim=1024)
    entries = [
        "functools.partial(func, /, *args, **keywords): Return a new partial object which when called will behave "
        "like func called with the positional arguments args and keyword arguments keywords.",
        "functools.reduce(function, iterable[, initializer]): Apply function of two arguments cumulatively.",
        "functools.cache(user_function): Simple lightweight unbounded function cache.",
        "functools.wraps(wrapped, assigned=WRAPPER_ASSIGNMENTS): A convenience function for update_wrapper().",
        "functools.cmp_to_key(func): Transform an old-style comparison function to a key function.",
        "functools.total_ordering: Given a class defining one or more rich comparison ordering methods.",
    ]
    doc = svc.ingestor.ingest_text(
        "\n\n".join(entries), title="functools — Higher-order functions", ownership=Ownership()
    ).document
    found = [(doc.id, doc.title, "en")]
    assert (
        svc.option_words("Which functools function returns a callable with some arguments already fixed?", found)
        is None
    )


def test_an_option_question_of_a_page_that_writes_its_options_in_prose_is_judged_by_its_unknown_words(
    tmp_path: Path,
) -> None:
    """A manual page that names its options in sentences ("L'option -l permet d'afficher la crontab…") lists no
    entries to hold one; an option question of it is declined when the page never uses more than half the words
    that say what it asks for ("…exporte la crontab au format JSON ?"), and kept when a paraphrase misses fewer."""
    svc = make_services(make_settings(tmp_path), dim=1024)
    page = (
        "CRONTAB(1)    Commandes    CRONTAB(1)\n\nNOM\n       crontab - Entretenir les fichiers crontab\n\n"
        "DESCRIPTION\n       L'option -l permet d'afficher la crontab en cours sur la sortie standard. L'option "
        "-r supprime la crontab en cours. Si l'option -n est fournie, crontab examine la syntaxe de votre crontab "
        "et affiche un message de succès, mais rien n'est écrit dans aucune crontab.\n"
    )
    doc = svc.ingestor.ingest_text(page, title="crontab(1): Entretenir les fichiers crontab", ownership=Ownership())
    found = [(doc.document.id, doc.document.title, "fr")]
    json_ = svc.option_words("Quelle option de crontab exporte la crontab au format JSON ?", found)
    assert json_ is not None and json_.prose and not json_.entries and json_.missing
    syntax = svc.option_words("Quelle option de crontab vérifie la syntaxe sans rien écrire ?", found)
    assert syntax is not None and syntax.prose and not syntax.missing


DIFFUTILS = "\n\n".join(
    [
        "The diff, cmp, diff3 and sdiff programs compare files. The cmp command compares two files, and if they "
        "differ, tells the first byte and line number where they differ. Bytes and lines are numbered from 1.",
        *(f"--diff-{i}: changes how diff shows hunk {i} of the output, as diff does for hunks." for i in range(25)),
        "-n COUNT, --bytes=COUNT: Compare at most COUNT input bytes.",
        *(f"--patch-{i}: makes patch treat hunk {i} of the input in another way." for i in range(25)),
    ]
)


def test_a_program_that_no_title_names_is_asked_of_the_manual_that_writes_it(tmp_path: Path) -> None:
    """A manual of several programs ("Comparing and Merging Files": diff, cmp, sdiff…) is no program's by its
    title; a question that asks an option of one of them is matched against its entries, even when a passage
    that tells what the program does is closer to the question than any entry. A manual page the titles name
    for another word of the question ("over SSH") does not answer for a program it never writes."""
    svc = make_services(make_settings(tmp_path), dim=1024)
    manual = svc.ingestor.ingest_text(DIFFUTILS, title="Comparing and Merging Files", ownership=Ownership())
    ssh = svc.ingestor.ingest_text(
        "Name\n\nssh - remote login client\n\n-p port: Port to connect to on the remote host.",
        title="ssh(1): remote login client",
        ownership=Ownership(),
    )
    message = "Which cmp option compares at most a given number of bytes?"
    missed = [h for h in svc.search(message, SCOPE, mode="hybrid", limit=10) if "--bytes" not in h.chunk.text]
    closer = [replace(h, similarity=0.99) for h in missed]  # the passage about cmp is closer than the entry
    assert "-n COUNT, --bytes=COUNT" in svc.with_option_entry(message, closer, SCOPE)[0].chunk.text
    documents = [(manual.document.id, manual.document.title, "en")]
    assert svc.option_words("Which cmp option compares at most a given number of bytes?", documents) is not None
    mail = svc.option_words("Which cmp option sends the result by e-mail?", documents)
    assert mail is not None and mail.missing and not mail.unwritten
    over_ssh = [(ssh.document.id, ssh.document.title, "en"), *documents]
    remote = svc.option_words("Which cmp option reads a file on a remote host over SSH?", over_ssh)
    assert remote is not None and remote.missing  # judged on the manual that writes cmp, not on ssh(1)
    nowhere = svc.option_words("Which locate option prints the number of matches?", over_ssh)
    assert nowhere is not None and nowhere.unwritten and nowhere.missing
    # no manual writes the program: nothing is brought in
    hits = svc.search("Which locate option prints the number of matches?", SCOPE, mode="hybrid", limit=10)
    assert svc.with_option_entry("Which locate option prints the number of matches?", hits, SCOPE) == hits


GZIP_JA = (
    "gzip, gunzip - ファイルの圧縮、伸長を行う\n\n"
    "-c --stdout: 出力を標準出力に書き出します。元のファイルは変更しません。\n\n"
    "-d --decompress: 伸長します。\n\n"
    "-t --test: 検査を行います。圧縮ファイルの整合性をチェックして終了します。\n\n"
    "-v --verbose: 詳細出力。圧縮、伸長される各ファイルについて名前と圧縮率を表示します。\n"
)


def test_a_japanese_question_for_an_option_is_measured_by_its_kanji_and_katakana_words(tmp_path: Path) -> None:
    """A Japanese question is judged by the words the page never writes, a word being a run of kanji or of
    katakana: "パスワード" and "暗号化" are not in gzip(1), every word of a question it answers is; one unknown word
    of two is half of what it asks for, as an English question's half."""
    svc = make_services(make_settings(tmp_path), dim=1024)
    doc = svc.ingestor.ingest_text(GZIP_JA, title="gzip(1): ファイルの圧縮、伸長を行う", ownership=Ownership()).document
    documents = [(doc.id, doc.title, "ja")]
    test = svc.option_words("gzip で圧縮ファイルの整合性を検査するオプションは？", documents)
    assert test is not None and test.unknown == 0 and not test.missing and not test.found
    secret = svc.option_words("gzip でファイルをパスワードで暗号化するオプションは？", documents)
    assert secret is not None and (secret.unknown, secret.asked) == (2, 3) and secret.missing
    encrypt = svc.option_words("gzip でファイルを暗号化するオプションは？", documents)
    assert encrypt is not None and (encrypt.unknown, encrypt.asked) == (1, 2) and encrypt.missing
    assert svc.option_words("gzip とは何ですか？", documents) is None  # asks for no option


def test_an_option_entry_is_weighed_by_the_words_of_the_question_as_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation turn's rewrite names the page with the terms it carries ("… — curl / step / job log"); the
    share of words an entry holds is counted on the words the turn asked with."""
    import assistant_bridge.services as services_module

    svc = make_services(make_settings(tmp_path), dim=1024)
    svc.ingestor.ingest_text(CURL_PAGE, title="curl(1): transfer a URL", ownership=Ownership())
    seen: list[str] = []
    real = services_module.entry_word_share
    monkeypatch.setattr(services_module, "entry_word_share", lambda q, *a: seen.append(q) or real(q, *a))
    rewrite = "Which curl option fetches the headers only? — step / job log"
    hits = [replace(h, similarity=0.0) for h in svc.search(rewrite, SCOPE, mode="hybrid", limit=10)]
    svc.with_option_entry(rewrite, hits, SCOPE, asked="Which curl option fetches the headers only?")
    svc.with_option_entry(rewrite, hits, SCOPE)
    assert seen == ["Which curl option fetches the headers only?", rewrite]


def test_an_entry_is_embedded_by_its_head_and_a_whole_entry_cached_before_still_serves(tmp_path: Path) -> None:
    """Ingestion embeds each entry's term and first two sentences (:func:`~assistant_bridge.text.entry_head`); a
    document whose entries were embedded whole, as ingestion did before, finds those vectors until reindexed."""
    from assistant_bridge.ingest.service import _entry_passages

    svc = make_services(make_settings(tmp_path, ingest={"option_entries": False}), dim=1024)
    page = "\n\n".join(
        f"-{c}: Option {c} does one thing. It does it well. It has a caveat {c} that is long." for c in "abcdef"
    )
    doc = svc.ingestor.ingest_text(page, title="tool(1): a tool", ownership=Ownership()).document
    spans = option_entries(doc.text)
    assert len(spans) == 6 and svc.ingestor.cached_entries(doc.title, doc.text, spans) == {}
    svc.ingestor.embed_passages(_entry_passages(doc.title, doc.text, spans, whole=True))  # an older ingestion
    legacy = svc.ingestor.cached_entries(doc.title, doc.text, spans)
    assert len(legacy) == len(spans)
    svc.ingestor.embed_entries(doc.title, doc.text, spans)
    heads = svc.ingestor.cached_entries(doc.title, doc.text, spans)
    assert len(heads) == len(spans) and any(not np.array_equal(heads[i], legacy[i]) for i in heads)


def test_an_entry_as_close_as_the_closest_passage_within_the_tie_is_taken(tmp_path: Path) -> None:
    """Cosines within :data:`~assistant_bridge.services.OPTION_ENTRY_TIE` are a tie: the entry is taken; a
    passage closer by more means no option was asked about, unless the entry holds every word the question asks
    with (:data:`~assistant_bridge.services.OPTION_ENTRY_FULL_SHARE`)."""
    from assistant_bridge.services import OPTION_ENTRY_TIE

    svc = make_services(make_settings(tmp_path), dim=1024)
    doc = svc.ingestor.ingest_text(CURL_PAGE, title="curl(1): transfer a URL", ownership=Ownership()).document
    spans = option_entries(doc.text)
    vectors = svc.ingestor.cached_entries(doc.title, doc.text, spans)
    message = "Which curl option fetches the headers only?"
    best = max(float(v @ svc.embedder.embed_queries([message])[0]) for v in vectors.values())
    missed = [h for h in svc.search(message, SCOPE, mode="hybrid", limit=10) if "--head" not in h.chunk.text]
    tied = [replace(h, similarity=best + OPTION_ENTRY_TIE / 2) for h in missed]
    assert "--head" in svc.with_option_entry(message, tied, SCOPE)[0].chunk.text
    partly = "Which curl option fetches the response headers only?"  # "response": no entry holds every word
    best = max(float(v @ svc.embedder.embed_queries([partly])[0]) for v in vectors.values())
    closer = [replace(h, similarity=best + 2 * OPTION_ENTRY_TIE) for h in missed]
    assert svc.with_option_entry(partly, closer, SCOPE) == closer
    assert "--head" in svc.with_option_entry(message, closer, SCOPE)[0].chunk.text  # holds every word of this one


def test_option_entries_are_not_embedded_when_turned_off(tmp_path: Path) -> None:
    svc = make_services(make_settings(tmp_path, ingest={"option_entries": False}), dim=1024)
    doc = svc.ingestor.ingest_text(CURL_PAGE, title="curl(1): transfer a URL", ownership=Ownership()).document
    assert svc.ingestor.cached_entries(doc.title, doc.text, option_entries(doc.text)) == {}
    message = "Which curl option fetches the headers only?"
    missed = [h for h in svc.search(message, SCOPE, mode="hybrid", limit=10) if "--head" not in h.chunk.text]
    assert svc.with_option_entry(message, missed, SCOPE) == missed


def test_the_chunk_at_an_offset_is_the_last_one_that_starts_before_it(tmp_path: Path) -> None:
    svc = make_services(make_settings(tmp_path))
    svc.ingestor.ingest_text(CURL_PAGE, title="curl(1): transfer a URL", ownership=Ownership())
    doc = svc.store.get_document(svc.store.list_documents()[0].id)
    assert doc is not None
    from assistant_bridge.ingest.service import chunk_id

    chunks = sorted(
        svc.backend.get_chunks([chunk_id(doc.id, p) for p in range(doc.chunk_count)], SCOPE), key=lambda c: c.position
    )
    assert any(a.end_char > b.start_char for a, b in zip(chunks, chunks[1:], strict=False))  # they overlap
    for offset in range(0, len(doc.text), 97):
        holding = [c for c in chunks if c.start_char <= offset < c.end_char]
        found = svc._chunk_at(doc.id, doc.chunk_count, offset, SCOPE)
        assert (found.id if found else None) == (holding[-1].id if holding else None)


def test_passages_that_write_a_name_the_question_writes_as_code_come_first() -> None:
    """ "What does ifnull() return in SQLite?": the passage that writes ``ifnull`` comes before the pages about
    NULLs that a dense search ranks higher; each group keeps the search order, and nothing moves when no
    passage or every passage writes it, or the question writes no code."""

    def hit(i: int, text: str) -> SearchHit:
        return SearchHit(Chunk(id=f"c{i}", document_id=f"d{i}", title="SQL", text=text), 1.0 - i / 10)

    hits = [
        hit(0, "NULL handling differs between engines."),
        hit(1, "ifnull(X,Y): The ifnull() function returns a copy of its first non-NULL argument."),
        hit(2, "NULLs are distinct in a UNIQUE column."),
        hit(3, "coalesce() and ifnull() with two arguments are the same."),
    ]
    moved = Services.with_code_names("What does ifnull() return in SQLite?", hits)
    assert [h.chunk.id for h in moved] == ["c1", "c3", "c0", "c2"]
    assert Services.with_code_names("What does it return?", hits) == hits
    assert Services.with_code_names("What does xyz_abc() return?", hits) == hits


SHELL_PAGE = "\n\n".join(
    [
        "The sqlite3 program reads lines of input. Lines that begin with a dot are dot-commands of the shell.",
        "sqlite> .help\n"
        + "\n".join(
            f".{name:<10} ARG     {what}"
            for name, what in [
                ("backup", "Backup a database to a file"),
                ("bail", "Stop after hitting an error"),
                ("changes", "Show number of rows changed by SQL"),
                ("dump", "Render database content as SQL"),
                ("headers", "Turn display of headers on or off"),
                ("import", "Import data from FILE into TABLE"),
            ]
        ),
        *(f"The sqlite3 shell formats output {i} in its own way, as the sqlite3 shell always does." for i in range(30)),
    ]
)
SQLITE3_PAGE = "Name\n\nsqlite3 - A command line interface for SQLite version 3\n\n" + "\n\n".join(
    f"-opt{i}: sets option {i} of the command line interface" for i in range(8)
)


def test_a_command_question_is_asked_of_the_manual_that_lists_commands(tmp_path: Path) -> None:
    """sqlite3(1) lists options only; "Which sqlite3 dot-command loads data from a file into a table?" is matched
    against the dot-commands the SQLite shell's page lists in its .help output, whatever the title names. An
    option question stays on the manual page."""
    svc = make_services(make_settings(tmp_path), dim=1024)
    shell = svc.ingestor.ingest_text(SHELL_PAGE, title="Command Line Shell For SQLite", ownership=Ownership())
    page = svc.ingestor.ingest_text(SQLITE3_PAGE, title="sqlite3(1): A command line interface", ownership=Ownership())
    message = "Which sqlite3 dot-command loads data from a file into a table?"
    hits = svc.search(message, SCOPE, mode="hybrid", limit=10)
    assert {h.chunk.document_id for h in hits} == {shell.document.id, page.document.id}
    missed = [h for h in hits if ".import" not in h.chunk.text]
    assert missed and ".import" in svc.with_option_entry(message, missed, SCOPE)[0].chunk.text
    option = "Which sqlite3 option sets option 3?"
    assert ".import" not in svc.with_option_entry(option, missed, SCOPE)[0].chunk.text


def test_a_japanese_paragraph_wrapped_over_lines_is_found_by_the_words_it_wraps(tmp_path: Path) -> None:
    """A Japanese Markdown paragraph hard-wrapped at a fixed width ("…三十日以内に申" / "請してください"): a
    lexical search for 申請 finds it, as it finds the same paragraph written on one line."""
    svc = make_services(make_settings(tmp_path))
    wrapped = "# 経費精算\n\n経費は、支出した日から三十日以内に申\n請してください。領収書を添付します。\n"
    svc.ingestor.ingest_bytes("keihi.md", wrapped.encode(), Ownership())
    svc.ingestor.ingest_text("休暇は上長に届け出てください。", title="休暇", ownership=Ownership())
    hits = svc.search("申請の期限", SCOPE, mode="lexical", limit=2)
    assert hits and hits[0].chunk.title.startswith("経費精算") and "申\n請" in hits[0].chunk.text
