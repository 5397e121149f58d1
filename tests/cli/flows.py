"""Builders and process helpers of the `vcflow run` tests (tests/local, tests/runtime and
tests/server use them too): manifests of one-task templates or vcjobs running a shell script,
flows of `entry<deps` strings or of YAML entries, `vcflow` as a child process, the processes
of a test's pods, and the JobFlow and vcjobs a run's `Progress` is fed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.runtime.conftest import shut_down

from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.vcjob import VCJob
from vcflow.runtime.pods import PodRunner

DEADLINE = 30.0


def template(
    name: str,
    script: str = "true",
    *,
    cpu: str = "",
    policy: str = "Never",
    kind: str = "JobTemplate",
    replicas: int = 1,
    image: str = "busybox",
    container: str = "main",
    command: str = "",
    plugins: bool = True,
    meta: str = "",
    spec: str = "",
    pod: str = "",
    extra: str = "",
) -> str:
    """A JobTemplate `name` (a vcjob with `kind="Job"`) of one task `t`: `replicas` pods of
    one container running `sh -c 'SCRIPT'` (or `command`, a YAML list). `meta` is more of
    the metadata's flow mapping (`, labels: {...}`); `spec`, `pod` and `extra` are more lines
    of the job's spec, the pod's spec and the container (each starting with a newline)."""
    api = "batch.volcano.sh/v1alpha1" if kind == "Job" else "flow.volcano.sh/v1alpha1"
    plugin = "\n  plugins: {env: []}" if plugins else ""
    pulled = f"\n              image: {image}" if image else ""
    requests = f"\n              resources: {{requests: {{cpu: '{cpu}'}}}}" if cpu else ""
    return f"""
apiVersion: {api}
kind: {kind}
metadata: {{name: {name}{meta}}}
spec:
  minAvailable: 1{plugin}{spec}
  tasks:
    - replicas: {replicas}
      name: t
      template:
        spec:
          restartPolicy: {policy}{pod}
          containers:
            - name: {container}{pulled}
              command: {command or f"[sh, -c, '{script}']"}{extra}{requests}
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


def flow(name: str, *entries: str, spec: str = "") -> str:
    """A JobFlow whose entries are given as YAML flow mappings (`{name: a, ...}`); `spec` is
    more lines of its spec (each ending with a newline)."""
    body = "".join(f"    - {e}\n" for e in entries)
    return (
        f"\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {{name: {name}}}\n"
        f"spec:\n{spec}  flows:\n{body}"
    )


CONFIG = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {lr: "0.1", epochs: "3"}
---
apiVersion: v1
kind: Secret
metadata: {name: token}
{secret}stringData: {token: s3cret}
"""


def config(secret: str = "") -> str:
    """ConfigMap `settings` (lr, epochs) and Secret `token` (`token: s3cret` as stringData,
    `secret`: more lines of the Secret)."""
    return CONFIG.replace("{secret}", secret)


def gated_flow(tmp_path: Path, first: str, second: str, then: str) -> tuple[Path, Path]:
    """Flow f: job a prints `first`, then `second` once the file `go` exists; then job b runs
    the script `then`: (the manifest, tmp_path/f.yaml; go)."""
    go = tmp_path / "go"
    manifest = tmp_path / "f.yaml"
    script = f"echo {first}; while [ ! -e {go} ]; do sleep 0.05; done; echo {second}"
    manifest.write_text(template("a", script) + template("b", then) + jobflow("f", "a", "b<a"))
    return manifest, go


def child(*args: str) -> subprocess.Popen[str]:
    """`vcflow ARGS...` as a child process (output piped)."""
    return subprocess.Popen(
        [sys.executable, "-m", "vcflow", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def started(state_dir: Path, *args: str) -> subprocess.Popen[str]:
    """`vcflow --state-dir STATE_DIR ARGS...` as a child process (output piped)."""
    return child("--state-dir", str(state_dir), *args)


def spawn(state_dir: Path, manifest: Path, *args: str) -> subprocess.Popen[str]:
    """`vcflow run -f MANIFEST ARGS...` as a child process (output piped)."""
    return started(state_dir, "run", "-f", str(manifest), "--no-live", *args)


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


def kill_all(marker: str) -> None:
    """SIGKILL every process whose command line holds `marker`."""
    for pid in processes_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextmanager
def sleeping(test: str, seconds: int = 30) -> Iterator[str]:
    """A `sleep` command only the test named `test` runs (to find its processes); what
    still runs it after the block is killed."""
    text = f"sleep {seconds}.{abs(hash(test)) % 10**6:06d}"
    try:
        yield text
    finally:
        kill_all(text)


@contextmanager
def supervised(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """`proc` for the block; killed if still running after it, its pipes read to the end."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def running(
    state_dir: Path, manifest: Path, *args: str
) -> AbstractContextManager[subprocess.Popen[str]]:
    """`vcflow run` as a child process for the block; killed if still running after it."""
    return supervised(spawn(state_dir, manifest, *args))


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


def wait_until(check: Callable[[], object], what: str) -> None:
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
    shut_down(PodRunner(state_dir))


def followed(argv: list[str], go: Path, timeout: float = DEADLINE) -> tuple[str, int, str, str]:
    """`argv` (a `vcflow logs -f`) as a child process: its first line; then `go` is touched
    and the rest read until it ends: (first line, exit code, the rest, stderr)."""
    follower = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert follower.stdout is not None
        first = follower.stdout.readline()
        go.touch()
        out, err = follower.communicate(timeout=timeout)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.communicate()
    return first, follower.returncode, out, err


def flow_object(spec: dict[str, Any], status: dict[str, Any] | None = None) -> JobFlow:
    """JobFlow `f` (uid `u`, created 2027-01-15T08:00:00Z) of `spec`, as a run's `Progress`
    is given it, with `status` if any."""
    out = JobFlow.from_dict(
        {
            "metadata": {
                "name": "f",
                "namespace": "default",
                "uid": "u",
                "creationTimestamp": "2027-01-15T08:00:00Z",
            },
            "spec": spec,
        }
    )
    out.status = JobFlowStatus.model_validate(status) if status else None
    return out


def flow_job(name: str, phase: str, attempt: int = 1, uid: str = "") -> VCJob:
    """Vcjob `f-NAME` of flow `f` (`flow_object`) in `phase`, its `attempt` annotated after
    the first."""
    ref = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "f", "uid": "u"}
    annotations = {"vcflow.io/attempt": str(attempt)} if attempt > 1 else {}
    metadata: dict[str, Any] = {"name": f"f-{name}", "namespace": "default"}
    if uid:
        metadata["uid"] = uid
    metadata |= {"annotations": annotations, "ownerReferences": [{**ref, "controller": True}]}
    return VCJob.from_dict({"metadata": metadata, "status": {"state": {"phase": phase}}})
