"""gunicorn embedding: workers build the app from the settings after fork and warm it up once."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger
from gunicorn.workers.gthread import ThreadWorker

from assistant_bridge.logs import JsonFormatter, RedactQuerySecrets
from assistant_bridge.settings import Settings

log = logging.getLogger(__name__)


def limit_blas_threads() -> None:
    """One BLAS thread per call in a process that serves many requests at once: numpy's matrix products here
    are small (a query against the exact index, sentence vectors), and OpenBLAS's own threads, spinning between
    calls, took a core from the other requests and from the ingestion worker (docs/benchmarks.md)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
    except Exception as exc:  # noqa: BLE001 - a missing or odd BLAS must not stop a worker
        log.warning("worker.blas_limit_failed", extra={"reason": type(exc).__name__})


def _post_worker_init(worker: Any) -> None:
    from assistant_bridge.validation import warm_validators

    limit_blas_threads()
    app = worker.wsgi
    try:
        warm_validators()
        app.extensions["services"].warm_up()
    except Exception as exc:  # a worker that cannot warm up still serves /healthz and reports /readyz false
        log.error(
            "worker.warm_up_failed", extra={"type": type(exc).__name__, "error": str(getattr(exc, "message", exc))}
        )


def _child_exit(server: Any, worker: Any) -> None:
    import os

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


class GracefulThreadWorker(ThreadWorker):  # type: ignore[misc]
    """gunicorn's ``gthread`` worker, which always leaves before the arbiter's SIGKILL when stopped.

    Two things kept it past ``graceful_timeout`` (and had the arbiter report "Worker was sent SIGKILL!
    Perhaps out of memory?"): a thread blocked reading a request the client never finishes (an idle
    keep-alive client that has sent half a request line), which the interpreter joins at exit however long
    it blocks; and a graceful wait that ends at the very moment the arbiter kills. So this worker stops
    waiting for its connections :data:`MARGIN` seconds before the arbiter would kill it, and then leaves at
    once (logs flushed), abandoning such threads.
    """

    MARGIN = 2

    def init_process(self) -> None:
        # this process's own copy of the settings: the arbiter keeps the full timeout
        self.cfg.set("graceful_timeout", max(int(self.cfg.graceful_timeout) - self.MARGIN, 1))
        super().init_process()

    def run(self) -> None:
        code = 0
        try:
            super().run()
        except SystemExit as exc:  # SIGQUIT/SIGINT: gunicorn exits from its signal handler
            code = exc.code if isinstance(exc.code, int) else 0
        except BaseException:
            log.exception("worker.run_failed")
            code = 1
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


class RedactingLogger(Logger):  # type: ignore[misc]
    """gunicorn's logger, in the service's JSON format and without API keys: it logs the raw request URI
    (query string included) when a request fails, and its loggers do not propagate to the root handler of
    :func:`assistant_bridge.logs.configure`."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for logger in (self.error_log, self.access_log):
            if not any(isinstance(f, RedactQuerySecrets) for f in logger.filters):
                logger.addFilter(RedactQuerySecrets())
            for handler in logger.handlers:  # the service's one format: JSON lines, as every other component
                handler.setFormatter(JsonFormatter())


class BridgeApplication(BaseApplication):  # type: ignore[misc]
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        super().__init__()

    def load_config(self) -> None:
        s = self.settings.server
        cfg = {
            "bind": f"[{s.host}]:{s.port}" if ":" in s.host else f"{s.host}:{s.port}",
            "workers": s.workers,
            "worker_class": GracefulThreadWorker,
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


def preflight(settings: Settings) -> None:
    """Build the app once in the serving process, over a throw-away store, before any port is bound: every
    feature section is read and checked as a worker would, so a wrong key is a :class:`ConfigurationError`
    here (one line from the CLI) and not a traceback per worker after start-up. Nothing is loaded or
    connected: the backend and the models are lazy until a worker warms up."""
    from assistant_bridge.services import Services
    from assistant_bridge.store import SQLiteStore
    from assistant_bridge.web.app import create_app

    create_app(settings, Services.from_settings(settings, store=SQLiteStore(":memory:")))


def run_gunicorn(settings: Settings) -> int:
    BridgeApplication(settings).run()
    return 0
