"""`vcflow logs --timestamps`, `--since` and `--since-time` with real processes: a pod
prints a line, waits 1.5 s, prints another. Each line's time (kubectl's RFC3339 with
nanoseconds) is when the pod server first saw it, so the two are about 1.5 s apart, within
its 0.2 s look; `--since 1s` just after the second line shows that one only. Embedded and
through `vcflow server` (kubectl's `logs --timestamps/--since/--since-time` and `vcflow
logs --kubeconfig`), for one pod, `-f`, `--tail 1` and `jobflow/NAME` (the prefix before
the time); a bad value is a one-line usage error."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcflow.cli.app import app
from vcflow.podserver import logtimes

from .conftest import Vc
from .flows import DEADLINE, ended, gated_flow, running, stop_pods, wait_until
from .test_remote import Server, running_server  # noqa: F401 (fixture)

POD = "f-a-t-0"
GAP = 1.5
STAMPED = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)")
PREFIXED = re.compile(r"\[pod/([^/]+)/main\] (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)")


def manifest(tmp_path: Path) -> tuple[Path, Path]:
    """A flow: job a prints `one`, then `two` once `go` exists; then job b prints `b`."""
    return gated_flow(tmp_path, "one", "two", "echo b")


def two_lines(log: Path, go: Path, meanwhile: Callable[[], None] = lambda: None) -> None:
    """Wait for `one` in the log, then GAP seconds (doing `meanwhile`), then let `two` be
    written and wait for it."""
    wait_until(lambda: log.exists() and b"one\n" in log.read_bytes(), "the first line")
    seen = time.monotonic()
    meanwhile()
    time.sleep(max(0.0, seen + GAP - time.monotonic()))
    go.touch()
    wait_until(lambda: b"two\n" in log.read_bytes(), "the second line")


def stamped(text: str) -> list[tuple[int, str]]:
    """(ns, line) of each `TIME line` line; fails on a line that is not one."""
    out = []
    for line in text.splitlines():
        found = STAMPED.fullmatch(line)
        assert found is not None, f"not a stamped line: {line!r}"
        out.append((logtimes.parse_rfc3339(found.group(1)), found.group(2)))
    return out


def by_pod(text: str) -> dict[str, list[str]]:
    """A flow's prefixed log lines grouped by pod, each pod's in the order printed."""
    pods: dict[str, list[str]] = {}
    for line in text.splitlines():
        pods.setdefault(line.split("]", 1)[0], []).append(line)
    return pods


def check_apart(lines: list[tuple[int, str]], started: int) -> None:
    """`one` then `two`, GAP apart give or take the look (0.2 s), within the test."""
    assert [text for _, text in lines] == ["one", "two"]
    (one, _), (two, _) = lines
    assert started <= one <= two <= time.time_ns()
    assert GAP - 0.3 < (two - one) / 1e9 < GAP + 0.6


def between(lines: list[tuple[int, str]]) -> str:
    """A whole-second RFC 3339 time after the first line's and at or before the second's
    (kubectl sends `--since-time` to the second; the lines are over a second apart)."""
    second = math.floor(lines[0][0] / 1e9) + 1
    assert second * 10**9 <= lines[1][0]
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def test_timestamps_and_since_of_a_pod_run_here(vc: Vc, tmp_path: Path, state_dir: Path) -> None:
    path, go = manifest(tmp_path)
    log = state_dir / "pods" / "default" / POD / "main.0.log"
    started = time.time_ns()
    followers: list[subprocess.Popen[str]] = []

    def follow() -> None:
        for target in (POD, "jobflow/f"):
            followers.append(
                subprocess.Popen(
                    [*VCFLOW, "--state-dir", str(state_dir), "logs", "-f", "--timestamps", target],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )

    try:
        with running(state_dir, path) as run:
            since: list[str] = []
            two_lines(log, go, follow)
            since.append(vc("logs", POD, "--since", "1s").stdout)  # (at once)
            assert since == ["two\n"]
            assert ended(run)[0] == 0
        followed = [f.communicate(timeout=DEADLINE) for f in followers]
        assert [f.returncode for f in followers] == [0, 0], followed
        check_apart(stamped(followed[0][0]), started)
        whole = vc("logs", POD, "--timestamps")
        assert (whole.exit_code, whole.stderr) == (0, "")
        lines = stamped(whole.stdout)
        check_apart(lines, started)
        assert stamped(followed[0][0]) == lines  # (-f: the same times)
        assert stamped(vc("logs", POD, "--timestamps", "--tail", "1").stdout) == lines[1:]
        assert vc("logs", POD, "--since-time", between(lines)).stdout == "two\n"
        assert vc("logs", POD, "--since", "1h").stdout == "one\ntwo\n"

        flow = vc("logs", "jobflow/f", "--timestamps")
        assert flow.exit_code == 0, flow.output
        rows = [PREFIXED.fullmatch(line) for line in flow.stdout.splitlines()]
        assert all(rows), flow.stdout
        assert [(r.group(1), r.group(3)) for r in rows if r] == [
            (POD, "one"),
            (POD, "two"),
            ("f-b-t-0", "b"),
        ]
        assert [logtimes.parse_rfc3339(r.group(2)) for r in rows if r][:2] == [
            ns for ns, _ in lines
        ]
        # -f of the flow: the same lines, each pod's in order; pods interleave as read
        assert by_pod(followed[1][0]) == by_pod(flow.stdout)
    finally:
        go.touch()
        for follower in followers:
            if follower.poll() is None:
                follower.kill()
                follower.communicate()
        stop_pods(state_dir)


VCFLOW = (sys.executable, "-m", "vcflow")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "5"], 'Invalid value for --since: invalid duration "5" (give a unit'),
        (["--since", "soon"], 'invalid duration "soon"'),
        (["--since", "-5m"], "must be greater than 0"),
        (["--since-time", "yesterday"], '"yesterday" is not an RFC 3339 time'),
        (["--since", "1m", "--since-time", "2026-12-01T23:00:00Z"], "not both"),
    ],
)
def test_a_bad_since_is_a_usage_error(vc: Vc, args: list[str], message: str) -> None:
    for target in (POD, "jobflow/f"):
        result = vc("logs", target, *args)
        assert result.exit_code == 2, result.output
        (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error")]
        assert message in error
        assert "Traceback" not in result.output


def kubectl_on(server: Server, home: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    from tests.server.test_kubectl import kubectl_binary

    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "KUBECONFIG": str(server.state_dir / "kubeconfig"),
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kubectl_binary(), *args], env=env, capture_output=True, text=True, timeout=DEADLINE
        )

    return run


def test_timestamps_and_since_through_the_server(
    running_server: Server,  # noqa: F811
    tmp_path: Path,
) -> None:
    """kubectl's `logs --timestamps`, `--since`, `--since-time` against `vcflow server`, and
    `vcflow logs` in remote mode (in this process: `--since 1s` is read at once)."""
    kubectl = kubectl_on(running_server, tmp_path / "home")
    kubeconfig = ("--kubeconfig", str(running_server.state_dir / "kubeconfig"))
    runner = CliRunner()

    def remote(*args: str) -> str:
        result = runner.invoke(app, ["logs", *args, *kubeconfig])
        assert result.exit_code == 0, result.output
        return result.stdout

    path, go = manifest(tmp_path)
    log = running_server.state_dir / "pods" / "default" / POD / "main.0.log"
    started = time.time_ns()
    applied = kubectl("apply", "-f", str(path))
    assert applied.returncode == 0, applied.stderr
    try:
        two_lines(log, go)
        assert kubectl("logs", POD, "--since=1s").stdout == "two\n"  # (at once)
        assert remote(POD, "--since", "1s") == "two\n"
        end = time.monotonic() + DEADLINE
        while kubectl("get", "jf", "f", "-o", "jsonpath={.status.state.phase}").stdout != (
            "Succeed"
        ):
            assert time.monotonic() < end, "the flow did not succeed"
            time.sleep(0.2)
        got = kubectl("logs", POD, "--timestamps")
        assert (got.returncode, got.stderr) == (0, "")
        lines = stamped(got.stdout)
        check_apart(lines, started)
        assert stamped(remote(POD, "--timestamps")) == lines
        assert stamped(kubectl("logs", POD, "--timestamps", "--tail=1").stdout) == lines[1:]
        assert kubectl("logs", POD, f"--since-time={between(lines)}").stdout == "two\n"
        assert remote(POD, "--since-time", between(lines)) == "two\n"
        assert stamped(remote(POD, "-f", "--timestamps")) == lines
        prefixed = kubectl("logs", "-l", "volcano.sh/job-name=f-a", "--prefix", "--timestamps")
        assert prefixed.stdout.splitlines() == [
            f"[pod/{POD}/main] {logtimes.rfc3339(ns)} {text}" for ns, text in lines
        ]
        flow = remote("jobflow/f", "--timestamps").splitlines()
        assert flow[:2] == prefixed.stdout.splitlines()
        assert len(flow) == 3 and flow[2].startswith("[pod/f-b-t-0/main] ")
        assert flow[2].endswith(" b")
    finally:
        go.touch()
