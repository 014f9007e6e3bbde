"""Per-credential rate limits (``auth.keys[].rate_limit_per_minute``) and the throttling of failed logins
(``auth.failed_logins_per_minute``), shared by every gunicorn worker.

A fixed one-minute window counted in SQLite (one small write per limited request or failed login), so the
limit holds for the whole service, not per worker. Credentials without a limit skip the store entirely.
"""

from __future__ import annotations

import time

from assistant_bridge.errors import RateLimited
from assistant_bridge.metrics import RATE_LIMITED
from assistant_bridge.store import SQLiteStore

_TABLE = "CREATE TABLE IF NOT EXISTS rate_limits (key TEXT, window INTEGER, n INTEGER, PRIMARY KEY (key, window))"


class RateLimiter:
    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.store.ensure_schema("rate_limits", _TABLE)

    def hit(self, key: str, limit_per_minute: int, now: float | None = None) -> None:
        """Count one request; :raises RateLimited: when over the limit (with ``retry_after`` seconds)."""
        if limit_per_minute <= 0:
            return
        now = time.time() if now is None else now
        window = int(now // 60)
        row = self.store.execute(
            "INSERT INTO rate_limits VALUES (?, ?, 1) ON CONFLICT(key, window) DO UPDATE SET n = n + 1 RETURNING n",
            (key, window),
        ).fetchone()
        if window % 10 == 0:
            self.store.execute("DELETE FROM rate_limits WHERE window < ?", (window - 2,))
        if row and int(row[0]) > limit_per_minute:
            RATE_LIMITED.labels(key=key).inc()
            raise RateLimited(
                f"rate limit of {limit_per_minute} requests per minute exceeded", retry_after=int(60 - now % 60) + 1
            )


class LoginThrottle:
    """Counts failed logins per client address and per prefix of the credential presented; while either
    count is over ``limit`` in the current minute, every request from that address (or with that prefix) is
    refused with 429 and ``Retry-After`` before its credential is even compared.

    The prefix (the first :data:`PREFIX_CHARS` characters of the key, token or Basic user name) catches a
    guesser who spreads over addresses; the address catches one who varies the key.
    """

    PREFIX_CHARS = 6

    def __init__(self, store: SQLiteStore, limit_per_minute: int) -> None:
        self.store = store
        self.limit = limit_per_minute
        self.store.ensure_schema("rate_limits", _TABLE)

    def _keys(self, address: str, credential: str) -> list[str]:
        keys = [f"login-addr:{address}"]
        if credential:
            keys.append(f"login-key:{credential[: self.PREFIX_CHARS]}")
        return keys

    def check(self, address: str, credential: str, now: float | None = None) -> None:
        """:raises RateLimited: while the address or the credential's prefix is over the limit."""
        if self.limit <= 0:
            return
        now = time.time() if now is None else now
        keys = self._keys(address, credential)
        row = self.store.execute(
            f"SELECT MAX(n) FROM rate_limits WHERE window = ? AND key IN ({','.join('?' * len(keys))})",
            (int(now // 60), *keys),
        ).fetchone()
        if row and row[0] is not None and int(row[0]) >= self.limit:
            RATE_LIMITED.labels(key="failed_logins").inc()
            raise RateLimited(
                f"too many failed logins; try again in a minute (limit {self.limit} per minute)",
                retry_after=int(60 - now % 60) + 1,
            )

    def failed(self, address: str, credential: str, now: float | None = None) -> None:
        if self.limit <= 0:
            return
        now = time.time() if now is None else now
        window = int(now // 60)
        for key in self._keys(address, credential):
            self.store.execute(
                "INSERT INTO rate_limits VALUES (?, ?, 1) ON CONFLICT(key, window) DO UPDATE SET n = n + 1",
                (key, window),
            )


class ReplayGuard:
    """Refuses a SigV4 signature seen before within its validity window (a captured request sent again),
    for every worker: the signatures are rows of the shared store until they would have expired anyway."""

    _TABLE = "CREATE TABLE IF NOT EXISTS sigv4_seen (signature TEXT PRIMARY KEY, expires REAL NOT NULL)"

    def __init__(self, store: SQLiteStore, window_seconds: float) -> None:
        self.store = store
        self.window = window_seconds
        self.store.ensure_schema("sigv4_seen", self._TABLE)

    def first_use(self, signature: str, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        if int(now) % 60 == 0:
            self.store.execute("DELETE FROM sigv4_seen WHERE expires < ?", (now,))
        cur = self.store.execute(
            "INSERT OR IGNORE INTO sigv4_seen (signature, expires) VALUES (?, ?)", (signature, now + 2 * self.window)
        )
        return cur.rowcount == 1
