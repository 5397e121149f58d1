"""`vcflow run` and `vcflow logs`: flows run to Succeed or Failed with real processes, the
exit status says which, a rerun resumes (also after SIGKILL, with no pod started twice),
Ctrl-C terminates the pods, and one process at a time runs a state directory."""

from __future__ import annotations

import json
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.runtime.run import CREATE_BATCH

from .flows import DEADLINE, ended, jobflow, processes_with, running, spawn, template, wait_for

Vc = Callable[..., Result]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "flow.yaml"


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + result.stderr
    return result


def test_a_two_job_flow_succeeds_and_prints_the_table(vc: Vc, manifest: Path) -> None:
    manifest.write_text(template("a", "true") + template("b", "true") + jobflow("f", "a", "b<a"))
    result = ok(vc("run", "-f", manifest))
    out = result.stdout
    assert "jobflow.flow.volcano.sh/f created" in out
    assert "f/a Completed" in out and "f/b Completed" in out  # one line per phase change
    table = out[out.index("FLOW") :].splitlines()
    assert table[0].split() == ["FLOW", "JOB", "PHASE", "DURATION"]
    assert [line.split()[:3] for line in table[1:3]] == [
        ["f", "a", "Completed"],
        ["f", "b", "Completed"],
    ]
    assert table[3].startswith("flow f Succeed in ")
    again = ok(vc("run", "-f", manifest))
    assert "jobflow.flow.volcano.sh/f unchanged" in again.stdout
    assert "flow f Succeed" in again.stdout


def test_a_flow_wider_than_a_create_batch_runs_every_job_once(vc: Vc, manifest: Path) -> None:
    # more roots than `CREATE_BATCH`, and a job after all of them: created over several syncs
    width = CREATE_BATCH + 7
    roots = [f"r{i:02d}" for i in range(width)]
    body = "".join(template(n, "true") for n in [*roots, "last"])
    manifest.write_text(body + jobflow("f", *roots, f"last<{', '.join(roots)}"))
    out = ok(vc("run", "-f", manifest, "--no-live", "--timeout", "120")).stdout
    assert "flow f Succeed in " in out
    jobs = ok(vc("get", "vcjobs", "-o", "json")).stdout
    items = json.loads(jobs)["items"]
    assert len(items) == width + 1
    assert {j["status"]["state"]["phase"] for j in items} == {"Completed"}
    assert {j["status"]["succeeded"] for j in items} == {1}  # each pod ran once


def test_a_failing_job_fails_the_flow_with_exit_1(vc: Vc, manifest: Path) -> None:
    manifest.write_text(template("a", "exit 3") + template("b", "true") + jobflow("f", "a", "b<a"))
    result = vc("run", "-f", manifest, "--timeout", "20")
    assert result.exit_code == 1, result.output
    assert "f/a Failed" in result.stdout
    assert "flow f Failed in" in result.stdout
    assert "f/b" not in result.stdout
    pods = ok(vc("get", "pods")).stdout
    assert "f-a-t-0" in pods and "Error" in pods


def test_env_and_logs(vc: Vc, manifest: Path) -> None:
    script = "echo index=$VK_TASK_INDEX; echo to-stderr >&2"
    manifest.write_text(template("a", script) + jobflow("f", "a"))
    ok(vc("run", "-f", manifest))
    assert ok(vc("logs", "f-a-t-0")).stdout == "index=0\nto-stderr\n"
    assert ok(vc("logs", "f-a-t-0", "-c", "main", "--tail", "1")).stdout == "to-stderr\n"
    assert ok(vc("logs", "f-a-t-0", "-f")).stdout == "index=0\nto-stderr\n"
    missing = vc("logs", "nope")
    assert missing.exit_code == 1 and "not found" in missing.stderr
    wrong = vc("logs", "f-a-t-0", "-c", "other")
    assert wrong.exit_code == 1 and "choose one of: main" in wrong.stderr


