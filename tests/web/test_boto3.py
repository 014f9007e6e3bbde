"""boto3's ``bedrock-agent-runtime`` client, unmodified, against a served instance (gunicorn), signing with
AWS Signature Version 4 against a configured access key pair: ``agentic_retrieve_stream`` (event-stream
framing), ``retrieve``, ``get_document_content``, ``retrieve_and_generate`` and
``retrieve_and_generate_stream`` succeed and every event parses against botocore's installed service model;
a wrongly signed, replayed, stale or other-region request is an ``AccessDeniedException``; a request the
model allows is never a bare 400. botocore itself parses every response here, so any drift from its
service model fails these tests."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC
from typing import Any

import httpx
import pytest

from tests.reliability.served import REPO
from tests.served_process import serve_command, served_process

pytestmark = [pytest.mark.integration, pytest.mark.slow]
boto3 = pytest.importorskip("boto3", reason="the test extra installs boto3")
AKID, SECRET = "AKIDASSISTANTBRIDGE1", "secret-access-key-for-tests-0001"
ADMIN = "admin-key-000000001"
DOC = (
    "Reset your password",
    "To reset your password open the self-service portal and choose Forgot password. "
    "A verification code is sent to your phone by SMS.",
)
QUESTION = "How do I reset my password?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[tuple[str, str]]:
    work = tmp_path_factory.mktemp("boto3")
    config = {
        "backend": {"kind": "memory"},
        "embedder": {"kind": "hashing"},
        "auth": {
            "keys": [
                {"kind": "sigv4", "username": AKID, "key": SECRET, "user_id": "aws-app"},
                {"key": ADMIN, "user_id": "admin", "admin": True},
            ]
        },
    }
    cmd, base = serve_command(work, config)
    with served_process(cmd, work / "serve.log", base + "/healthz", timeout=240, cwd=REPO):
        resp = httpx.post(
            base + "/v1/documents",
            json={"title": DOC[0], "text": DOC[1], "visibility": "public"},
            headers={"X-API-Key": ADMIN},
            timeout=60,
        )
        assert resp.status_code == 201, resp.text
        yield base, resp.json()["document"]["id"]


def _client(base: str, *, secret: str = SECRET, region: str = "us-east-1") -> Any:
    from botocore.config import Config

    return boto3.client(
        "bedrock-agent-runtime",
        endpoint_url=base,
        region_name=region,
        aws_access_key_id=AKID,
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}),
    )


def _agentic(client: Any, **over: Any) -> Any:
    return client.agentic_retrieve_stream(
        messages=[{"role": "user", "content": {"text": QUESTION}}],
        retrievers=[{"configuration": {"knowledgeBase": {"knowledgeBaseId": "DEFAULTKB0"}}}],
        agenticRetrieveConfiguration={"maxAgentIteration": 1},
        generateResponse=True,
        **over,
    )


def test_agentic_retrieve_stream(served: tuple[str, str]) -> None:
    events = list(
        _agentic(_client(served[0]), retrievalInstructionConfiguration={"retrievalInstructionId": "abc"})["stream"]
    )
    names = [next(iter(e)) for e in events]
    assert names[-1] == "result" and "traceEvent" in names and "responseEvent" in names
    result = events[-1]["result"]
    assert "reset your password" in result["generatedResponse"]["answer"].lower()
    assert result["results"][0]["content"]["text"].startswith("To reset")
    trace = next(e["traceEvent"] for e in events if "traceEvent" in e)
    assert trace["id"] and trace["attributes"]["step"] and trace["timestamp"]


def test_retrieve_and_get_document_content(served: tuple[str, str]) -> None:
    client = _client(served[0])
    out = client.retrieve(
        knowledgeBaseId="DEFAULTKB0",
        retrievalQuery={"text": QUESTION},
        retrievalConfiguration={
            "vectorSearchConfiguration": {
                "numberOfResults": 3,
                "filter": {"equals": {"key": "language", "value": "en"}},
            }
        },
    )
    first = out["retrievalResults"][0]
    assert first["content"]["text"].startswith("To reset") and first["documentId"] == served[1]
    assert first["location"]["type"] == "CUSTOM" and first["score"] > 0
    content = client.get_document_content(
        knowledgeBaseId="DEFAULTKB0", dataSourceId="default", documentId=first["documentId"]
    )
    with urllib.request.urlopen(content["presignedUrl"]) as fetched:  # a data: URL, no second request
        assert fetched.read().decode() == DOC[1]
    assert content["mimeType"] == "text/plain" and content["documentContentLength"] == len(DOC[1])
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.retrieve(knowledgeBaseId="UNKNOWNKB1", retrievalQuery={"text": QUESTION})


def test_retrieve_and_generate_and_its_stream(served: tuple[str, str]) -> None:
    client = _client(served[0])
    config = {
        "type": "KNOWLEDGE_BASE",
        "knowledgeBaseConfiguration": {"knowledgeBaseId": "DEFAULTKB0", "modelArn": "anthropic.claude-v2"},
    }
    out = client.retrieve_and_generate(input={"text": QUESTION}, retrieveAndGenerateConfiguration=config)
    assert "reset your password" in out["output"]["text"].lower() and out["sessionId"]
    cited = out["citations"][0]
    assert cited["retrievedReferences"][0]["content"]["text"].startswith("To reset")
    assert cited["generatedResponsePart"]["textResponsePart"]["text"]
    stream = client.retrieve_and_generate_stream(
        input={"text": QUESTION}, retrieveAndGenerateConfiguration=config, sessionId="session-42"
    )
    assert stream["sessionId"] == "session-42"
    events = list(stream["stream"])
    text = "".join(e["output"]["text"] for e in events if "output" in e)
    assert text == out["output"]["text"] and any("citation" in e for e in events)


def test_wrong_signatures_are_access_denied(served: tuple[str, str]) -> None:
    base = served[0]
    for client in (_client(base, secret="not-the-secret-000000"), _client(base, region="eu-west-1")):
        with pytest.raises(client.exceptions.AccessDeniedException):
            client.retrieve(knowledgeBaseId="DEFAULTKB0", retrievalQuery={"text": QUESTION})
        with pytest.raises(client.exceptions.AccessDeniedException):
            list(_agentic(client)["stream"])


def test_a_replayed_or_stale_request_is_access_denied(served: tuple[str, str]) -> None:
    from datetime import datetime, timedelta

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    base = served[0]
    url = base + "/knowledgebases/DEFAULTKB0/retrieve"
    body = json.dumps({"retrievalQuery": {"text": QUESTION}}).encode()

    def signed(when: datetime | None = None) -> dict[str, str]:
        from unittest import mock

        req = AWSRequest("POST", url, data=body, headers={"Content-Type": "application/json"})
        auth = SigV4Auth(Credentials(AKID, SECRET), "bedrock", "us-east-1")
        with mock.patch("botocore.auth.get_current_datetime", return_value=when or datetime.now(UTC)):
            auth.add_auth(req)
        return dict(req.headers.items())

    headers = signed()
    assert httpx.post(url, content=body, headers=headers).status_code == 200
    again = httpx.post(url, content=body, headers=headers)
    assert again.status_code == 403 and again.headers["x-amzn-ErrorType"] == "AccessDeniedException"
    assert "already received" in again.json()["message"]
    stale = httpx.post(url, content=body, headers=signed(datetime.now(UTC) - timedelta(minutes=20)))
    assert stale.status_code == 403 and "clock" in stale.json()["message"]
    tampered = httpx.post(url, content=body.replace(b"password", b"passport"), headers=signed())
    assert tampered.status_code == 403 and SECRET not in tampered.text
