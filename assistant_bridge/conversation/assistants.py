"""The assistants and environments the ``/message`` API serves, parsed from the settings key ``assistants``.

Each assistant has a search source (the built-in backend, a remote custom search server, or the client),
conversational search options, user-facing messages and a generator. An environment may override any of
those tables; :meth:`AssistantsConfig.get` resolves one ``(assistant, environment)`` pair into a frozen
:class:`Assistant`. Invariant: everything here is checked when the settings load, so a bad table stops the
service at start-up with a :class:`~assistant_bridge.errors.ConfigurationError` naming the key, and a request
can only fail with :class:`~assistant_bridge.errors.NotFound` (unknown ids).

Without an ``assistants`` key the embedded default applies (:data:`DEFAULT_ASSISTANTS`): assistant
``default`` searching the built-in backend, and assistant ``client-side`` that hands the search to the
client (spec §A.2), each with one environment ``default``. A configured ``assistants`` table replaces the
default entirely. See ``docs/message-api.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from assistant_bridge.conversation.memory import MemoryLimits
from assistant_bridge.errors import ConfigurationError, FilterSyntaxError, NotFound
from assistant_bridge.generators.options import generator_table
from assistant_bridge.safety.hap import HapSettings
from assistant_bridge.settings import Secret, Settings, coerce, parse_json

NO_RESULT_MESSAGE = (
    "I searched my knowledge base for information that might address your query, but did not find anything "
    "useful to share."
)
ERROR_MESSAGE = (
    "I might have information that could help address your query, but am unable to search my knowledge base "
    "at the moment."
)
IDK_MESSAGE = (
    "I'm not confident I can answer that from my knowledge base. Could you rephrase the question or add a detail?"
)
HAP_INPUT_MESSAGE = (
    "I can't respond to that message because it may contain hateful, abusive or profane language. Could you "
    "rephrase it?"
)
HAP_OUTPUT_MESSAGE = (
    "I found information about this, but I can't share the answer because it may contain hateful, abusive or "
    "profane language."
)
THANKS_MESSAGE = "You're welcome! Is there anything else you would like to know?"
GOODBYE_MESSAGE = "Goodbye! Come back whenever you have a question."
GREETING_MESSAGE = "Hello! What would you like to know?"
ACKNOWLEDGEMENT_MESSAGE = "Is there anything else you would like to know?"
NO_QUESTION_MESSAGE = "I didn't find a question in your message. What would you like to know?"
CITATIONS_TITLE = "How do we know?"
DISCLAIMER = "This answer was generated from your documents and may be incomplete; check the cited sources."
# The default messages in the other languages of the sample corpus; a turn uses the language of its question
# (core.language). A message the operator configured is used as written, whatever the language.
TRANSLATIONS: dict[str, dict[str, str]] = {
    NO_RESULT_MESSAGE: {
        "fr": "J'ai cherché dans ma base de connaissances des informations qui pourraient répondre à votre "
        "question, mais je n'ai rien trouvé d'utile à partager.",
        "ja": "ご質問に関係する情報をナレッジベースで検索しましたが、お伝えできる有用な情報は見つかりませんでした。",
    },
    ERROR_MESSAGE: {
        "fr": "J'ai peut-être des informations utiles pour votre question, mais je ne peux pas consulter ma base de "
        "connaissances pour le moment.",
        "ja": "ご質問に役立つ情報があるかもしれませんが、現在ナレッジベースを検索できません。",
    },
    IDK_MESSAGE: {
        "fr": "Je ne suis pas sûr de pouvoir répondre à cette question à partir de ma base de connaissances. "
        "Pourriez-vous la reformuler ou ajouter une précision ?",
        "ja": "ナレッジベースの情報からは自信を持ってお答えできません。質問を言い換えるか、詳しい情報を追加していただけますか。",
    },
    HAP_INPUT_MESSAGE: {
        "fr": "Je ne peux pas répondre à ce message, car il pourrait contenir des propos haineux, injurieux ou "
        "grossiers. Pourriez-vous le reformuler ?",
        "ja": "このメッセージには差別的、攻撃的、または不適切な表現が含まれている可能性があるため、お答えできません。"
        "言い換えていただけますか。",
    },
    HAP_OUTPUT_MESSAGE: {
        "fr": "J'ai trouvé des informations à ce sujet, mais je ne peux pas partager la réponse, car elle pourrait "
        "contenir des propos haineux, injurieux ou grossiers.",
        "ja": "この件に関する情報は見つかりましたが、回答に差別的、攻撃的、または不適切な表現が含まれている可能性が"
        "あるため、お伝えできません。",
    },
    THANKS_MESSAGE: {
        "fr": "Je vous en prie ! Souhaitez-vous savoir autre chose ?",
        "ja": "どういたしまして。ほかに知りたいことはありますか。",
    },
    GOODBYE_MESSAGE: {
        "fr": "Au revoir ! Revenez quand vous avez une question.",
        "ja": "さようなら。また何かあればいつでもどうぞ。",
    },
    GREETING_MESSAGE: {"fr": "Bonjour ! Que souhaitez-vous savoir ?", "ja": "こんにちは。何を知りたいですか。"},
    ACKNOWLEDGEMENT_MESSAGE: {
        "fr": "Souhaitez-vous savoir autre chose ?",
        "ja": "ほかに知りたいことはありますか。",
    },
    NO_QUESTION_MESSAGE: {
        "fr": "Je n'ai pas trouvé de question dans votre message. Que souhaitez-vous savoir ?",
        "ja": "メッセージに質問が見つかりませんでした。何を知りたいですか。",
    },
    CITATIONS_TITLE: {"fr": "Comment le savons-nous ?", "ja": "回答の根拠"},
    DISCLAIMER: {
        "fr": "Cette réponse a été générée à partir de vos documents et peut être incomplète ; vérifiez les "
        "sources citées.",
        "ja": "この回答はお客様のドキュメントから生成されたもので、不完全な場合があります。引用元をご確認ください。",
    },
}
DEFAULT_TTL_SECONDS = 3600


def localized(text: str, language: str) -> str:
    """``text`` in ``language`` when it is one of the default messages and a translation exists."""
    return TRANSLATIONS.get(text, {}).get(language, text)


STREAMING_MODES = ("verify_then_stream", "stream_then_verify")

DEFAULT_ASSISTANTS: dict[str, Any] = {
    "default": {
        "name": "Default",
        "description": "Conversational search over the built-in backend",
        "environments": ["default"],
        "search": {"type": "builtin"},
    },
    "client-side": {
        "name": "Client-side search",
        "description": "Hands each search to the calling client (output.actions) and answers from its results",
        "environments": ["default"],
        "search": {"type": "client"},
    },
}

# settings from environment variables arrive as strings: a key the schema types is read as its type; in the
# tables the schema leaves open (search metadata, generator options) these keys are read as numbers or booleans
_SCHEMA_TYPES: dict[str, Any] = {"boolean": bool, "integer": int, "number": float, "object": dict, "array": list}
_NUMBERS = {
    "timeout_seconds",
    "connect_timeout_seconds",
    "session_ttl_seconds",
    "limit",
    "top_k",
    "size",
    "passage_length",
    "passage_chars",
    "threshold",
    "max_turns",
    "max_bytes",
    "max_history_turns",
}
_BOOLS = {"enabled", "verify_tls"}
_SECRET_KEYS = {"api_key", "apikey", "token", "password"}


@dataclass(frozen=True)
class ServerSearch:
    """A remote custom search server (spec §A.1) and how to authenticate to it."""

    url: str
    auth_type: str = "none"  # none | basic | apikey | bearer
    username: str = ""
    password: Secret | None = None
    apikey: Secret | None = None
    apikey_header: str = "X-API-Key"
    token: Secret | None = None
    timeout_seconds: float = 8.0
    connect_timeout_seconds: float = 3.0
    verify_tls: bool = True
    headers: Mapping[str, Secret] = field(default_factory=dict)  # extra headers; values may be credentials


@dataclass(frozen=True)
class SearchConfig:
    """``type``: ``builtin``, ``server`` or ``client``. ``filter`` is the default filter string; ``metadata``
    goes to the search server or the client as is (the built-in backend reads ``mode``, ``limit``,
    ``passage_length``)."""

    type: str = "builtin"
    filter: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    server: ServerSearch | None = None


@dataclass(frozen=True)
class ConversationalConfig:
    enabled: bool = True
    # the v2 API reference and every official SDK spell it so; IBM's web chat says "conversational_search"
    response_type: str = "conversation_search"
    response_length: str = "moderate"
    threshold_level: str = "less_often"
    citations_title: str = CITATIONS_TITLE
    disclaimer: str = DISCLAIMER
    streaming: str = "verify_then_stream"
    contextual_mode: str = "single_turn"  # or entire_conversation (docs/conversation-and-safety.md)
    query_rewrite: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    hap: HapSettings = field(default_factory=HapSettings)
    memory: MemoryLimits = field(default_factory=MemoryLimits)


@dataclass(frozen=True)
class Messages:
    no_result: str = NO_RESULT_MESSAGE
    error: str = ERROR_MESSAGE
    idk: str = IDK_MESSAGE
    hap_input: str = HAP_INPUT_MESSAGE
    hap_output: str = HAP_OUTPUT_MESSAGE
    thanks: str = THANKS_MESSAGE
    goodbye: str = GOODBYE_MESSAGE
    greeting: str = GREETING_MESSAGE
    acknowledgement: str = ACKNOWLEDGEMENT_MESSAGE
    no_question: str = NO_QUESTION_MESSAGE

    def social(self, kind: str) -> str:
        """The reply to a social message of ``kind`` (:data:`~.rewrite_embedded.SOCIAL_KINDS`)."""
        return str(getattr(self, kind))


@dataclass(frozen=True)
class Assistant:
    """One assistant as seen from one of its environments."""

    id: str
    environment_id: str
    name: str = ""
    search: SearchConfig = field(default_factory=SearchConfig)
    conversational: ConversationalConfig = field(default_factory=ConversationalConfig)
    messages: Messages = field(default_factory=Messages)
    generator: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({"kind": "extractive"}))
    session_ttl_seconds: int = DEFAULT_TTL_SECONDS

    def in_language(self, language: str) -> Assistant:
        """This assistant with its default messages, citations title and disclaimer in ``language``."""
        m, cs = self.messages, self.conversational
        messages = Messages(**{f.name: localized(getattr(m, f.name), language) for f in fields(Messages)})
        conversational = replace(
            cs, citations_title=localized(cs.citations_title, language), disclaimer=localized(cs.disclaimer, language)
        )
        return replace(self, messages=messages, conversational=conversational)


@dataclass(frozen=True)
class AssistantsConfig:
    """Every ``(assistant, environment)`` pair, resolved."""

    pairs: Mapping[tuple[str, str], Assistant]

    def get(self, assistant_id: str, environment_id: str | None = None) -> Assistant:
        """:param environment_id: ``None`` picks the assistant's first environment.
        :raises NotFound: unknown assistant or environment."""
        if environment_id is None:
            for (aid, _eid), assistant in self.pairs.items():
                if aid == assistant_id:
                    return assistant
            raise NotFound(f"unknown assistant {assistant_id[:64]!r}", resource="assistant")
        found = self.pairs.get((assistant_id, environment_id))
        if found is not None:
            return found
        if any(aid == assistant_id for aid, _ in self.pairs):
            raise NotFound(
                f"unknown environment {environment_id[:64]!r} of assistant {assistant_id[:64]!r}",
                resource="environment",
            )
        raise NotFound(f"unknown assistant {assistant_id[:64]!r}", resource="assistant")

    @property
    def ids(self) -> list[tuple[str, str]]:
        return list(self.pairs)


def _typed(node: Any, schema: Mapping[str, Any], where: str, root: Mapping[str, Any]) -> Any:
    """``node`` with every string read as the type the assistants schema gives its key (values from environment
    variables arrive as strings): ``"false"`` is false, ``"2.5"`` a number, a table or a list may be JSON.

    :raises ConfigurationError: naming the key whose string is not of its type.
    """
    while "$ref" in schema:
        schema = root["$defs"][str(schema["$ref"]).rsplit("/", 1)[-1]]
    alternatives = schema.get("oneOf")
    if alternatives:  # environments: a list of ids or a table of overrides
        if isinstance(node, str) and node.lstrip().startswith("{"):
            node = parse_json(node, where)
        want = "object" if isinstance(node, Mapping) else "array"
        schema = next((a for a in alternatives if a.get("type") == want), {})
    kind = schema.get("type")
    if isinstance(node, str) and kind in _SCHEMA_TYPES:
        node = coerce(_SCHEMA_TYPES[kind], node, where)
    if isinstance(node, Mapping):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, value in node.items():
            sub = props.get(key, extra if isinstance(extra, Mapping) else None)
            out[key] = _typed(value, sub, f"{where}.{key}", root) if sub is not None else _untyped(value, key)
        return out
    if isinstance(node, list) and isinstance(schema.get("items"), Mapping):
        return [_typed(v, schema["items"], f"{where}[{i}]", root) for i, v in enumerate(node)]
    return node


def _untyped(node: Any, key: str) -> Any:
    """A value the schema leaves open (search metadata, generator options) passes as given, except a string
    under a key that conventionally holds a number or a boolean and reads as one."""
    if isinstance(node, Mapping):
        return {k: _untyped(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_untyped(v, "") for v in node]
    if isinstance(node, str) and key in _NUMBERS | _BOOLS:
        for tp in (bool,) if key in _BOOLS else (int, float):
            try:
                return coerce(tp, node, key)
            except ConfigurationError:
                pass
    return node


def _raw_table(settings: Settings) -> dict[str, Any]:
    from assistant_bridge.validation import load_schema

    raw = settings.extra.get("assistants")
    if raw is None:
        return copy.deepcopy(DEFAULT_ASSISTANTS)
    if isinstance(raw, str):
        raw = parse_json(raw, "assistants")
    if isinstance(raw, list):  # [[assistants]] with an id each
        table: dict[str, Any] = {}
        for i, entry in enumerate(raw):
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                raise ConfigurationError(f"assistants[{i}] needs an id")
            entry = dict(entry)
            aid = entry.pop("id")
            if aid in table:
                raise ConfigurationError(f"assistants[{i}]: duplicate assistant id {aid!r}")
            table[aid] = entry
        raw = table
    if not isinstance(raw, dict):
        raise ConfigurationError("assistants must be a table of assistants keyed by id")
    schema = load_schema("message_assistants")
    result: dict[str, Any] = _typed(raw, schema, "assistants", schema)
    return result


def _check_schema(table: dict[str, Any]) -> None:
    from assistant_bridge.validation import validator

    errors = sorted(validator("message_assistants").iter_errors(table), key=lambda e: list(e.absolute_path))
    if errors:
        from jsonschema.exceptions import best_match

        err = best_match(errors)
        where = "assistants" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        raise ConfigurationError(f"{where}: {err.message}"[:400])


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) and key not in ("metadata", "generator"):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _server(data: Mapping[str, Any], where: str) -> ServerSearch:
    if "url" not in data:
        raise ConfigurationError(f"{where}.url is required for a search server")
    auth = data.get("auth_type") or ("none" if not any(k in data for k in ("password", "apikey", "token")) else "")
    if not auth:
        raise ConfigurationError(f"{where}.auth_type must be set (none, basic, apikey or bearer) with credentials")
    need = {"basic": ("username", "password"), "apikey": ("apikey",), "bearer": ("token",), "none": ()}[auth]
    for key in need:
        if not data.get(key):
            raise ConfigurationError(f"{where}.{key} is required when auth_type is {auth}")

    def secret(key: str) -> Secret | None:
        return Secret(str(data[key])) if data.get(key) else None

    return ServerSearch(
        url=data["url"],
        auth_type=auth,
        username=data.get("username", ""),
        password=secret("password"),
        apikey=secret("apikey"),
        apikey_header=data.get("apikey_header", "X-API-Key"),
        token=secret("token"),
        timeout_seconds=float(data.get("timeout_seconds", 8.0)),
        connect_timeout_seconds=float(data.get("connect_timeout_seconds", 3.0)),
        verify_tls=bool(data.get("verify_tls", True)),
        headers=MappingProxyType({k: Secret(v) for k, v in data.get("headers", {}).items()}),
    )


def _builtin_metadata(meta: Mapping[str, Any], settings: Settings, where: str) -> None:
    mode = meta.get("mode")
    if mode is not None and mode not in ("lexical", "dense", "hybrid"):
        raise ConfigurationError(f"{where}.metadata.mode must be lexical, dense or hybrid")
    for key, hi in (("limit", settings.search.max_limit), ("passage_length", 100_000)):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi):
            raise ConfigurationError(f"{where}.metadata.{key} must be an integer from 1 to {hi}")


def _search(data: Mapping[str, Any], settings: Settings, where: str) -> SearchConfig:
    kind = data.get("type", "builtin")
    filt = data.get("filter") or None
    meta = dict(data.get("metadata") or {})
    if kind == "builtin":
        _builtin_metadata(meta, settings, where)
        if filt:
            from assistant_bridge.core.filters import parse_filter

            try:
                parse_filter(filt)
            except FilterSyntaxError as exc:
                raise ConfigurationError(f"{where}.filter: {exc.message}") from None
    server = None
    if kind == "server":
        if "server" not in data:
            raise ConfigurationError(f"{where}.server is required when search.type is server")
        server = _server(data["server"], f"{where}.server")
    elif "server" in data:
        raise ConfigurationError(f"{where}.server is only allowed when search.type is server")
    return SearchConfig(type=kind, filter=filt, metadata=MappingProxyType(meta), server=server)


def _query_rewrite(data: Mapping[str, Any], generator: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``query_rewrite``: ``method`` (``auto``: an LLM when one is configured here or the generator is an
    OpenAI-compatible one, else the embedded rewriter; ``llm``; ``embedded``), ``base_url``, ``model``,
    ``api_key``, ``timeout_seconds``, ``max_history_turns``, ``topic_for_short_questions``,
    ``as_asked_weight`` (the schema checks the types and ranges)."""
    out = {k: Secret(str(v)) if k in _SECRET_KEYS and v else v for k, v in data.items()}
    method = out.setdefault("method", "auto")
    if (
        method == "llm"
        and not (out.get("base_url") and out.get("model"))
        and generator.get("kind") not in ("openai", "openai-compatible")
    ):
        raise ConfigurationError(f"{where}.query_rewrite: method llm needs base_url and model (or an openai generator)")
    return MappingProxyType(out)


