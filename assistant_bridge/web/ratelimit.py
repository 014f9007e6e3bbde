"""Per-credential rate limits (``auth.keys[].rate_limit_per_minute``), shared by every gunicorn worker.

A fixed one-minute window counted in SQLite (one small write per limited request), so the limit holds for
the whole service, not per worker. Credentials without a limit skip the store entirely.
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
        self.store.execute(_TABLE)

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
