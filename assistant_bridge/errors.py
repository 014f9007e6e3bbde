"""The one error tree of assistant-bridge.

Every failure the service knows about is one of these. Backends and clients map their vendor's errors to
this tree in one function each; the HTTP layer maps the tree to status codes and JSON bodies
(``assistant_bridge.web.errors``) and to the assistant's user-facing messages.

::

    BridgeError
    ├── RequestError                 4xx: the caller sent something we cannot use
    │   ├── ValidationFailed         400: body does not match its schema (carries the JSON path)
    │   ├── FilterSyntaxError        400: the filter string does not parse / names an unknown field
    │   ├── PayloadTooLarge          413: body over the configured limit
    │   ├── UnsupportedMediaType     415: file type we cannot ingest
    │   ├── DocumentParseError       422: a supported file type that is corrupt
    │   ├── AuthenticationRequired   401: missing or wrong credentials
    │   │   └── SignatureRejected    403: a bad AWS Signature Version 4 (AccessDeniedException)
    │   ├── Forbidden                403: credentials valid, action not allowed
    │   ├── NotFound                 404: unknown (or invisible to the caller) id
    │   ├── DocumentProcessing       409: the document is still being ingested (delete or move it after)
    │   └── RateLimited              429
    ├── ServiceBusy                  503: every stream slot of the worker is taken (Retry-After)
    ├── ConfigurationError           the settings are wrong: raised at start-up, never per request
    ├── ModelLoadError               503: a model file is missing or corrupt (raised at start-up; /readyz false)
    └── DependencyError              503: something outside us failed
        ├── BackendUnavailable       search backend unreachable / timed out / failed
        ├── SearchServiceError       a remote custom search server failed or answered garbage
        ├── GeneratorError           the LLM endpoint failed, timed out or answered garbage
        ├── EmbedderError            the embedding model/endpoint failed
        └── InsufficientStorage      507: the data directory is full; nothing was written
"""

from __future__ import annotations

from typing import Any, ClassVar


class BridgeError(Exception):
    """Root of every error this package raises on purpose. A subclass names its HTTP status and error code in
    its header (``class NotFound(RequestError, status=404, code="not_found")``); what it leaves out it inherits."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"

    def __init_subclass__(cls, *, status: int | None = None, code: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status = status
        if code is not None:
            cls.code = code

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": {"code": self.code, "message": self.message}}
        if self.details:
            body["error"]["details"] = self.details
        return body


class RequestError(BridgeError, status=400, code="bad_request"):
    """4xx: the caller sent something we cannot use."""


class ValidationFailed(RequestError, code="validation_error"):
    """The body does not match its schema (``details`` carry the JSON path)."""


class FilterSyntaxError(RequestError, code="invalid_filter"):
    """The filter does not parse, or names an unknown field."""


class PayloadTooLarge(RequestError, status=413, code="payload_too_large"):
    """The body is over the configured limit."""


class TooManyChunks(PayloadTooLarge, code="too_many_chunks"):
    """A document that would make more chunks than ``ingest.max_chunks_per_document``; nothing is indexed."""


class UnsupportedMediaType(RequestError, status=415, code="unsupported_media_type"):
    """A file type that cannot be ingested."""


class DocumentParseError(RequestError, status=422, code="document_unreadable"):
    """A file of a supported type that is corrupt."""


class NoContent(DocumentParseError, code="document_has_no_text"):
    """The file was read, and holds no text to index: empty, whitespace, a page that is only navigation, a
    PDF without a text layer. Not a failure of the file; the CLI reports such files apart."""


class AuthenticationRequired(RequestError, status=401, code="unauthorized"):
    """Missing or wrong credentials."""


class SignatureRejected(AuthenticationRequired, status=403, code="access_denied"):
    """A request signed with AWS Signature Version 4 whose signature, scope, clock or freshness is wrong:
    403 (the AWS SDKs' ``AccessDeniedException``), counted as a failed login."""


class Forbidden(RequestError, status=403, code="forbidden"):
    """Valid credentials, for an action they do not allow."""


class NotFound(RequestError, status=404, code="not_found"):
    """An unknown id, or one the caller may not see (the two are not told apart)."""


class DocumentProcessing(RequestError, status=409, code="document_processing"):
    """The document is still being ingested (status ``processing``): it cannot be deleted or moved until its
    ingestion ends, or its job is cancelled."""


class RateLimited(RequestError, status=429, code="rate_limited"):
    """The caller's key is over its requests per minute."""


class ServiceBusy(BridgeError, status=503, code="too_many_streams"):
    """Every stream slot of this worker is taken (``server.max_streams``); try again after ``retry_after``
    seconds. Short requests are still served."""


class ConfigurationError(BridgeError, code="configuration_error"):
    """The settings are wrong: raised at start-up, never per request."""


class ModelLoadError(BridgeError, status=503, code="model_load_error"):
    """A model file is missing or corrupt: raised at start-up, reported per request (and by ``/readyz``) only
    by the features that need the model."""


class DependencyError(BridgeError, status=503, code="dependency_unavailable"):
    """Something outside the service failed."""


class BackendUnavailable(DependencyError, code="backend_unavailable"):
    """The search backend is unreachable, timed out or failed."""


class SearchServiceError(DependencyError, code="search_service_error"):
    """A remote custom search server failed or answered garbage."""


class GeneratorError(DependencyError, code="generator_error"):
    """The LLM endpoint failed, timed out or answered garbage."""


class EmbedderError(DependencyError, code="embedder_error"):
    """The embedding model or endpoint failed."""


class InsufficientStorage(DependencyError, status=507, code="insufficient_storage"):
    """The data directory is full; nothing was written."""
