"""SIGINT/SIGTERM as a flag that long-running commands (`controller`, `run`) check between
bursts of work, so they stop cleanly instead of dying mid-write."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopFlag:
    """True once SIGINT or SIGTERM arrived."""

    def __init__(self) -> None:
        self.stopped = False

    def __call__(self) -> bool:
        return self.stopped

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True


@contextmanager
def stop_on_signals() -> Iterator[StopFlag]:
    """Catch SIGINT/SIGTERM into a StopFlag for the block; the old handlers come back after."""
    flag = StopFlag()
    previous = {sig: signal.signal(sig, flag.handle) for sig in SIGNALS}
    try:
        yield flag
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
