"""Authentication as an assistant configures it for a custom search server: none, HTTP Basic, an API key
in a configurable header, or Bearer. Each credential maps to a :class:`~assistant_bridge.domain.Principal`.
An API key is also taken from ``Authorization`` as watsonx can be set up to send it: ``ApiKey <key>``,
``Bearer <key>``, or Basic with the user name ``apikey``. A 401 carries ``WWW-Authenticate`` (:func:`challenge`).

Anonymous access is allowed only when no credential is configured and ``auth.allow_anonymous`` is on (the
default); the CLI also refuses to listen on a non-loopback address in that case. With ``auth.allow_anonymous``
off and no credential configured, every request that needs a principal is a 401, however the app is served.
A service or admin key may act for an end user through the ``X-End-User-ID`` header (``external_user_id`` is
accepted too); the end user becomes the principal's tenant and its user id.

A browser's ``EventSource`` cannot set headers, so the ``GET`` routes that answer ``text/event-stream``
(marked with :func:`accepts_query_api_key`) also take an API key as the ``api_key`` query parameter, compared
in constant time like the header; every other route ignores that parameter. The header wins when both are
sent. URLs end up in proxy and access logs, so this service redacts ``api_key`` from every line it logs
(:mod:`assistant_bridge.logs`) and callers should prefer the header wherever they can set one.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote

from flask import Request, current_app

from assistant_bridge.aws import sigv4
from assistant_bridge.domain import Principal
from assistant_bridge.errors import AuthenticationRequired, Forbidden, SignatureRejected, ValidationFailed
from assistant_bridge.settings import ApiKey, AuthSettings

END_USER_HEADERS = ("X-End-User-ID", "external_user_id", "External-User-Id")
_END_USER_RE = re.compile(r"^[A-Za-z0-9_.:@\-]{1,128}$")
ANONYMOUS = Principal(user_id="local", admin=True, key_id="anonymous")
QUERY_API_KEY = "api_key"
_QUERY_KEY_MARK = "accepts_query_api_key"
View = TypeVar("View", bound=Callable[..., Any])


def accepts_query_api_key(view: View) -> View:
    """Mark a ``GET`` view that answers ``text/event-stream``: it also accepts the API key as the ``api_key``
    query parameter. Put it under the route decorator, so that the marked function is the one registered."""
    setattr(view, _QUERY_KEY_MARK, True)
    return view


def query_api_key_allowed(request: Request) -> bool:
    """Whether this request's route takes the API key from the query string (a marked view, method GET)."""
    if request.method != "GET" or request.endpoint is None:
        return False
    view = current_app.view_functions.get(request.endpoint)
    return bool(getattr(view, _QUERY_KEY_MARK, False))


def anonymous_allowed(auth: AuthSettings) -> bool:
    """Whether a request without credentials is served: no credential is configured and
    ``auth.allow_anonymous`` is on."""
    return not auth.keys and auth.allow_anonymous


def _match(secret: str, candidate: str) -> bool:
    return hmac.compare_digest(secret.encode(), candidate.encode())


def _principal(key: ApiKey, index: int) -> Principal:
    # a workspace admin is a member of the workspaces it administers: it reads what it may delete
    workspaces = tuple(dict.fromkeys([*key.workspaces, *key.admin_workspaces]))
    return Principal(
        user_id=key.user_id,
        workspaces=workspaces,
        tenant=key.tenant or None,
        admin=key.admin,
        key_id=f"key{index}",
        admin_workspaces=tuple(key.admin_workspaces),
    )


def identify(request: Request, auth: AuthSettings) -> tuple[Principal, ApiKey | None]:
    """Find the credential of a request.

    :raises AuthenticationRequired: when credentials are configured and none (or a wrong one) is sent, or
        when none are configured and ``auth.allow_anonymous`` is off (no credential can then be right).
    """
    if anonymous_allowed(auth):
        return ANONYMOUS, None  # a SigV4-signed request too: boto3 with any dummy key works on loopback
    header = request.headers.get("Authorization", "")
    if sigv4.is_signed(header):
        return _signed(request, auth, header)
    api_key = _header_or_query_api_key(request, auth, header)
    in_authorization = _api_key_in_authorization(header)
    basic = _basic_pair(header)
    for i, key in enumerate(auth.keys):
        secret = key.key.get()
        if key.kind == "apikey" and any(c and _match(secret, c) for c in (api_key, in_authorization)):
            return _principal(key, i), key
        if key.kind == "bearer" and header[:7].lower() == "bearer " and _match(secret, header[7:].strip()):
            return _principal(key, i), key
        if key.kind == "basic" and basic is not None and _match(key.username, basic[0]) and _match(secret, basic[1]):
            return _principal(key, i), key
    raise AuthenticationRequired("missing or invalid credentials")


