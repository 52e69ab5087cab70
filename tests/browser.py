"""Screenshots of a web page in headless Chromium, driven over the DevTools protocol (the
``websockets`` package that viser depends on; no browser download, no other driver).

Chromium renders WebGL in software (SwiftShader) here, so a page is shot only after its
drawing has settled: two screenshots a moment apart that are equal.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import numpy as np

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars",
         "--mute-audio", "--no-default-browser-check"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Browser:
    """One headless Chromium with one page; a context manager that ends the process and
    removes its profile directory."""

    def __init__(self, width: int = 960, height: int = 640, timeout: float = 60.0):
        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        from websockets.sync.client import connect

        self._profile = tempfile.mkdtemp(prefix="casdyn-chromium-")
        port = _free_port()
        self._process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}",
             f"--remote-debugging-port={port}", f"--window-size={width},{height}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._ids = itertools.count(1)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                                timeout=5) as answer:
                        pages = [p for p in json.load(answer) if p.get("type") == "page"]
                    if pages:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise RuntimeError("chromium did not start its DevTools endpoint")
                time.sleep(0.2)
            self._socket = connect(pages[0]["webSocketDebuggerUrl"], max_size=None,
                                   open_timeout=timeout)
            self._timeout = timeout
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                      deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and return its result (events in between are skipped)."""
        ident = next(self._ids)
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + self._timeout
        while True:
            message = json.loads(self._socket.recv(timeout=max(deadline - time.monotonic(),
                                                               0.1)))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def open(self, url: str) -> None:
        """Go to ``url`` from a blank page: no screenshot then shows the page before."""
        self.blank()
        deadline = time.monotonic() + self._timeout
        while self.evaluate("location.href") != "about:blank":
            if time.monotonic() > deadline:
                raise RuntimeError("chromium did not open a blank page")
            time.sleep(0.05)
        self.call("Page.navigate", url=url)

    def blank(self) -> None:
        """Leave the page for a blank one (nothing left drawing)."""
        self.call("Page.navigate", url="about:blank")

    def click(self, x: float, y: float) -> None:
        """A left click at page pixel ``(x, y)``."""
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page."""
        return self.call("Runtime.evaluate", expression=expression,
                         returnByValue=True).get("result", {}).get("value")

    def dismiss_notifications(self) -> None:
        """Close the page's notifications (viser's notice about software WebGL)."""
        self.evaluate("document.querySelectorAll('.mantine-Notification-root, "
                      "[class*=\"Notification-root\"]').forEach(e => e.remove())")

    def screenshot(self) -> np.ndarray:
        """The page as an (height, width, 3) uint8 RGB array."""
        from PIL import Image

        for attempt in range(20):  # a navigation may swap the page's renderer for a moment
            try:
                answer = self.call("Page.captureScreenshot", format="png")
                break
            except RuntimeError as error:
                if "Not attached" not in str(error) or attempt == 19:
                    raise
                time.sleep(0.5)
        data = base64.b64decode(answer["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def settled(self, until=None, least: float = 3.0, most: float = 40.0,
                step: float = 1.0) -> np.ndarray:
        """A screenshot once the page has stopped changing: after at least ``least`` seconds
        and the first shot that ``until`` accepts (``until(shot)`` true; None: any shot), two
        shots ``step`` apart that are equal (or the last one after ``most`` seconds)."""
        start = time.monotonic()
        time.sleep(least)
        shot = self.screenshot()
        while until is not None and not until(shot) and time.monotonic() - start < most:
            time.sleep(step)
            shot = self.screenshot()
        while time.monotonic() - start < most:
            time.sleep(step)
            again = self.screenshot()
            if np.array_equal(again, shot):
                return again
            shot = again
        return shot

    def close(self) -> None:
        try:
            if hasattr(self, "_socket"):
                self._socket.close()
        finally:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def save_png(image: np.ndarray, path: str | os.PathLike) -> None:
    from PIL import Image

    Image.fromarray(image).save(path, optimize=True)