def test_gang_capacity_runs_jobs_one_after_the_other(vc: Vc, manifest: Path) -> None:
    manifest.write_text(
        template("a", "sleep 1", cpu="2")
        + template("b", "sleep 1", cpu="2")
        + jobflow("f", "a", "b")
    )
    ok(vc("run", "-f", manifest, "--capacity", "cpu=2"))
    spans = []
    for pod in ("f-a-t-0", "f-b-t-0"):
        text = ok(vc("get", "pod", pod, "-o", "json")).stdout
        state = json.loads(text)["status"]["containerStatuses"][0]["state"]["terminated"]
        spans.append((state["startedAt"], state["finishedAt"]))
    first, second = sorted(spans)
    assert second[0] >= first[1]


def test_the_timeout_exits_1_and_stops_the_pods(vc: Vc, manifest: Path) -> None:
    manifest.write_text(template("a", "sleep 30") + jobflow("f", "a"))
    began = time.monotonic()
    result = vc("run", "-f", manifest, "--timeout", "0.5")
    assert result.exit_code == 1
    assert "timeout: the flows did not finish within 0.5s; terminated 1 running pods" in (
        result.stderr
    )
    assert time.monotonic() - began < 15
    # the report says what the timeout found, not what terminating the pods left
    why = "the timeout passed: its running pods were terminated"
    assert f": {why}\n" in result.stdout.splitlines(keepends=True)[-1]
    row = next(line for line in result.stdout.splitlines() if line.startswith("f "))
    assert row.endswith(why)


def test_a_second_runner_is_refused(vc: Vc, manifest: Path, state_dir: Path) -> None:
    from vcflow.local.statedir import CONTROLLER, ControllerLock

    manifest.write_text(template("a", "true") + jobflow("f", "a"))
    state_dir.mkdir(parents=True)
    with ControllerLock(state_dir, CONTROLLER) as lock:
        assert lock.acquired
        result = vc("run", "-f", manifest)
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1
    assert "already runs them" in result.stderr


def test_the_volcano_example_shape_runs_near_its_critical_path(vc: Vc, tmp_path: Path) -> None:
    copy = tmp_path / "example"
    shutil.copytree(EXAMPLE, copy)
    for path in copy.glob("*.yaml"):
        path.write_text(path.read_text().replace("sleep 10s", "sleep 0.2"))
    began = time.monotonic()
    result = ok(vc("run", "-f", copy))
    elapsed = time.monotonic() - began
    assert "flow test Succeed in" in result.stdout
    for job in "abcde":
        assert f"test/{job} Completed" in result.stdout
    assert elapsed < 0.8 + 2.5, elapsed  # critical path 4 × 0.2 s, plus start-up
    assert "No resources found" in ok(vc("get", "vcjobs")).stderr + ok(vc("get", "vcjobs")).stdout


# -- as a separate process --------------------------------------------------------------


def test_ctrl_c_terminates_the_running_pods(tmp_path: Path, manifest: Path) -> None:
    started = tmp_path / "started"
    marker = "sleep 30.0713"
    manifest.write_text(template("a", f"echo go >> {started}; {marker}") + jobflow("f", "a"))
    with running(tmp_path / "state", manifest) as proc:
        wait_for(started, 1)
        assert processes_with(marker)
        code, out, err = ended(proc, signal.SIGINT)
    assert code == 130, out + err
    assert "interrupted: terminated 1 running pods" in err
    assert processes_with(marker) == []


def test_a_rerun_after_a_crash_resumes_and_runs_each_pod_once(
    tmp_path: Path, manifest: Path
) -> None:
    marks = tmp_path / "marks"
    script = f"echo $HOSTNAME >> {marks}; sleep 1"
    manifest.write_text(
        template("a", script)
        + template("b", script)
        + template("c", script)
        + jobflow("f", "a", "b<a", "c<b")
    )
    state_dir = tmp_path / "state"
    first = spawn(state_dir, manifest)
    try:
        wait_for(marks, 2)  # b runs
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=DEADLINE)
    second = spawn(state_dir, manifest)
    out, err = second.communicate(timeout=DEADLINE)
    assert second.returncode == 0, out + err
    assert "jobflow.flow.volcano.sh/f unchanged" in out
    assert "flow f Succeed" in out
    assert sorted(marks.read_text().split()) == ["f-a-t-0", "f-b-t-0", "f-c-t-0"]