def _header_or_query_api_key(request: Request, auth: AuthSettings, authorization: str) -> str:
    """The API key of ``auth.api_key_header``, else of the ``api_key`` query parameter on the routes that take
    it, when no ``Authorization`` header is sent either (a header of any kind wins)."""
    api_key = request.headers.get(auth.api_key_header, "")
    if not api_key and not authorization and query_api_key_allowed(request):
        api_key = request.args.get(QUERY_API_KEY, "")
    return api_key


def _basic_pair(header: str) -> tuple[str, str] | None:
    """``(user, password)`` of an ``Authorization: Basic`` header; None for another scheme or bad base64."""
    if header[:6].lower() != "basic ":
        return None
    try:
        user, _, pwd = base64.b64decode(header[6:].strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return user, pwd


def presented_credential(request: Request, auth: AuthSettings) -> str:
    """What the request offers as a credential, for login throttling: the API key or token, or the Basic
    user name (the password when the user is ``apikey``); "" when it offers none, or a JSON Web Token, whose
    first characters every token shares (throttling by them would lock every Bearer user out)."""
    header = request.headers.get("Authorization", "")
    if header[:6].lower() == "basic ":
        basic = _basic_pair(header)
        if basic is None:
            return header[6:].strip()
        return basic[1] if basic[0].lower() == "apikey" and basic[1] else basic[0]
    if sigv4.is_signed(header):
        try:
            return sigv4.parse(header).access_key_id
        except sigv4.SignatureError:
            return ""
    if header:
        token = header.partition(" ")[2].strip() or header
        return "" if token.startswith("eyJ") else token
    return _header_or_query_api_key(request, auth, header)


def _signed(request: Request, auth: AuthSettings, header: str) -> tuple[Principal, ApiKey]:
    """The principal of a request signed with AWS Signature Version 4 by a key pair of kind ``sigv4``.

    :raises SignatureRejected: an unknown access key id, or a signature that does not verify (scope, clock,
        signed headers, body, signature: the reason is in the message, never a secret).
    """
    try:
        signed = sigv4.parse(header)
        for i, key in enumerate(auth.keys):
            if key.kind == "sigv4" and _match(key.username, signed.access_key_id):
                raw = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or quote(request.path)
                path, _, query = raw.partition("?")
                sigv4.verify(
                    signed,
                    secret=key.key.get(),
                    method=request.method,
                    raw_path=path,
                    raw_query=query,
                    headers={k.lower(): v for k, v in request.headers.items()},
                    body=request.get_data(cache=True),
                    now=datetime.now(UTC),
                    region=auth.aws_region,
                    service=auth.aws_service,
                )
                return _principal(key, i), key
    except sigv4.SignatureError as exc:
        raise SignatureRejected(str(exc)) from None
    raise SignatureRejected("the access key id is not known to this service")


def _api_key_in_authorization(header: str) -> str:
    """An API key sent in the ``Authorization`` header, in the forms an assistant can be set up to send:
    ``ApiKey <key>``, ``Bearer <key>``, or Basic with the user name ``apikey`` (IBM Cloud's convention)."""
    scheme, _, rest = header.partition(" ")
    scheme, rest = scheme.lower(), rest.strip()
    if scheme in ("apikey", "bearer"):
        return rest
    basic = _basic_pair(header)
    return basic[1] if basic is not None and basic[0].lower() == "apikey" else ""


def challenge(auth: AuthSettings) -> str:
    """The ``WWW-Authenticate`` value of a 401 (RFC 9110 §11.6.1): one challenge per scheme configured."""
    kinds = {key.kind for key in auth.keys}
    out = []
    if "basic" in kinds or "apikey" in kinds:
        out.append('Basic realm="assistant-bridge", charset="UTF-8"')
    if "bearer" in kinds or "apikey" in kinds:
        out.append('Bearer realm="assistant-bridge"')
    if "apikey" in kinds:
        out.append(f'ApiKey realm="assistant-bridge", header="{auth.api_key_header}"')
    return ", ".join(out) or 'Bearer realm="assistant-bridge"'


def end_user(request: Request, body_value: str | None = None) -> str | None:
    for name in END_USER_HEADERS:
        value = request.headers.get(name)
        if value:
            break
    else:
        value = body_value
    if value is None:
        return None
    if not _END_USER_RE.match(value):
        raise ValidationFailed("X-End-User-ID must be 1-128 characters of letters, digits, _ . : @ -")
    return value


def acting_for(
    request: Request, principal: Principal, key: ApiKey | None, body_end_user: str | None = None
) -> Principal:
    """``principal`` (found by :func:`identify`), or the end user it acts for (header or body).

    :raises Forbidden: when the credential may not act for end users, or is bound to another tenant.
    """
    user = end_user(request, body_end_user)
    if user is None:
        return principal
    may_act = key is None or key.service or key.admin
    if not may_act:
        raise Forbidden("this credential may not act for end users")
    if principal.tenant is not None and principal.tenant != user:
        raise Forbidden("this credential is bound to another tenant")
    return Principal(user_id=user, workspaces=principal.workspaces, tenant=user, admin=False, key_id=principal.key_id)
