"""A Server-Sent Events reader for the tests: a thread that reads a stream's frames into a
queue, `(event, data)` for each event, `("ping", None)` for a comment."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from typing import Any

import httpx
import pytest


class Events:
    def __init__(self, client: httpx.Client, path: str) -> None:
        self.client, self.path = client, path
        self.frames: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.status = 0
        self.headers: dict[str, str] = {}
        self.started = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self.started.wait(30):
            pytest.fail("the stream did not answer")

    def _read(self) -> None:
        with contextlib.suppress(httpx.HTTPError):
            timeout = httpx.Timeout(30.0, read=60.0)
            with self.client.stream("GET", self.path, timeout=timeout) as answer:
                self.status = answer.status_code
                self.headers = dict(answer.headers)
                self.started.set()
                event = "message"
                for line in answer.iter_lines():
                    if line.startswith(":"):
                        self.frames.put(("ping", None))
                    elif line.startswith("event: "):
                        event = line.removeprefix("event: ")
                    elif line.startswith("data: "):
                        self.frames.put((event, json.loads(line.removeprefix("data: "))))
        self.started.set()
        self.frames.put(("closed", None))

    def until(self, check: Any, what: str, deadline: float = 45.0) -> list[tuple[str, Any]]:
        """The frames read until one passes `check(event, data)` (it included)."""
        seen: list[tuple[str, Any]] = []
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            try:
                found = self.frames.get(timeout=0.2)
            except queue.Empty:
                continue
            seen.append(found)
            if check(*found):
                return seen
        pytest.fail(f"timed out waiting for {what}; read {seen}")
