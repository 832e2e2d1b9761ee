"""A minimal driver of headless Chromium for the HTML report's tests, with no third-party dependency.

Chromium started with ``--remote-debugging-pipe`` speaks the Chrome DevTools Protocol (CDP) on two inherited
file descriptors: it reads commands on fd 3 and writes responses and events on fd 4, each message one JSON
object ended by a NUL byte. We make two pipes and start Chromium through a two-line Python trampoline that
moves the child's ends to fds 3 and 4 and execs it (``subprocess`` can pass descriptors but not renumber
them; ``sh`` cannot name descriptors above 9, and ``preexec_fn`` is unsafe with threads); then we talk to
the browser synchronously from this thread: a command is written, then messages are read (``select`` with a
deadline) until its response arrives; events read on the way are kept for ``_wait_event`` and inspected
for console errors, uncaught exceptions and failed requests.

The browser target creates one page (``Target.createTarget``) and attaches to it in flat mode, so page
commands carry a ``sessionId``. The viewport is fixed (``Emulation.setDeviceMetricsOverride``) so
screenshots have a known size.

    with Browser(find_chromium()) as browser:
        browser.open(path)                  # file:// URL, waits for the load event
        browser.evaluate("document.title")  # Runtime.evaluate, value returned by value
        assert not browser.console_errors and not browser.failed_requests
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["BROWSER_NAMES", "Browser", "BrowserError", "chromium_or_skip", "find_chromium"]

# runs in the child: argv is (fd for commands, fd for events, browser, browser arguments...)
TRAMPOLINE = (
    "import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); os.dup2(w, 4); "
    "os.close(r); os.close(w); os.execv(sys.argv[3], sys.argv[3:])"
)

# looked up on PATH in this order unless GAINSCOPE_CHROMIUM names a binary (dev.py installs Debian's chromium)
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """Chromium could not be started, stopped answering, or a command failed."""


def find_chromium() -> str | None:
    """The browser binary: ``$GAINSCOPE_CHROMIUM``, else the first of ``BROWSER_NAMES`` on PATH, else None."""
    explicit = os.environ.get("GAINSCOPE_CHROMIUM")
    if explicit:
        return explicit
    for name in BROWSER_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_or_skip() -> str:
    """The browser binary for a test: skips the test when none is installed, or fails it when
    GAINSCOPE_REQUIRE_BROWSER=1 (as CI sets)."""
    import pytest

    executable = find_chromium()
    if executable is None:
        reason = (f"no browser for the browser tests: none of {', '.join(BROWSER_NAMES)} is on PATH and "
                  "GAINSCOPE_CHROMIUM is not set (python3 dev.py test installs Debian's chromium as root)")
        if os.environ.get("GAINSCOPE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GAINSCOPE_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return executable


def _high_fd(fd: int) -> int:
    """``fd`` moved to 10 or above, so that renumbering the child's ends to 3 and 4 cannot overwrite them."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def _remote_text(obj: dict[str, Any]) -> str:
    """A Runtime.RemoteObject as console text."""
    if "value" in obj:
        return str(obj["value"])
    return str(obj.get("description", obj.get("type", "?")))


