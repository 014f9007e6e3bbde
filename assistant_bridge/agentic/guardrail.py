"""Guardrails for agentic retrieval: denied topics, denied words and regex patterns, action ``BLOCK`` only.

A request names a guardrail with ``policyConfiguration.bedrockGuardrailConfiguration {guardrailId,
guardrailVersion}``; the guardrail is defined in the settings::

    [guardrails.hr.1]                    # guardrailId "hr", version "1" (or "DRAFT")
    blocked_input_message = "Sorry, I can't help with that request."
    blocked_output_message = "Sorry, I can't share that answer."
    denied_words = ["confidential salary"]
    denied_topics = [{name = "Legal advice", phrases = ["sue my employer", "lawsuit"]}]
    regex = [{name = "US SSN", pattern = '\\b\\d{3}-\\d{2}-\\d{4}\\b'}]

The question is checked before anything is retrieved and the answer before any of it is streamed (an answer
is never streamed and then retracted). Matching is case-insensitive on NFKC text; words and phrases match
whole words (any substring for CJK text, which has no spaces). A denied topic is a named list of phrases:
without a model, a topic is recognised by the phrases an operator lists for it.

Invariant: a :class:`Verdict` names the rules that matched but never echoes the matched user text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.settings import coerce, table
from assistant_bridge.text import CJK_CHARS

DEFAULT_BLOCKED_INPUT = "Sorry, this request can't be answered."
DEFAULT_BLOCKED_OUTPUT = "Sorry, the answer to this request can't be shared."
_VERSION = re.compile(r"^(([1-9][0-9]{0,7})|(DRAFT))$")
_ID = re.compile(r"^[a-z0-9]{1,64}$")
_CJK = re.compile(f"[{CJK_CHARS}]")


@dataclass(frozen=True)
class Rule:
    kind: Literal["topic", "word", "regex"]
    name: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Verdict:
    intervened: bool
    rules: tuple[str, ...] = ()  # "topic:Legal advice", "word", "regex:US SSN"

    @property
    def message(self) -> str:
        return "Blocked by " + ", ".join(self.rules) if self.intervened else "No rule matched"


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _phrase(text: str) -> re.Pattern[str]:
    folded = _fold(text).strip()
    if not folded:
        raise ConfigurationError("a guardrail word or phrase is empty")
    body = r"\s+".join(re.escape(w) for w in folded.split())
    if _CJK.search(folded):
        return re.compile(body)
    return re.compile(r"(?<!\w)" + body + r"(?!\w)")


@dataclass(frozen=True)
class Guardrail:
    guardrail_id: str
    version: str
    rules: tuple[Rule, ...]
    blocked_input_message: str = DEFAULT_BLOCKED_INPUT
    blocked_output_message: str = DEFAULT_BLOCKED_OUTPUT

    def check(self, text: str) -> Verdict:
        folded = _fold(text)
        hits: list[str] = []
        for rule in self.rules:
            source = text if rule.kind == "regex" else folded
            if rule.pattern.search(source):
                label = rule.kind if rule.kind == "word" else f"{rule.kind}:{rule.name}"
                if label not in hits:
                    hits.append(label)
        return Verdict(bool(hits), tuple(hits))

    @classmethod
    def from_config(cls, guardrail_id: str, version: str, cfg: Mapping[str, Any]) -> Guardrail:
        """:raises ConfigurationError: on an unknown key, a non-BLOCK action or an invalid pattern."""
        where = f"guardrails.{guardrail_id}.{version}"
        known = {
            "blocked_input_message",
            "blocked_output_message",
            "denied_words",
            "denied_topics",
            "regex",
            "action",
            "description",
        }
        unknown = set(cfg) - known
        if unknown:
            raise ConfigurationError(f"{where}: unknown keys {sorted(unknown)}")
        if not _ID.match(guardrail_id) or not _VERSION.match(version):
            raise ConfigurationError(f"{where}: the id must match ^[a-z0-9]+$ and the version be a number or DRAFT")
        _only_block(cfg.get("action", "BLOCK"), where)
        rules: list[Rule] = []
        for word in coerce(list[str], cfg.get("denied_words", []), f"{where}.denied_words"):
            rules.append(Rule("word", "word", _phrase(word)))
        topics = coerce(list[dict[str, Any]], cfg.get("denied_topics", []), f"{where}.denied_topics")
        for i, topic in enumerate(topics):
            at = f"{where}.denied_topics[{i}]"
            if not topic.get("name") or not topic.get("phrases"):
                raise ConfigurationError(f"{at} needs a name and a list of phrases")
            _only_block(topic.get("action", "BLOCK"), at)
            name = coerce(str, topic["name"], f"{at}.name")
            for phrase in coerce(list[str], topic["phrases"], f"{at}.phrases"):
                rules.append(Rule("topic", name, _phrase(phrase)))
        for i, item in enumerate(coerce(list[dict[str, Any]], cfg.get("regex", []), f"{where}.regex")):
            at = f"{where}.regex[{i}]"
            if not item.get("pattern"):
                raise ConfigurationError(f"{at} needs a pattern")
            _only_block(item.get("action", "BLOCK"), at)
            try:
                pattern = re.compile(coerce(str, item["pattern"], f"{at}.pattern"), re.IGNORECASE)
            except re.error as exc:
                raise ConfigurationError(f"{at}: invalid pattern ({exc})") from None
            rules.append(Rule("regex", coerce(str, item.get("name") or f"pattern {i}", f"{at}.name"), pattern))
        if not rules:
            raise ConfigurationError(f"{where}: a guardrail needs at least one denied word, topic or regex")
        blocked_in = coerce(str | None, cfg.get("blocked_input_message"), f"{where}.blocked_input_message")
        blocked_out = coerce(str | None, cfg.get("blocked_output_message"), f"{where}.blocked_output_message")
        return cls(
            guardrail_id,
            version,
            tuple(rules),
            blocked_in or DEFAULT_BLOCKED_INPUT,
            blocked_out or DEFAULT_BLOCKED_OUTPUT,
        )


def _only_block(action: Any, where: str) -> None:
    if action != "BLOCK":
        raise ConfigurationError(f"{where}: only the BLOCK action is supported, not {action!r}")


def load_guardrails(raw: Any) -> dict[tuple[str, str], Guardrail]:
    """Every guardrail of ``settings.extra["guardrails"]``, keyed by ``(id, version)``. A table may be given
    as JSON text (a whole table from one environment variable).

    :raises ConfigurationError: on any invalid definition (at start-up, never per request).
    """
    out: dict[tuple[str, str], Guardrail] = {}
    for gid, versions in table(raw, "guardrails").items():
        for version, cfg in table(versions, f"guardrails.{gid}").items():
            cfg = table(cfg, f"guardrails.{gid}.{version}")
            # environment variable names arrive in lower case: GUARDRAILS__HR__DRAFT__... is version "draft"
            name = "DRAFT" if str(version) == "draft" else str(version)
            out[(str(gid), name)] = Guardrail.from_config(str(gid), name, cfg)
    return out