def _memory(data: Mapping[str, Any], where: str) -> MemoryLimits:
    try:
        return MemoryLimits(**dict(data))
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc.message}") from None


def _resolve(aid: str, eid: str, data: Mapping[str, Any], settings: Settings) -> Assistant:
    where = f"assistants.{aid}" + (f".environments.{eid}" if data.get("_env") else "")
    cs = data.get("conversational_search", {})
    msgs = data.get("messages", {})
    gen = generator_table(data.get("generator"), f"{where}.generator")
    return Assistant(
        id=aid,
        environment_id=eid,
        name=data.get("name", aid),
        search=_search(data.get("search", {}), settings, f"{where}.search"),
        conversational=ConversationalConfig(
            enabled=cs.get("enabled", True),
            response_type=cs.get("response_type", "conversation_search"),
            response_length=cs.get("response_length", {}).get("option", "moderate"),
            threshold_level=cs.get("search_confidence", {}).get("threshold", "less_often"),
            citations_title=cs.get("citations_title", CITATIONS_TITLE),
            disclaimer=cs.get("disclaimer", DISCLAIMER),
            streaming=cs.get("streaming", "verify_then_stream"),
            contextual_mode=cs.get("contextual_mode", "single_turn"),
            query_rewrite=_query_rewrite(cs.get("query_rewrite") or {}, gen, f"{where}.conversational_search"),
            hap=HapSettings.from_mapping(cs.get("hap_filtering"), f"{where}.conversational_search.hap_filtering"),
            memory=_memory(cs.get("memory") or {}, f"{where}.conversational_search.memory"),
        ),
        messages=Messages(**{k: msgs[k] for k in (f.name for f in fields(Messages)) if k in msgs}),
        generator=MappingProxyType(gen),
        session_ttl_seconds=int(data.get("session_ttl_seconds", DEFAULT_TTL_SECONDS)),
    )


def load_assistants(settings: Settings) -> AssistantsConfig:
    """Parse and check ``settings.extra["assistants"]`` (or the embedded default).

    :raises ConfigurationError: naming the key that is wrong.
    """
    table = _raw_table(settings)
    _check_schema(table)
    pairs: dict[tuple[str, str], Assistant] = {}
    for aid, entry in table.items():
        envs = entry.get("environments", ["default"])
        env_items = [(e, {}) for e in envs] if isinstance(envs, list) else list(envs.items())
        base = {k: v for k, v in entry.items() if k != "environments"}
        for eid, over in env_items:
            merged = _merge(base, over or {})
            if over:
                merged["_env"] = True
            pairs[(aid, eid)] = _resolve(aid, eid, merged, settings)
    return AssistantsConfig(pairs=MappingProxyType(pairs))
