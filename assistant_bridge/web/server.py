"""gunicorn embedding: workers build the app from the settings after fork and warm it up once."""

from __future__ import annotations

import logging
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger

from assistant_bridge.logs import RedactQuerySecrets
from assistant_bridge.settings import Settings

log = logging.getLogger(__name__)


def _post_worker_init(worker: Any) -> None:
    app = worker.wsgi
    try:
        app.extensions["services"].warm_up()
    except Exception as exc:  # a worker that cannot warm up still serves /healthz and reports /readyz false
        log.error("worker.warm_up_failed type=%s message=%s", type(exc).__name__, getattr(exc, "message", exc))


def _child_exit(server: Any, worker: Any) -> None:
    import os

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


class RedactingLogger(Logger):  # type: ignore[misc]
    """gunicorn's logger, without API keys: it logs the raw request URI (query string included) when a
    request fails, and its loggers do not propagate to the root handler of :func:`assistant_bridge.logs.configure`."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for logger in (self.error_log, self.access_log):
            if not any(isinstance(f, RedactQuerySecrets) for f in logger.filters):
                logger.addFilter(RedactQuerySecrets())


class BridgeApplication(BaseApplication):  # type: ignore[misc]
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        super().__init__()

    def load_config(self) -> None:
        s = self.settings.server
        cfg = {
            "bind": f"[{s.host}]:{s.port}" if ":" in s.host else f"{s.host}:{s.port}",
            "workers": s.workers,
            "worker_class": "gthread",
            "threads": s.threads,
            "timeout": s.timeout,
            "graceful_timeout": s.graceful_timeout,
            "post_worker_init": _post_worker_init,
            "child_exit": _child_exit,
            "loglevel": s.log_level,
            "accesslog": None,
            "logger_class": RedactingLogger,
        }
        if "control_socket_disable" in self.cfg.settings:  # gunicorn >= 25.1
            # its control socket ($HOME/.gunicorn/gunicorn.ctl) is shared by every instance of the same user and
            # can resize or stop the service; nothing here uses it
            cfg["control_socket_disable"] = True
        for key, value in cfg.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from assistant_bridge.web.app import create_app

        return create_app(self.settings)


def run_gunicorn(settings: Settings) -> int:
    BridgeApplication(settings).run()
    return 0
