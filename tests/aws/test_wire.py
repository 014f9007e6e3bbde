"""The AWS wire formats on their own: event-stream messages that botocore's own decoder reads back, and
SigV4 verification against botocore's own signer, with every way a signature can be wrong."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from assistant_bridge.aws import eventstream, sigv4
from tests.conftest import make_services, make_settings

pytestmark = pytest.mark.unit
botocore = pytest.importorskip("botocore", reason="the test extra installs boto3")
NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
URL = "http://127.0.0.1:8080/knowledgebases/DEFAULTKB0/retrieve"
BODY = b'{"retrievalQuery": {"text": "vpn"}}'


def test_botocore_decodes_the_messages() -> None:
    from botocore.eventstream import EventStreamBuffer

    buf = EventStreamBuffer()
    buf.add_data(
        eventstream.event("traceEvent", {"id": "a", "attributes": {"message": "é ✓"}})
        + eventstream.exception("validationException", "bad field")
    )
    first, second = list(buf)
    assert first.headers == {":event-type": "traceEvent", ":message-type": "event", ":content-type": "application/json"}
    assert json.loads(first.payload) == {"id": "a", "attributes": {"message": "é ✓"}}
    assert second.headers[":exception-type"] == "validationException" and second.headers[":message-type"] == "exception"
    with pytest.raises(ValueError):
        eventstream.encode_message({"x" * 300: "v"}, b"")


def _signed(
    body: bytes = BODY,
    *,
    when: datetime = NOW,
    region: str = "us-east-1",
    service: str = "bedrock",
    secret: str = "secret-1",
) -> dict[str, str]:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    req = AWSRequest("POST", URL, data=body, headers={"Content-Type": "application/json"})
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        SigV4Auth(Credentials("AKID", secret), service, region).add_auth(req)
    return {**{k.lower(): v for k, v in req.headers.items()}, "host": "127.0.0.1:8080"}


def _verify(
    headers: dict[str, str], body: bytes = BODY, now: datetime = NOW, path: str = "/knowledgebases/DEFAULTKB0/retrieve"
) -> None:
    sigv4.verify(
        sigv4.parse(headers["authorization"]),
        secret="secret-1",
        method="POST",
        raw_path=path,
        raw_query="",
        headers=headers,
        body=body,
        now=now,
        region="us-east-1",
        service="bedrock",
    )


def test_a_botocore_signature_verifies() -> None:
    _verify(_signed())


@pytest.mark.parametrize(
    ("headers", "kw", "why"),
    [
        (lambda: _signed(secret="other"), {}, "signature does not match"),
        (lambda: _signed(region="eu-west-1"), {}, "region"),
        (lambda: _signed(service="s3"), {}, "service"),
        (lambda: _signed(when=NOW - timedelta(minutes=6)), {}, "clock"),
        (lambda: _signed(), {"body": BODY + b" "}, "signature does not match"),  # the hash is the body's
        (lambda: _signed(), {"path": "/knowledgebases/OTHERKB001/retrieve"}, "signature does not match"),
        (lambda: {k: v for k, v in _signed().items() if k != "x-amz-date"}, {}, "X-Amz-Date"),
    ],
)
def test_wrong_signatures_say_why(headers: Any, kw: dict[str, Any], why: str) -> None:
    with pytest.raises(sigv4.SignatureError, match=why) as caught:
        _verify(headers(), **kw)
    assert "secret-1" not in str(caught.value)


@pytest.mark.parametrize(
    "value",
    [
        "AWS4-HMAC-SHA256 nonsense",
        "AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=zz",
        "AWS4-HMAC-SHA256 " + "x" * 5000,
    ],
)
def test_malformed_headers_are_refused(value: str) -> None:
    with pytest.raises(sigv4.SignatureError):
        sigv4.parse(value)


def test_a_signed_request_on_an_anonymous_install_is_served_in_the_event_stream_framing(tmp_path: Path) -> None:
    from botocore.eventstream import EventStreamBuffer

    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path)
    app = create_app(s, make_services(s))
    with app.test_client() as c:
        c.post("/v1/documents", json={"title": "VPN", "text": "Install the VPN client, then sign in."})
        body = json.dumps(
            {
                "messages": [{"role": "user", "content": {"text": "How do I install the VPN?"}}],
                "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "DEFAULTKB0"}}}],
                "generateResponse": False,
            }
        )
        headers = {
            "Authorization": "AWS4-HMAC-SHA256 Credential=AKIDANY/20261201/us-east-1/bedrock/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64
        }
        resp = c.post("/agenticRetrieveStream", data=body, content_type="application/json", headers=headers)
        assert resp.status_code == 200 and resp.mimetype == eventstream.MIMETYPE
        buf = EventStreamBuffer()
        buf.add_data(resp.get_data())
        names = [m.headers[":event-type"] for m in buf]
        assert names[-1] == "result" and "traceEvent" in names
