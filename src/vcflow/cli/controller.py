"""`vcflow controller`: run the controllers on a state directory until SIGINT or SIGTERM.

It holds `<state dir>/controller.lock` while it runs, so writing commands leave the
reconciling to it and a second `vcflow controller` fails at once (exit 1, naming the
holder's pid). Over time it is what retries failed syncs with backoff; writing commands
alone only reconcile until nothing is ready *now*.
"""

from __future__ import annotations

import os

import typer

from vcflow.cli import options, signals
from vcflow.controller.manager import Manager
from vcflow.local import statedir


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
        with signals.stop_on_signals() as stop:
            typer.echo(
                f"vcflow controller: reconciling {state_dir} (pid {os.getpid()}); "
                "stop with Ctrl-C or SIGTERM"
            )
            manager = Manager(store)
            manager.run(stop)
            manager.settle()  # what was written while the stop signal arrived