class Browser:
    """One headless Chromium with one page; use as a context manager or call ``close()``.

    ``console_errors``, ``failed_requests`` and ``requests`` (every URL the page asked for) are reset by
    each ``open()``.
    """

    def __init__(self, executable: str, *, timeout: float = 30.0, width: int = 1280, height: int = 800) -> None:
        self.timeout = timeout
        self.width, self.height = width, height
        self.console_errors: list[str] = []
        self.failed_requests: list[str] = []
        self.requests: list[str] = []
        self._request_urls: dict[str, str] = {}
        self._events: list[dict[str, Any]] = []
        self._buffer = b""
        self._last_id = 0
        self._session: str | None = None
        self._closed = False
        self._profile = tempfile.TemporaryDirectory(prefix="gainscope-chromium-", ignore_cleanup_errors=True)
        self._log_path = Path(self._profile.name) / "chromium.log"
        self._process, self._to_browser, self._from_browser = self._launch(executable)
        try:
            self._attach_page()
        except BaseException:
            self.close()
            raise

    # -- process and pipe -------------------------------------------------------------------------

    def _launch(self, executable: str) -> tuple[subprocess.Popen[bytes], int, int]:
        """Start Chromium with its command pipe on fd 3 and its event pipe on fd 4."""
        child_in, to_browser = os.pipe()
        from_browser, child_out = os.pipe()
        child_in, child_out = _high_fd(child_in), _high_fd(child_out)
        profile = Path(self._profile.name) / "profile"
        argv = [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"]
        with self._log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-c", TRAMPOLINE, str(child_in), str(child_out), *argv],
                pass_fds=(child_in, child_out),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # its own process group, so a hung browser and its helpers can be killed
            )
        os.close(child_in)
        os.close(child_out)
        return process, to_browser, from_browser

    def _log_tail(self, lines: int = 15) -> str:
        try:
            text = self._log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _fail(self, message: str) -> BrowserError:
        tail = self._log_tail()
        return BrowserError(f"{message}\nchromium's output ends with:\n{tail}" if tail else message)

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._to_browser, data):]
        except OSError as exc:
            raise self._fail(f"chromium is not reading commands ({exc})") from exc

    def _read_message(self, deadline: float) -> dict[str, Any]:
        """The next message from the browser; events are recorded on the way."""
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(f"chromium did not answer within {self.timeout} s")
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise self._fail(f"chromium closed its DevTools pipe (exit code {self._process.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if "method" in message:
            self._record(message)
        return message

    # -- protocol ---------------------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, *, page: bool = True) -> dict[str, Any]:
        """Send one CDP command (to the page unless ``page=False``) and return its result."""
        self._last_id += 1
        message: dict[str, Any] = {"id": self._last_id, "method": method, "params": params or {}}
        if page and self._session is not None:
            message["sessionId"] = self._session
        self._write(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") != self._last_id:
                continue
            if "error" in reply:
                raise BrowserError(f"{method} failed: {reply['error'].get('message', reply['error'])}")
            result: dict[str, Any] = reply.get("result", {})
            return result

    def _wait_event(self, method: str) -> dict[str, Any]:
        """The params of the first unconsumed event ``method``, reading until it arrives or time runs out."""
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method:
                    del self._events[i]
                    params: dict[str, Any] = event.get("params", {})
                    return params
            self._read_message(deadline)

    def _record(self, event: dict[str, Any]) -> None:
        """Keep an event for waiters and note console errors, exceptions, requests and failed requests."""
        self._events.append(event)
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.console_errors.append(" ".join(_remote_text(a) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            description = details.get("exception", {}).get("description", "")
            self.console_errors.append(f"{details.get('text', 'exception')} {description}".strip())
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.console_errors.append(f"[{entry.get('source')}] {entry.get('text')} {entry.get('url', '')}".strip())
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            self._request_urls[params.get("requestId", "")] = url
            self.requests.append(url)
        elif method == "Network.loadingFailed":
            url = self._request_urls.get(params.get("requestId", ""), "?")
            reasons = (params.get("errorText"), params.get("blockedReason"), params.get("corsErrorStatus"))
            self.failed_requests.append(f"{url}: {' '.join(str(r) for r in reasons if r)}")

    def _attach_page(self) -> None:
        """Create a page, attach to it (flat session) and enable the domains the tests listen to."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, page=False)["targetId"]
        attached = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, page=False)
        self._session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
        )

    # -- what the tests use -----------------------------------------------------------------------

    def open(self, target: str | Path) -> None:
        """Navigate to a URL or a local file and wait for its load event; clears the collected errors."""
        url = target.resolve().as_uri() if isinstance(target, Path) else target
        self.console_errors.clear()
        self.failed_requests.clear()
        self.requests.clear()
        self._request_urls.clear()
        self._events.clear()
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"navigating to {url} failed: {result['errorText']}")
        self._wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (JSON-serialisable; promises are awaited)."""
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            description = details.get("exception", {}).get("description", details.get("text", ""))
            raise BrowserError(f"JavaScript failed: {description}")
        return result["result"].get("value")

    def _element(self, selector: str) -> str:
        """JavaScript that finds ``selector`` or throws."""
        sel = json.dumps(selector)
        return f"(document.querySelector({sel}) || (() => {{ throw new Error('no element matches ' + {sel}); }})())"

    def click(self, selector: str) -> None:
        """Click the first element matching a CSS selector (``element.click()``)."""
        self.evaluate(f"{self._element(selector)}.click()")

    def press_enter(self, selector: str) -> None:
        """Focus the element and press Enter on the keyboard (real key events, as a user would)."""
        self.evaluate(f"{self._element(selector)}.focus()")
        key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **key})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})

    def press(self, key: str) -> None:
        """Press and release one key on the focused page, as a keyboard would (``"j"``, ``"3"``, ``"ArrowDown"``,
        ``"Enter"``): real key events, so the page's keydown handlers see them."""
        named = {"ArrowDown": 40, "ArrowUp": 38, "ArrowLeft": 37, "ArrowRight": 39, "Enter": 13, "Escape": 27,
                 "Tab": 9, "Backspace": 8}
        if key in named:
            code = named[key]
            params = {"key": key, "code": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
            text = "\r" if key == "Enter" else ""
        elif len(key) == 1:
            code = ord(key.upper())
            params = {"key": key, "code": (f"Digit{key}" if key.isdigit() else f"Key{key.upper()}"),
                      "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
            text = key
        else:
            raise BrowserError(f"press() does not know the key {key!r}")
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **({"text": text} if text else {}), **params})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **params})

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element, clear it and type ``text`` (``Input.insertText``: as an input method would)."""
        self.evaluate(f"(() => {{ const e = {self._element(selector)}; e.focus(); e.value = ''; }})()")
        self.send("Input.insertText", {"text": text})

    def set_files(self, selector: str, paths: list[Path]) -> None:
        """Choose files in a file input (``DOM.setFileInputFiles``), as the file picker would."""
        found = self.send("Runtime.evaluate", {"expression": self._element(selector)})
        object_id = found["result"].get("objectId")
        if object_id is None:
            raise BrowserError(f"no element matches {selector}")
        self.send("DOM.setFileInputFiles", {"files": [str(p) for p in paths], "objectId": object_id})
        self.evaluate(f"{self._element(selector)}.dispatchEvent(new Event('change', {{bubbles: true}}))")

    def wait_for(self, expression: str, timeout: float | None = None) -> Any:
        """Wait, in the page, until the JavaScript ``expression`` is truthy, and return its value (the page polls it
        every 20 ms; a BrowserError after ``timeout`` seconds, default the driver's)."""
        limit = int(1000 * (timeout or self.timeout))
        script = ("new Promise((resolve, reject) => { const end = Date.now() + " + str(limit) + "; "
                  "const poll = () => { let value; try { value = (" + expression + "); } "
                  "catch (e) { value = undefined; } "
                  "if (value) resolve(value); else if (Date.now() > end) reject(new Error('timed out waiting for: ' + "
                  + json.dumps(expression) + ")); else setTimeout(poll, 20); }; poll(); })")
        return self.evaluate(script)

    def wait_for_load(self) -> None:
        """Wait for the next load event (after a click that navigates)."""
        self._wait_event("Page.loadEventFired")

    def download(self, selector: str, folder: Path) -> Path:
        """Click a download link and wait until the browser has written the file into ``folder``; its path."""
        self.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder),
                                                  "eventsEnabled": True}, page=False)
        self.click(selector)
        begun = self._wait_event("Browser.downloadWillBegin")
        while True:
            progress = self._wait_event("Browser.downloadProgress")
            if progress.get("guid") == begun.get("guid") and progress.get("state") in ("completed", "canceled"):
                break
        if progress["state"] != "completed":
            raise BrowserError(f"the download of {begun.get('url')} was canceled")
        return folder / begun["suggestedFilename"]

    def screenshot(self, path: str | Path | None = None, *, full_page: bool = False) -> bytes:
        """A PNG of the viewport (the whole page with ``full_page``); also written to ``path`` when given."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": max(size["width"], self.width),
                                                             "height": min(size["height"], 6000), "scale": 1})
        data = base64.b64decode(self.send("Page.captureScreenshot", params)["data"])
        if path is not None:
            Path(path).write_bytes(data)
        return data

    def dom(self) -> str:
        """The current document as HTML (after scripts ran)."""
        html: str = self.evaluate("document.documentElement.outerHTML")
        return html

    # -- shutting down ----------------------------------------------------------------------------

    def close(self) -> None:
        """Ask the browser to close (``Browser.close``), kill its process group if it does not, clean up.

        Calling it again does nothing.
        """
        if self._closed:
            return
        self._closed = True
        if self._process.poll() is None:
            try:
                self._write({"id": self._last_id + 1, "method": "Browser.close", "params": {}})
                self._process.wait(timeout=10)
            except (BrowserError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        try:  # helpers (renderer, GPU, zygote) still running in the group we started
            os.killpg(self._process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
