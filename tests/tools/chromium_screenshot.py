"""A screenshot of a web page in headless Chromium once it shows some text: the test drives Chromium through the
DevTools protocol over `--remote-debugging-pipe` (JSON messages ended by NUL on file descriptors 3 and 4), so it
needs no WebSocket client and waits for the page's script rather than for a fixed time."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,800",
)


def chromium() -> str | None:
    """Debian's Chromium, if installed."""
    return shutil.which("chromium")


class _DevTools:
    def __init__(self, url: str):
        self.reply_pipe, child_writes = os.pipe()
        child_reads, self.command_pipe = os.pipe()
        os.set_inheritable(child_reads, True)
        os.set_inheritable(child_writes, True)
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")

        def pipes_on_3_and_4() -> None:
            os.dup2(child_reads, 3)
            os.dup2(child_writes, 4)

        command = [chromium() or "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}"]
        self.process = subprocess.Popen(
            [*command, "--remote-debugging-pipe", url],
            preexec_fn=pipes_on_3_and_4,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(child_reads)
        os.close(child_writes)
        self.pending = b""
        self.next_id = 0
        self.session: str | None = None

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self.command_pipe, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.pending:
                chunk = os.read(self.reply_pipe, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the DevTools pipe during {method}")
                self.pending += chunk
            raw, self.pending = self.pending.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.process.wait(10)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self.reply_pipe)
        os.close(self.command_pipe)
        shutil.rmtree(self.profile, ignore_errors=True)


def screenshot_when_shown(url: str, texts: Sequence[str], absent: Sequence[str] = (), timeout: float = 60) -> bytes:
    """PNG of `url` once its text holds every one of `texts` and none of `absent` (then 2 s to draw);
    TimeoutError with the page's last text if it never does."""
    tools = _DevTools(url)
    try:
        page = next(target for target in tools.send("Target.getTargets")["targetInfos"] if target["type"] == "page")
        tools.session = tools.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        deadline, text = time.monotonic() + timeout, ""
        while time.monotonic() < deadline:
            shown = tools.send("Runtime.evaluate", expression="document.body ? document.body.innerText : ''")
            text = shown["result"].get("value", "")
            if all(t in text for t in texts) and not any(t in text for t in absent):
                time.sleep(2)
                return base64.b64decode(tools.send("Page.captureScreenshot", format="png")["data"])
            time.sleep(0.5)
        raise TimeoutError(f"the page never showed {list(texts)}: {text[:300]!r}")
    finally:
        tools.close()
