"""Search sources: ajv-style error wording, remote request headers per credential kind, the fake."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from assistant_bridge.conversation.assistants import SearchConfig, ServerSearch
from assistant_bridge.conversation.sources import FakeSource, RemoteSource
from assistant_bridge.custom_search_client import ajv_errors
from assistant_bridge.domain import Principal, Scope
from assistant_bridge.errors import BackendUnavailable, SearchServiceError
from assistant_bridge.settings import Secret
from assistant_bridge.validation import validator

pytestmark = pytest.mark.unit
SCOPE = Scope(Principal(user_id="u"))


def errors_of(body: Any) -> list[dict[str, str]]:
    return ajv_errors(validator("search_response").iter_errors(body))


def test_ajv_wording_and_json_pointer_paths() -> None:
    assert errors_of({}) == [{"message": "must have required property 'search_results'", "path": ""}]
    wrong = errors_of({"search_results": [{"title": 1, "body": "b", "result_metadata": {"score": "high"}}]})
    assert sorted(wrong, key=str) == [
        {"message": "must be number", "path": "/search_results/0/result_metadata/score"},
        {"message": "must be string", "path": "/search_results/0/title"},
    ]
    assert errors_of({"search_results": [{}]}) == [
        {"message": "must have required property 'title'", "path": "/search_results/0"},
        {"message": "must have required property 'body'", "path": "/search_results/0"},
    ]
    many = errors_of({"search_results": [{} for _ in range(20)]})
    assert len(many) == 10


@pytest.mark.parametrize(
    "server, header, value",
    [
        (ServerSearch(url="https://s.example/q"), "Authorization", None),
        (
            ServerSearch(url="https://s.example/q", auth_type="basic", username="wa", password=Secret("pw:1")),
            "Authorization",
            "Basic " + base64.b64encode(b"wa:pw:1").decode(),
        ),
        (
            ServerSearch(url="https://s.example/q", auth_type="apikey", apikey=Secret("k1"), apikey_header="X-Key"),
            "X-Key",
            "k1",
        ),
        (ServerSearch(url="https://s.example/q", auth_type="bearer", token=Secret("t1")), "Authorization", "Bearer t1"),
    ],
)
def test_remote_source_sends_each_credential_kind(server: ServerSearch, header: str, value: str | None) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"search_results": [{"title": "t", "body": "b", "highlight": {"body": []}}]})

    source = RemoteSource(SearchConfig(type="server", server=server), transport=httpx.MockTransport(handler))
    results = source.search("q", SCOPE)
    assert results[0].title == "t" and results[0].highlight_body == ()
    assert seen[0].headers.get(header) == value
    assert json.loads(seen[0].content) == {"query": "q", "metadata": {}}
    source.close()


def test_remote_errors_never_echo_the_answer_or_secrets() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(503, text="token=secret-xyz down"))
    server = ServerSearch(url="https://s.example/q", auth_type="bearer", token=Secret("secret-xyz"))
    with pytest.raises(SearchServiceError) as info:
        RemoteSource(SearchConfig(type="server", server=server), transport=transport).search("q", SCOPE)
    assert "secret-xyz" not in str(info.value.to_json()) and info.value.details["status"] == 503


def test_fake_source_records_and_fails() -> None:
    fake = FakeSource([{"title": "t", "body": "b"}])
    assert [r.title for r in fake.search("q", SCOPE)] == ["t"] and fake.queries == ["q"]
    with pytest.raises(BackendUnavailable):
        FakeSource(error=BackendUnavailable("down")).search("q", SCOPE)


def test_a_follow_up_reads_the_option_entry_its_rewrite_asks_about(tmp_path: Any) -> None:
    """A follow-up ("And only the headers?") names the page only in its rewrite ("… — curl"): the option entry is
    matched with the rewrite, as the search is; the steps that read the message as asked get the message."""
    from assistant_bridge.conversation.sources import BuiltinSource
    from tests.conftest import make_services, make_settings

    svc = make_services(make_settings(tmp_path))
    seen: dict[str, str] = {}
    for step in ("with_code_names", "with_opening", "with_option_entry"):
        setattr(svc, step, lambda text, hits, *a, _step=step, **k: seen.setdefault(_step, text) and hits)
    source = BuiltinSource(svc, SearchConfig(metadata={"mode": "lexical", "limit": 10}))
    message = "And only the headers?"
    source.hits(f"{message} — curl", Scope(principal=Principal("admin", admin=True)), (message, 0.5))
    assert seen == {"with_code_names": message, "with_opening": message, "with_option_entry": f"{message} — curl"}


def test_the_built_in_source_measures_an_asked_option_on_the_pages_its_results_come_from(tmp_path: Any) -> None:
    """The page a result comes from, by its document id, title and language; a source without the documents
    cannot tell."""
    from assistant_bridge.conversation.sources import BuiltinSource
    from assistant_bridge.domain import Ownership
    from tests.conftest import make_services, make_settings

    svc = make_services(make_settings(tmp_path), dim=1024)
    page = "-I, --head: Fetch the headers only!\n\n-o, --output FILE: Write to FILE instead of stdout."
    svc.ingestor.ingest_text(page, title="curl(1): transfer a URL", ownership=Ownership())
    source = BuiltinSource(svc, SearchConfig(metadata={"mode": "lexical", "limit": 10}))
    results = source.search("curl headers", Scope(principal=Principal("admin", admin=True)))
    found = source.option_words("Which curl option fetches the headers only?", results)
    assert results and found is not None and found.share > 0.9 and found.unknown == 0 and found.found
    missing = source.option_words("Which curl option sends SMS messages?", results)
    assert missing is not None and missing.share == 0.0 and missing.unknown == 3 and missing.missing
    assert FakeSource().option_words("Which curl option fetches the headers only?", results) is None
