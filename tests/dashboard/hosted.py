"""`vcflow dashboard --kubeconfig F` as a child process, for the tests that serve it over a
Kubernetes API: tests/dashboard/test_command.py (`vcflow server`'s kubeconfig) and
tests/cluster/test_dashboard.py (the real test cluster's). `hosted_dashboard` starts it in a
session of its own, reads the login link it prints (`vcflow dashboard: open URL/#token=T`)
and kills it at the end if the test did not stop it; `Hosted.stop` sends SIGTERM and
returns its exit code; `Hosted.leftovers` says whether anything it started still runs."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.cluster.fixtures import kubecluster

LINK = re.compile(r"^vcflow dashboard: open (https?://\S+?)/#token=(\S+)$", re.M)
#: how long the process may take to print its link, and to exit once told to
DEADLINE = 30.0


@dataclass
class Hosted:
    """A running `vcflow dashboard --kubeconfig F`: its link's URL and token, its output."""

    proc: subprocess.Popen[bytes]
    out: Path
    err: Path
    url: str
    token: str

    def output(self) -> str:
        """What it printed: its stdout (the link, the access log), then its stderr."""
        return self.out.read_text(errors="replace") + self.err.read_text(errors="replace")

    def client(self, *, token: bool = True) -> httpx.Client:
        """A client of the dashboard, with the token as `Authorization: Bearer` unless
        `token=False` (then it holds what `POST /ui/login` sets: the browser's way)."""
        headers = {"Authorization": f"Bearer {self.token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=DEADLINE)

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Its exit code once `signum` (SIGTERM: what a service manager sends) ends it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        return self.proc.wait(timeout=DEADLINE)

    def leftovers(self) -> bool:
        """Whether a process of its session (it, or one it started) still runs."""
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        return True


@contextlib.contextmanager
def hosted_dashboard(kubeconfig: Path, where: Path, *flags: str) -> Iterator[Hosted]:
    """`vcflow dashboard --kubeconfig KUBECONFIG --port 0 FLAGS...`, its output in `where`,
    once it printed its link (the test fails with its stderr if it exits first)."""
    out, err = where / "dashboard.out", where / "dashboard.err"
    env = {
        k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")
    }
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vcflow", "dashboard", "--kubeconfig", str(kubeconfig),
             "--port", "0", *flags],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,  # (its own process group: `leftovers` looks there)
            preexec_fn=kubecluster.kill_with_parent if sys.platform == "linux" else None,
        )  # fmt: skip
    try:
        end = time.monotonic() + DEADLINE
        while (link := LINK.search(out.read_text())) is None:
            if proc.poll() is not None or time.monotonic() > end:
                pytest.fail(
                    f"vcflow dashboard printed no link (exit {proc.poll()}):\n"
                    f"{out.read_text()}{err.read_text(errors='replace')}"
                )
            time.sleep(0.05)
        yield Hosted(proc, out, err, link.group(1), link.group(2))
    finally:
        with contextlib.suppress(ProcessLookupError):  # (it, and anything it started)
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=DEADLINE)
