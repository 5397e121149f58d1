"""The flow features with real processes (docs/flow-features.md): a job retried with a
backoff until it succeeds, or until its retries are spent; a `vcflow run` killed during a
backoff and run again makes the attempt once; a tcpSocket probe releases a client while its
server still runs; an on-failure entry; an entry deadline; `vcflow retry` of a failed
fan-out. Jobs count their runs in marker files."""

from __future__ import annotations

import itertools
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

from .flows import DEADLINE, flow, processes_with, spawn, stop_pods, template, wait_until

Vc = Callable[..., Result]


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "flow.yaml"


def counting(runs: Path, succeed_after: int) -> str:
    """A script that records each run (a line with the time) and fails the first
    `succeed_after - 1` times."""
    return f"date +%s.%N >> {runs}; test $(wc -l < {runs}) -ge {succeed_after}"


def opened(state_dir: Path) -> SqliteStore:
    return SqliteStore.in_state_dir(state_dir)


def status(state_dir: Path, name: str) -> dict[str, object]:
    """The flow's status ({} while it is not stored yet)."""
    if not (state_dir / "vcflow.db").exists():
        return {}
    with opened(state_dir) as store:
        try:
            found = store.get(JobFlow, "default", name).status
        except NotFound:
            return {}
        return found.to_dict() if found else {}


def report(out: str) -> dict[str, str]:
    """The closing table: entry → phase."""
    table = out[out.index("FLOW ") :].split("\n\n")[0].splitlines()[1:]
    return {row.split()[1]: row.split()[2] for row in table if row.startswith("f ")}


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_a_job_failing_twice_succeeds_on_its_third_attempt_after_each_backoff(
    vc: Vc, manifest: Path, tmp_path: Path, state_dir: Path
) -> None:
    runs = tmp_path / "runs"
    manifest.write_text(
        template("flaky", counting(runs, 3))
        + flow(
            "f",
            "{name: flaky, retryPolicy: {maxRetries: 2, backoff: {type: Constant, baseDelay: 1s}}}",
        )
    )
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    times = [float(t) for t in lines(runs)]
    assert len(times) == 3
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(times)), times
    assert times[2] - times[0] >= 2.0
    item = status(state_dir, "f")["jobStatusList"][0]  # type: ignore[index]
    assert (item["restartCount"], item["attempt"], item["state"]) == (2, 3, "Completed")
    out = result.stdout
    assert "f/flaky Backoff: attempt 2 of 3 at " in out
    assert "f/flaky Running (attempt 3)" in out
    assert "Completed (3 attempts)" in out
    assert "flow f Succeed" in out
    described = vc("describe", "jf", "f").stdout
    assert "2 retries, OnFailure, Constant 1s" in described
    assert "ATTEMPT" in described


def test_when_the_retries_are_spent_the_flow_fails(
    vc: Vc, manifest: Path, tmp_path: Path, state_dir: Path
) -> None:
    runs = tmp_path / "runs"
    manifest.write_text(
        template("bad", counting(runs, 99))
        + template("next", "true")
        + flow(
            "f",
            "{name: bad, retryPolicy: {maxRetries: 1, backoff: {type: Constant, baseDelay: 1s}}}",
            "{name: next, dependsOn: {targets: [bad]}}",
        )
    )
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 1, result.output
    assert len(lines(runs)) == 2
    assert "RetriesExhausted: Failed after 2 attempts" in result.stdout
    assert status(state_dir, "f")["failedJobs"] == ["f-bad"]


