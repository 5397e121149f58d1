"""Turns at one SQLite file's write lock among the writers of this process."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class WriteTurns:
    """The writers of this process waiting for one file's write lock (`BEGIN IMMEDIATE`).

    SQLite's busy handler lets a waiting writer in only when it happens to retry while the
    lock is free, so a thread committing burst after burst (the server's control plane)
    can keep another (an API request) waiting for seconds. A writer that commits often
    asks `let_through` between two transactions, and waits while others of this process
    are queued for the lock."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting = 0

    @contextmanager
    def queued(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
        try:
            yield
        finally:
            with self._cond:
                self._waiting -= 1
                self._cond.notify_all()

    def let_through(self, timeout: float) -> bool:
        """Wait (at most `timeout` seconds) until no writer of this process is queued;
        True if one was."""
        with self._cond:
            if not self._waiting:
                return False
            self._cond.wait_for(lambda: not self._waiting, timeout)
            return True


_TURNS: dict[str, WriteTurns] = {}
_TURNS_LOCK = threading.Lock()


def turns_of(path: Path) -> WriteTurns:
    """The turns of the file at `path` (one per file, by its real path)."""
    key = os.path.realpath(path)
    with _TURNS_LOCK:
        return _TURNS.setdefault(key, WriteTurns())
