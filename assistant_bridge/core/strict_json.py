"""Strict JSON for request bodies: what :func:`json.loads` accepts but no client means, refused with a
:class:`~assistant_bridge.errors.ValidationFailed` that says what is wrong, before any other code sees it.

Refused: nesting deeper than :data:`MAX_DEPTH` (the schema validator and the handlers recurse), integers of
more than :data:`MAX_INT_DIGITS` digits (Python's own limit, where it raises a bare ``ValueError``; fields
that need a smaller range say so in their schema),
``NaN``, ``Infinity`` and numbers that overflow to infinity, lone UTF-16 surrogates (``"\\ud800"``: such a
string cannot be encoded, stored or logged) and NUL characters (they cut strings short in C libraries and
backend query languages). Everything else parses as :func:`json.loads` does.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from assistant_bridge.errors import ValidationFailed

MAX_DEPTH = 64
MAX_INT_DIGITS = 4300
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValidationFailed(f"request body has an integer of more than {MAX_INT_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValidationFailed(f"request body has a number out of range ({text[:40]})")
    return value


def _constant(name: str) -> Any:
    raise ValidationFailed(f"request body has {name}, which is not JSON")


def loads(raw: bytes | str) -> Any:
    """Parse a request body.

    :raises ValidationFailed: for invalid JSON or any of the refused forms above, naming the problem (and the
        JSON path of a bad string).
    """
    try:
        value = json.loads(raw, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except RecursionError:
        raise ValidationFailed(f"request body is nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise ValidationFailed(f"request body is not valid JSON: {exc.msg} (position {exc.pos})") from None
    except UnicodeDecodeError:
        raise ValidationFailed("request body is not valid JSON: it is not UTF-8") from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit, before parse_int sees it
        raise ValidationFailed(f"request body is not valid JSON: {str(exc)[:200]}") from None
    check(value)
    return value


def check(value: Any) -> None:
    """Walk a parsed value (iteratively: depth is what is being checked).

    :raises ValidationFailed: deeper than :data:`MAX_DEPTH`, or a string or key with a NUL or a lone surrogate.
    """
    stack: list[tuple[Any, str, int]] = [(value, "$", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_string(item, path)
        elif isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise ValidationFailed(f"request body is nested more than {MAX_DEPTH} levels deep", path=path)
            if isinstance(item, dict):
                for key, child in item.items():
                    _check_string(key, path)
                    stack.append((child, f"{path}.{key}", depth + 1))
            else:
                stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def _check_string(text: str, path: str) -> None:
    bad = _BAD_CHARS.search(text)
    if bad is None:
        return
    what = "a NUL character" if bad.group() == "\x00" else "a lone UTF-16 surrogate"
    safe_path = _BAD_CHARS.sub("?", path)[:200]
    raise ValidationFailed(f"{safe_path}: a string holds {what}, which is not allowed", path=safe_path)
