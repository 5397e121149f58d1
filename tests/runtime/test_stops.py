"""Stopping pods: terminate with a grace period, activeDeadlineSeconds."""

from __future__ import annotations

import time
from pathlib import Path

from vcflow.runtime import logs
from vcflow.runtime.pods import PodRunner

from .conftest import eventually, finished, launch_unasked, pod, request, sh, wait_until

TRAPS = 'trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.01; done'
IGNORES = 'trap "" TERM; echo ready; while :; do sleep 0.01; done'


def ready(runner: PodRunner, pod_dir: Path, *names: str) -> None:
    from .conftest import eventually

    eventually(
        lambda: all(b"ready" in logs.read_log(pod_dir, n) for n in names),
        what=f"{names} ready",
    )


def test_terminate_sigterm_then_sigkill_after_grace(runner: PodRunner) -> None:
    handle = runner.launch(request("term", pod(sh("traps", TRAPS), sh("ignores", IGNORES))))
    wait_until(runner, handle, lambda s: s.phase == "Running")
    ready(runner, handle.pod_dir, "traps", "ignores")
    asked = time.monotonic()
    runner.terminate(handle, 0.5)
    status = finished(runner, handle)
    took = time.monotonic() - asked
    assert (status.phase, status.reason) == ("Failed", "Terminated")
    traps, ignores = status.containers
    assert (traps.exit_code, ignores.exit_code, ignores.signal) == (0, 137, 9)
    assert logs.read_log(handle.pod_dir, "traps").endswith(b"got-term\n")
    assert 0.5 <= took < 5


def test_a_shorter_grace_cuts_short_a_stop_under_way(runner: PodRunner) -> None:
    # `vcflow run`'s Ctrl-C (its stop grace) of a pod Terminating under an hour's grace
    script = 'trap "echo got-term" TERM; echo ready; while :; do sleep 0.01; done'
    handle = runner.launch(request("long", pod(sh("c", script))))
    ready(runner, handle.pod_dir, "c")
    runner.terminate(handle, 3600)
    eventually(lambda: b"got-term" in logs.read_log(handle.pod_dir, "c"), what="the SIGTERM")
    runner.terminate(handle, 7200)  # (a longer grace never lengthens the stop)
    runner.terminate(handle, 0.2)
    status = finished(runner, handle, timeout=10)
    assert (status.phase, status.reason, status.exit_code) == ("Failed", "Terminated", 137)


def test_terminate_without_grace_kills_at_once(runner: PodRunner) -> None:
    handle = runner.launch(request("now", pod(sh("c", IGNORES))))
    ready(runner, handle.pod_dir, "c")
    runner.terminate(handle, 0)
    status = finished(runner, handle, timeout=5)
    assert (status.reason, status.exit_code) == ("Terminated", 137)


def test_terminate_stops_init_containers_and_what_follows(
    runner: PodRunner, tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    spec = pod(sh("main", f"echo main >> {trace}"), initContainers=[sh("init", IGNORES)])
    handle = runner.launch(request("terminit", spec))
    ready(runner, handle.pod_dir, "init")
    runner.terminate(handle, 0.1)
    status = finished(runner, handle)
    assert (status.phase, status.reason) == ("Failed", "Terminated")
    assert status.init_containers[0].exit_code == 137
    assert status.containers[0].state == "waiting"
    assert not trace.exists()


def test_terminate_of_a_finished_pod_changes_nothing(runner: PodRunner) -> None:
    handle = runner.launch(request("done", pod(sh("c", "true"))))
    before = finished(runner, handle)
    runner.terminate(handle, 0)
    after = handle.status()
    assert (after.phase, after.seq) == (before.phase, before.seq) == ("Succeeded", before.seq)


def test_terminate_before_the_claim_never_starts_it(runner: PodRunner, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    handle = launch_unasked(runner, request("early", pod(sh("c", f"echo ran > {trace}"))))
    assert not handle.status().claimed
    runner.terminate(handle, 0)
    status = finished(runner, handle)
    assert (status.phase, status.reason) == ("Failed", "Terminated")
    assert status.containers[0].state == "waiting"
    assert not trace.exists()


def test_active_deadline_seconds(runner: PodRunner) -> None:
    spec = pod(sh("c", IGNORES), policy="Always", activeDeadlineSeconds=1)
    started = time.monotonic()
    handle = runner.launch(request("deadline", spec))
    status = finished(runner, handle)
    assert 1 <= time.monotonic() - started < 6
    assert (status.phase, status.reason) == ("Failed", "DeadlineExceeded")
    assert status.message == "Pod was active on the node longer than the specified deadline"
    assert status.exit_code == 137


def test_deadline_counts_across_restarts(runner: PodRunner) -> None:
    spec = pod(sh("c", "sleep 0.2; exit 1"), policy="OnFailure", activeDeadlineSeconds=1)
    status = finished(runner, runner.launch(request("crashloop", spec)))
    assert status.reason == "DeadlineExceeded"
    assert status.containers[0].restart_count >= 1
