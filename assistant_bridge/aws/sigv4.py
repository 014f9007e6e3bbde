"""Verification of AWS Signature Version 4 (the ``Authorization: AWS4-HMAC-SHA256 …`` header the AWS SDKs
sign every request with). Pure functions over the request's parts, no I/O: the web layer passes the raw
path, query, headers and body, the configured secret and the clock (the web layer also refuses a signature
it has seen before: ``web.ratelimit.ReplayGuard``).

The signature is recomputed as the SDKs compute it (canonical request → string to sign → HMAC-SHA256 with
the key derived from the secret, the date, the region and the service; the path normalised and encoded
once more, as for every service but S3) and compared in constant time. A request is refused when its
credential scope names another region or service, when its ``X-Amz-Date`` is more than
:data:`CLOCK_SKEW_SECONDS` away from now or does not match the scope's date, when a header it claims to
sign is missing, or when the signature differs. Secrets never appear in an error or a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote

ALGORITHM = "AWS4-HMAC-SHA256"
CLOCK_SKEW_SECONDS = 300  # the AWS services' own window
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<akid>[^/\s,]{1,128})/(?P<date>\d{8})/(?P<region>[a-z0-9-]{1,32})/"
    r"(?P<service>[a-z0-9-]{1,64})/aws4_request\s*,\s*SignedHeaders=(?P<headers>[a-z0-9;._-]{1,1024})\s*,"
    r"\s*Signature=(?P<signature>[0-9a-f]{64})\s*$"
)


class SignatureError(Exception):
    """The request is not validly signed; the message says why without any secret."""


@dataclass(frozen=True)
class Signed:
    """What the ``Authorization`` header of a signed request claims."""

    access_key_id: str
    date: str
    region: str
    service: str
    signed_headers: tuple[str, ...]
    signature: str


def is_signed(authorization: str) -> bool:
    return authorization[: len(ALGORITHM) + 1] == ALGORITHM + " "


def parse(authorization: str) -> Signed:
    """:raises SignatureError: for a header that is not a well-formed SigV4 authorization."""
    m = _AUTH.match(authorization)
    if m is None:
        raise SignatureError("the Authorization header is not a valid AWS Signature Version 4")
    headers = tuple(m["headers"].split(";"))
    if "host" not in headers or headers != tuple(sorted(headers)):
        raise SignatureError("SignedHeaders must be sorted and include host")
    return Signed(m["akid"], m["date"], m["region"], m["service"], headers, m["signature"])


def canonical_path(raw_path: str) -> str:
    """The path as the SDKs put it in the canonical request: dot segments removed, encoded once more."""
    path = posixpath.normpath(raw_path) if raw_path else "/"
    if raw_path.endswith("/") and path != "/":
        path += "/"
    return quote(path if path.startswith("/") else "/" + path, safe="/~")


def canonical_query(raw_query: str) -> str:
    pairs = []
    for part in raw_query.split("&") if raw_query else []:
        key, _, value = part.partition("=")
        pairs.append((quote(unquote(key), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def canonical_request(
    method: str,
    raw_path: str,
    raw_query: str,
    headers: Mapping[str, str],
    signed_headers: tuple[str, ...],
    payload_hash: str,
) -> str:
    """:raises SignatureError: when a signed header is missing from the request."""
    lines = []
    for name in signed_headers:
        if name not in headers:
            raise SignatureError(f"the signed header {name!r} is missing from the request")
        lines.append(f"{name}:{' '.join(headers[name].split())}\n")
    return "\n".join(
        [
            method.upper(),
            canonical_path(raw_path),
            canonical_query(raw_query),
            "".join(lines),
            ";".join(signed_headers),
            payload_hash,
        ]
    )


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode("utf-8")
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    return key


def verify(
    signed: Signed,
    *,
    secret: str,
    method: str,
    raw_path: str,
    raw_query: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime,
    region: str,
    service: str,
) -> None:
    """Check a parsed signature against the request it came with.

    :param headers: the request's headers, names in lower case.
    :raises SignatureError: naming what is wrong (scope, clock, a missing header, the signature).
    """
    if signed.service != service:
        raise SignatureError(f"the request is signed for the service {signed.service!r}, not {service!r}")
    if signed.region != region:
        raise SignatureError(f"the request is signed for the region {signed.region!r}, not {region!r}")
    amz_date = headers.get("x-amz-date", "")
    try:
        when = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise SignatureError("X-Amz-Date is missing or not of the form YYYYMMDDTHHMMSSZ") from None
    if amz_date[:8] != signed.date:
        raise SignatureError("X-Amz-Date does not match the date of the credential scope")
    if abs((now - when).total_seconds()) > CLOCK_SKEW_SECONDS:
        raise SignatureError(f"the request was signed more than {CLOCK_SKEW_SECONDS} s away from the server's clock")
    body_hash = hashlib.sha256(body).hexdigest()
    payload_hash = headers.get("x-amz-content-sha256") or body_hash
    if payload_hash not in ("UNSIGNED-PAYLOAD", body_hash):
        raise SignatureError("the body does not match its signed hash")
    canonical = canonical_request(method, raw_path, raw_query, headers, signed.signed_headers, payload_hash)
    scope = f"{signed.date}/{signed.region}/{signed.service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
    expected = hmac.new(
        signing_key(secret, signed.date, signed.region, signed.service), to_sign.encode("utf-8"), hashlib.sha256
    ).hexdigest()
    if not hmac.compare_digest(expected, signed.signature):
        raise SignatureError("the request signature does not match")
