"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket library, no
driver binary): enough to load a page, type, press Enter, wait for a condition, read values and take a
screenshot in Debian's headless Chromium.

Messages are JSON objects terminated by a NUL byte; the browser reads commands on its fd 3 and writes
answers and events on its fd 4.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, binary: str = CHROMIUM, width: int = 1100, height: int = 900) -> None:
        self.binary = binary
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self._next_id = 0
        self._pending: dict[int, Any] = {}
        self._cond = threading.Condition()
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    # -- process ----------------------------------------------------------------------------------
    def __enter__(self) -> Browser:
        """Start the browser and attach to its page. A browser that dies while starting (seen once in a
        while on a loaded CI machine: the pipe breaks before the first answer) is started once more; a second
        failure raises with the end of what it printed."""
        for attempt in (1, 2):
            try:
                return self._start()
            except (BrokenPipeError, CDPError) as exc:
                err = self._stop_failed_start()
                if attempt == 2:
                    raise CDPError(f"the browser did not start ({exc}); it printed: {err[-2000:]}") from exc
        raise AssertionError("unreachable")

    def _stop_failed_start(self) -> str:
        proc = getattr(self, "proc", None)
        if proc is None:
            return ""
        if proc.poll() is None:
            proc.kill()
        try:
            _, err = proc.communicate(timeout=10)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            err = b""
        for f in (getattr(self, "_w", None), getattr(self, "_r", None)):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        self._pending.clear()
        self.session = None
        shutil.rmtree(self.profile, ignore_errors=True)
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        return (err or b"").decode(errors="replace")

    def _start(self) -> Browser:
        cmd_r, cmd_w = os.pipe()  # we write commands; the browser reads them on fd 3
        out_r, out_w = os.pipe()  # the browser writes on fd 4; we read

        def child() -> None:
            # copy both above 10 first, so neither is clobbered when one of them already is fd 3 or 4
            a, b = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                self.binary,
                *FLAGS,
                f"--user-data-dir={self.profile}",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            preexec_fn=child,
            pass_fds=(3, 4),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(cmd_r)
        os.close(out_w)
        self._w = os.fdopen(cmd_w, "wb", buffering=0)
        self._r = os.fdopen(out_r, "rb", buffering=0)
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self._attach()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - the browser may already be gone
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for f in (self._w, self._r):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_loop(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._r.read(65536)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                with self._cond:
                    self._pending[-1] = "closed"
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._pending[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    # -- protocol ---------------------------------------------------------------------------------
    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True, timeout: float = 30.0
    ) -> dict[str, Any]:
        with self._cond:
            self._next_id += 1
            mid = self._next_id
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self._w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._pending:
                if -1 in self._pending:
                    raise CDPError(f"the browser closed the pipe during {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPError(f"{method} timed out")
                self._cond.wait(left)
            answer = self._pending.pop(mid)
        if "error" in answer:
            raise CDPError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def _attach(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            targets = self.call("Target.getTargets", session=False)["targetInfos"]
            pages = [t for t in targets if t["type"] == "page"]
            if pages:
                break
            if time.monotonic() > deadline:
                raise CDPError("no page target")
            time.sleep(0.1)
        self.session = self.call(
            "Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True}, session=False
        )["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
        )

    # -- page helpers -----------------------------------------------------------------------------
    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": await_promise}
        )
        if "exceptionDetails" in result:
            raise CDPError(f"script failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def goto(self, url: str, timeout: float = 30.0) -> None:
        self.call("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete' && !!document.body", timeout=timeout)

    def wait_for(self, expression: str, timeout: float = 30.0, interval: float = 0.1) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError(f"timed out waiting for {expression}")
            time.sleep(interval)

    def type_text(self, text: str) -> None:
        self.call("Input.insertText", {"text": text})

    def press_enter(self) -> None:
        base = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **base})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", **base})

    def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))

    def problems(self) -> list[str]:
        """Console errors, CSP violations and uncaught exceptions seen so far."""
        out = []
        for ev in list(self.events):
            method, params = ev.get("method"), ev.get("params", {})
            if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", ""))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out.append(params.get("exceptionDetails", {}).get("text", "exception"))
        return out
