"""`vcflow controller`: run the controllers on a state directory until SIGINT or SIGTERM.

It holds `<state dir>/controller.lock` while it runs, so writing commands leave the
reconciling to it and a second `vcflow controller` fails at once (exit 1, naming the
holder's pid). Over time it is what retries failed syncs with backoff; writing commands
alone only reconcile until nothing is ready *now*.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import typer

from vcflow.cli import options, statedir
from vcflow.controller.manager import Manager

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _StopFlag:
    """Set by SIGINT/SIGTERM; the manager checks it between bursts of work."""

    def __init__(self) -> None:
        self.stopped = False

    def __call__(self) -> bool:
        return self.stopped

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True


@contextmanager
def _stop_on_signals() -> Iterator[_StopFlag]:
    flag = _StopFlag()
    previous = {sig: signal.signal(sig, flag.handle) for sig in _SIGNALS}
    try:
        yield flag
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def controller(ctx: typer.Context) -> None:
    """Run the controllers on the state directory until SIGINT/SIGTERM (Ctrl-C).

    While it runs, apply/delete/patch/stop only write and leave the reconciling to it, and
    failed syncs are retried with backoff over time. One per state directory: a second one
    fails, naming the first one's pid (a writing command that is settling is waited for,
    up to 30 seconds).
    """
    state_dir = options.state_dir(ctx)
    with (
        statedir.opened(state_dir) as store,
        statedir.ControllerLock(state_dir, statedir.CONTROLLER) as lock,
    ):
        statedir.acquire_for_controller(lock)
        with _stop_on_signals() as stop:
            typer.echo(
                f"vcflow controller: reconciling {state_dir} (pid {os.getpid()}); "
                "stop with Ctrl-C or SIGTERM"
            )
            manager = Manager(store)
            manager.run(stop)
            manager.settle()  # what was written while the stop signal arrived
