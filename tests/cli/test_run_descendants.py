"""Ctrl-C of `vcflow run` ends every process its pods started, also one that left its
container's process group and session (`setsid`): it outlived the run before."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .flows import ended, processes_with, running, template

ESCAPE = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    os.execvp('sleep', ['sleep', sys.argv[1]])\n"
    "time.sleep(300)\n"
)


@pytest.fixture
def mark(request: pytest.FixtureRequest) -> Iterator[str]:
    text = f"300.{abs(hash(request.node.nodeid)) % 10**6:06d}"
    yield text
    for pid in processes_with(f"sleep {text}"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_ctrl_c_ends_what_a_pod_started_in_a_session_of_its_own(tmp_path: Path, mark: str) -> None:
    script = tmp_path / "escape.py"
    script.write_text(ESCAPE)
    manifest = tmp_path / "job.yaml"
    command = f"[{sys.executable}, {script}, '{mark}']"
    manifest.write_text(
        template("escapes", kind="Job", replicas=2, image="", container="c", command=command)
    )
    with running(tmp_path / "state", manifest, "--timeout", "60") as proc:
        end = time.monotonic() + 30
        while len(processes_with(f"sleep {mark}")) < 2:
            assert time.monotonic() < end, "the pods' processes did not start"
            time.sleep(0.05)
        code, _out, err = ended(proc, signal.SIGINT)
    assert code == 130, err
    end = time.monotonic() + 10
    while processes_with(f"sleep {mark}") and time.monotonic() < end:
        time.sleep(0.05)
    assert processes_with(f"sleep {mark}") == []
