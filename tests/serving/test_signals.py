"""A stop signal (`serving.signals`, `serving.shell`): SIGTERM and SIGINT set the stop, the
previous handlers come back after; uvicorn's server returns on one, its stop event set."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from vcflow.serving import listening, shell, signals
from vcflow.telemetry import connections

DEADLINE = 30.0


@pytest.mark.parametrize("sig", signals.STOPS)
def test_a_stop_signal_sets_the_event_and_the_handlers_come_back(sig: int) -> None:
    before = signal.getsignal(sig)
    stopping = threading.Event()
    with signals.setting(stopping):
        os.kill(os.getpid(), sig)
        assert stopping.wait(DEADLINE)
    assert signal.getsignal(sig) is before


async def _app(scope: object, receive: object, send: object) -> None:  # (never called)
    raise AssertionError("no request expected")


def test_the_shell_returns_on_sigterm() -> None:
    guard = connections.guard()
    sock = guard.listener(listening.listen("127.0.0.1", 0))
    server = shell.shell(_app, guard, log_level="warning", tls=None, access_log=False)
    hung_up = threading.Event()
    server.hangup = hung_up.set

    def signal_once_started() -> None:
        end = time.monotonic() + DEADLINE
        while not server.started and time.monotonic() < end:
            time.sleep(0.02)
        if not server.started:  # (no signal the test process itself would die of)
            server.should_exit = True
            return
        os.kill(os.getpid(), signal.SIGHUP)
        hung_up.wait(DEADLINE)
        os.kill(os.getpid(), signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)
    sender = threading.Thread(target=signal_once_started, daemon=True)
    try:
        with server.signals_caught():
            sender.start()
            server.run(sockets=[sock])
    finally:
        sock.close()
    sender.join(DEADLINE)
    assert hung_up.is_set() and server.stopping.is_set()
    assert signal.getsignal(signal.SIGTERM) is before
