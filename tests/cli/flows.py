"""Builders and process helpers of the `vcflow run` tests: manifests of one-task templates
running a shell script, flows of `entry<deps` strings, `vcflow run` as a child process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vcflow.runtime.pods import PodRunner

DEADLINE = 30.0


def template(name: str, script: str, *, cpu: str = "", policy: str = "Never") -> str:
    requests = f"\n              resources: {{requests: {{cpu: '{cpu}'}}}}" if cpu else ""
    return f"""
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  plugins: {{env: []}}
  tasks:
    - replicas: 1
      name: t
      template:
        spec:
          restartPolicy: {policy}
          containers:
            - name: main
              image: busybox
              command: [sh, -c, '{script}']{requests}
---"""


def jobflow(name: str, *entries: str, retain: str = "retain") -> str:
    lines = []
    for entry in entries:
        job, _, deps = entry.partition("<")
        lines.append(f"    - name: {job}")
        if deps:
            lines.append(f"      dependsOn: {{targets: [{deps}]}}")
    body = "\n".join(lines)
    return f"""
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: {name}}}
spec:
  jobRetainPolicy: {retain}
  flows:
{body}
"""


def spawn(state_dir: Path, manifest: Path, *args: str) -> subprocess.Popen[str]:
    """`vcflow run -f MANIFEST ARGS...` as a child process (output piped)."""
    command = ["--state-dir", str(state_dir), "run", "-f", str(manifest), "--no-live", *args]
    return subprocess.Popen(
        [sys.executable, "-m", "vcflow", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, lines: int) -> None:
    end = time.monotonic() + DEADLINE
    while not (path.exists() and len(path.read_text().splitlines()) >= lines):
        if time.monotonic() > end:
            pytest.fail(f"{path} did not get {lines} lines")
        time.sleep(0.02)


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(entry.name))
    return found


@contextmanager
def running(state_dir: Path, manifest: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """`vcflow run` as a child process for the block; killed if still running after it."""
    proc = spawn(state_dir, manifest, *args)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def ended(proc: subprocess.Popen[str], signum: int | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the child once it ended (after `signum`, if given)."""
    if signum is not None:
        proc.send_signal(signum)
    out, err = proc.communicate(timeout=DEADLINE)
    return proc.returncode, out, err


def cli(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Another `vcflow` command on the state directory, as a second process would run it."""
    return subprocess.run(
        [sys.executable, "-m", "vcflow", "--state-dir", str(state_dir), *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


def wait_until(check: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def stop_pods(state_dir: Path) -> None:
    """Kill the pods of the state directory that still run and stop its pod server (after a
    test whose `vcflow run` was killed, or failed)."""
    if not (state_dir / "runtime").is_dir():
        return
    with PodRunner(state_dir) as runner:
        handles = runner.adopt_all()
        for handle in handles:
            if handle.last is not None and (handle.last.lost or not handle.last.finished):
                runner.terminate(handle, 0)
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end and any(
            h.status().lost or not h.status().finished for h in handles
        ):
            runner.wait(handles, 0.2)
        runner.stop_server()
