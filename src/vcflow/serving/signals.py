"""SIGTERM and SIGINT as a serving process's clean stop: handlers set for a block and the
previous ones put back after it, so a stop signal that arrives while the process winds down
is one more request to stop, not the end of the process before its clean-up."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from types import FrameType
from typing import Any

STOPS = (signal.SIGINT, signal.SIGTERM)
Handler = Callable[[int, FrameType | None], Any]


@contextlib.contextmanager
def caught(handlers: Mapping[int, Handler]) -> Iterator[None]:
    """`handlers` (signal: handler) in force inside the block, the previous ones after."""
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stops(handler: Handler) -> dict[int, Handler]:
    """`handler` for each stop signal (for `caught`)."""
    return dict.fromkeys(STOPS, handler)


@contextlib.contextmanager
def setting(stopping: threading.Event) -> Iterator[None]:
    """Inside the block SIGTERM and SIGINT set `stopping`, which the process polls."""

    def stop(_sig: int, _frame: FrameType | None) -> None:
        stopping.set()

    with caught(stops(stop)):
        yield
