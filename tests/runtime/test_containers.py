"""Containers as processes: exit codes, start failures, init containers, several containers
at once, in-place restarts, env and working directory — real processes, deadlines, no sleeps."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from vcflow.runtime import logs
from vcflow.runtime.pods import PodRunner

from .conftest import finished, pod, request, sh, wait_until


def test_exit_zero_succeeds(runner: PodRunner) -> None:
    handle = runner.launch(request("ok", pod({"name": "c", "command": ["true"]})))
    status = finished(runner, handle)
    assert status.phase == "Succeeded"
    assert status.exit_code == 0
    (c,) = status.containers
    assert (c.state, c.reason, c.restart_count) == ("terminated", "Completed", 0)
    assert c.started_at and c.finished_at and status.start_time
    assert not status.supervisor_alive and not status.lost


def test_exit_code_fails_the_pod(runner: PodRunner) -> None:
    status = finished(runner, runner.launch(request("three", pod(sh("c", "exit 3")))))
    assert (status.phase, status.exit_code, status.containers[0].reason) == ("Failed", 3, "Error")


def test_killed_by_a_signal_is_128_plus_n(runner: PodRunner) -> None:
    # `$$` is Kubernetes' escape for `$`: the shell gets `kill -USR1 $$`
    status = finished(runner, runner.launch(request("sig", pod(sh("c", "kill -USR1 $$$$")))))
    assert (status.exit_code, status.containers[0].signal) == (128 + 10, 10)


def test_missing_executable_is_127(runner: PodRunner) -> None:
    handle = runner.launch(request("nope", pod({"name": "c", "command": ["no-such-cmd-x"]})))
    status = finished(runner, handle)
    c = status.containers[0]
    assert (status.phase, c.exit_code, c.reason) == ("Failed", 127, "ContainerCannotRun")
    assert c.message == 'exec: "no-such-cmd-x": executable file not found in $PATH'
    assert logs.read_log(handle.pod_dir, "c") == f"vcflow: {c.message}\n".encode()


def test_not_executable_is_126(runner: PodRunner, tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\n")
    status = finished(
        runner, runner.launch(request("x", pod({"name": "c", "command": [str(script)]})))
    )
    assert (status.exit_code, status.containers[0].reason) == (126, "ContainerCannotRun")


def test_no_command_cannot_run(runner: PodRunner) -> None:
    spec = pod({"name": "c", "image": "busybox", "args": ["echo"]})
    status = finished(runner, runner.launch(request("img", spec)))
    c = status.containers[0]
    assert (status.phase, c.exit_code, c.reason) == ("Failed", 128, "NoCommand")
    assert "entrypoint is unknown" in (c.message or "")


def test_init_containers_run_first_in_order(runner: PodRunner, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    spec = pod(
        sh("main", f"echo main >> {trace}"),
        initContainers=[sh("one", f"echo one >> {trace}"), sh("two", f"echo two >> {trace}")],
    )
    status = finished(runner, runner.launch(request("init", spec)))
    assert status.phase == "Succeeded"
    assert trace.read_text().split() == ["one", "two", "main"]
    assert [c.reason for c in status.init_containers] == ["Completed", "Completed"]


def test_failing_init_container_fails_the_pod(runner: PodRunner, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    spec = pod(
        sh("main", f"echo main >> {trace}"),
        initContainers=[sh("bad", "exit 4"), sh("never", f"echo never >> {trace}")],
    )
    status = finished(runner, runner.launch(request("initfail", spec)))
    assert status.phase == "Failed"
    assert status.init_containers[0].exit_code == 4
    assert status.init_containers[1].state == "waiting"
    assert status.containers[0].state == "waiting"
    assert not trace.exists()


def test_init_container_restarts_in_place_under_on_failure(
    runner: PodRunner, tmp_path: Path
) -> None:
    count = tmp_path / "count"
    flaky = f"echo x >> {count}; [ $(wc -l < {count}) -ge 3 ]"
    spec = pod(sh("main", "true"), policy="OnFailure", initContainers=[sh("flaky", flaky)])
    status = finished(runner, runner.launch(request("initretry", spec)))
    assert status.phase == "Succeeded"
    assert status.init_containers[0].restart_count == 2
    assert status.init_containers[0].last_exit_code == 1


def test_containers_run_at_once(runner: PodRunner, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    meet = (
        "touch {mine}; i=0; while [ ! -e {other} ]; do sleep 0.01; i=$((i+1)); "
        "if [ $i -gt 1000 ]; then exit 1; fi; done"
    )
    spec = pod(sh("a", meet.format(mine=a, other=b)), sh("b", meet.format(mine=b, other=a)))
    status = finished(runner, runner.launch(request("both", spec)))
    assert status.phase == "Succeeded"
    assert [c.exit_code for c in status.containers] == [0, 0]


def test_never_fails_after_all_ended(runner: PodRunner, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    spec = pod(sh("bad", "exit 2"), sh("slow", f"while [ ! -e {gate} ]; do sleep 0.01; done"))
    handle = runner.launch(request("mixed", spec))
    status = wait_until(
        runner, handle, lambda s: bool(s.containers) and s.containers[0].state == "terminated"
    )
    assert status.phase == "Running"
    gate.touch()
    status = finished(runner, handle)
    assert (status.phase, status.exit_code) == ("Failed", 2)


def test_on_failure_restarts_in_place(runner: PodRunner, tmp_path: Path) -> None:
    count = tmp_path / "count"
    script = f"echo run >> {count}; echo attempt; [ $(wc -l < {count}) -ge 3 ] || exit 5"
    handle = runner.launch(request("retry", pod(sh("c", script), policy="OnFailure")))
    status = finished(runner, handle)
    c = status.containers[0]
    assert (status.phase, c.restart_count, c.exit_code, c.last_exit_code) == (
        "Succeeded",
        2,
        0,
        5,
    )
    assert logs.read_log(handle.pod_dir, "c") == b"attempt\n"
    assert [r for r, _ in logs.log_files(handle.pod_dir, "c")] == [0, 1, 2]


def test_always_restarts_until_terminated(runner: PodRunner) -> None:
    handle = runner.launch(request("always", pod(sh("c", "exit 0"), policy="Always")))
    wait_until(runner, handle, lambda s: bool(s.containers) and s.containers[0].restart_count >= 2)
    assert handle.status().phase == "Running"
    runner.terminate(handle, 1)
    status = finished(runner, handle)
    assert (status.phase, status.reason) == ("Failed", "Terminated")


def test_env_and_expansion_reach_the_process(runner: PodRunner) -> None:
    env = [
        {"name": "GREETING", "value": "hi-$(EXTRA)"},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
    ]
    script = 'echo "$GREETING $POD $APP $EXTRA $HOSTNAME" "$1"'
    container = sh("c", script, env=env, args=["$(GREETING)", "$$(POD)"])
    req = request("env", pod(container), labels={"app": "demo"}, env={"EXTRA": "x"})
    handle = runner.launch(req)
    assert finished(runner, handle).phase == "Succeeded"
    assert logs.read_log(handle.pod_dir, "c") == b"hi-x env demo x env $(POD)\n"


def test_environment_is_minimal(runner: PodRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCFLOW_TEST_LEAK", "leaked")
    handle = runner.launch(request("minimal", pod(sh("c", "env | sort"))))
    assert finished(runner, handle).phase == "Succeeded"
    names = {line.split("=", 1)[0] for line in logs.read_log(handle.pod_dir, "c").decode().split()}
    assert "VCFLOW_TEST_LEAK" not in names
    assert {"PATH", "HOSTNAME"} <= names


def test_working_dir(runner: PodRunner, tmp_path: Path) -> None:
    spec = pod(
        sh("default", "pwd"),
        sh("given", "pwd", workingDir=str(tmp_path)),
        sh("missing", "pwd", workingDir=str(tmp_path / "nope")),
    )
    handle = runner.launch(request("cwd", spec))
    status = finished(runner, handle)
    read = lambda name: logs.read_log(handle.pod_dir, name).decode().strip()  # noqa: E731
    assert read("default") == str(handle.pod_dir / "work")
    assert read("given") == str(tmp_path)
    missing = status.containers[2]
    assert (missing.exit_code, missing.reason) == (128, "ContainerCannotRun")
    assert "chdir to working directory" in read("missing")


def test_relative_command_runs_from_the_working_dir(runner: PodRunner, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    spec = pod({"name": "c", "command": ["./run.sh"], "workingDir": str(tmp_path)})
    handle = runner.launch(request("rel", spec))
    assert finished(runner, handle).phase == "Succeeded"
    assert logs.read_log(handle.pod_dir, "c") == b"ran\n"


def test_wire_status_parses_as_a_pod_status(runner: PodRunner) -> None:
    pod_api = pytest.importorskip("vcflow.api.pod")
    status = finished(runner, runner.launch(request("wire", pod(sh("c", "exit 1")))))
    parsed = pod_api.PodStatus.from_dict(status.wire)
    assert parsed.phase == "Failed"
    assert parsed.container_statuses[0].state.terminated.exit_code == 1


@pytest.mark.skipif(shutil.which("sleep") is None, reason="needs sleep")
def test_processes_left_behind_are_killed_with_the_container(
    runner: PodRunner, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child"
    handle = runner.launch(request("orphan", pod(sh("c", f"sleep 30 & echo $! > {pid_file}"))))
    assert finished(runner, handle).phase == "Succeeded"
    child = int(pid_file.read_text())

    def gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        try:
            return Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"
        except FileNotFoundError:  # (reaped between the two looks)
            return True

    from .conftest import eventually

    eventually(gone, what="the background sleep was killed")