def test_a_run_killed_during_a_backoff_makes_the_attempt_once_when_run_again(
    manifest: Path, tmp_path: Path, state_dir: Path
) -> None:
    runs = tmp_path / "runs"
    manifest.write_text(
        template("a", counting(runs, 2))
        + flow(
            "f", "{name: a, retryPolicy: {maxRetries: 3, backoff: {type: Constant, baseDelay: 3s}}}"
        )
    )
    first = spawn(state_dir, manifest)
    try:

        def waiting() -> bool:
            conds = status(state_dir, "f").get("conditions") or {}
            return (conds.get("f-a") or {}).get("reason") == "Backoff"  # type: ignore[union-attr]

        wait_until(waiting, "the backoff")
        assert len(lines(runs)) == 1
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=DEADLINE)
    try:
        second = spawn(state_dir, manifest, "--timeout", "30")
        out, err = second.communicate(timeout=DEADLINE)
    finally:
        stop_pods(state_dir)
    assert second.returncode == 0, out + err
    times = [float(t) for t in lines(runs)]
    assert len(times) == 2  # attempt 2, once
    assert times[1] - times[0] >= 3.0  # when it was due, not at once
    item = status(state_dir, "f")["jobStatusList"][0]  # type: ignore[index]
    assert item["attempt"] == 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVER = """
import socket, sys, time, pathlib
port, done = int(sys.argv[1]), pathlib.Path(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(8)
s.settimeout(0.1)
end = time.monotonic() + 25
while not done.exists():
    if time.monotonic() > end:
        sys.exit(1)  # never released: the client did not run while the server did
    try:
        s.accept()[0].close()
    except OSError:
        pass
"""


def test_a_tcp_probe_releases_the_client_while_its_server_still_runs(
    vc: Vc, manifest: Path, tmp_path: Path, state_dir: Path
) -> None:
    port, done = free_port(), tmp_path / "client-ran"
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    manifest.write_text(
        template("server", f"{sys.executable} {server} {port} {done}")
        + template("client", f"touch {done}")
        + flow(
            "f",
            "{name: server}",
            "{name: client, dependsOn: {targets: [server], "
            f"probe: {{tcpSocketList: [{{taskName: t, port: {port}}}]}}}}}}",
        )
    )
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("f/client Completed") < out.index("f/server Completed")


def test_an_on_failure_entry_runs_when_its_target_fails_and_the_flow_succeeds(
    vc: Vc, manifest: Path, tmp_path: Path, state_dir: Path
) -> None:
    cleaned = tmp_path / "cleaned"
    manifest.write_text(
        template("work", "exit 3")
        + template("report", "true")
        + template("cleanup", f"touch {cleaned}")
        + flow(
            "f",
            "{name: work}",
            "{name: report, dependsOn: {targets: [work]}}",
            "{name: cleanup, dependsOn: {targets: [work], outcome: Failed}}",
        )
    )
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert cleaned.exists()
    assert "flow f Succeed" in result.stdout
    assert report(result.stdout) == {"work": "Failed", "report": "Skipped", "cleanup": "Completed"}


def test_an_entry_deadline_terminates_the_job_and_fails_it_deadline_exceeded(
    vc: Vc, manifest: Path, state_dir: Path, marker: str
) -> None:
    manifest.write_text(
        template("slow", marker) + flow("f", "{name: slow, activeDeadlineSeconds: 2}")
    )
    started = time.monotonic()
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 1, result.output
    assert time.monotonic() - started < 20
    assert processes_with(marker) == []
    with opened(state_dir) as store:
        assert store.get(VCJob, "default", "f-slow").phase == "Terminated"
    assert "DeadlineExceeded: attempt 1 ran past its activeDeadlineSeconds (2s)" in result.stdout


def test_retry_of_a_failed_fan_out_reruns_only_what_failed_and_after_it(
    vc: Vc, manifest: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    fixed = tmp_path / "fixed"
    record = lambda name: f"echo {name} >> {marks}/{name}"  # noqa: E731
    manifest.write_text(
        template("a", record("a"))
        + template("b1", record("b1"))
        + template("b2", f"{record('b2')}; test -e {fixed}")
        + template("b3", record("b3"))
        + template("c", record("c"))
        + flow(
            "f",
            "{name: a}",
            "{name: b1, dependsOn: {targets: [a]}}",
            "{name: b2, dependsOn: {targets: [a]}}",
            "{name: b3, dependsOn: {targets: [a]}}",
            "{name: c, dependsOn: {targets: [b1, b2, b3]}}",
        )
    )
    first = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert first.exit_code == 1, first.output

    def counts() -> dict[str, int]:
        return {p.name: len(lines(p)) for p in sorted(marks.iterdir())}

    assert counts() == {"a": 1, "b1": 1, "b2": 1, "b3": 1}
    fixed.touch()
    retried = vc("retry", "jobflow", "f")
    assert retried.exit_code == 0, retried.output
    again = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert again.exit_code == 0, again.output
    assert counts() == {"a": 1, "b1": 1, "b2": 2, "b3": 1, "c": 1}
