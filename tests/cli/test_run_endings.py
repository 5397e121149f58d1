"""How a `vcflow run` ends, with real processes: never leaving work unsupervised (a failed
flow's other jobs are waited for, or terminated with --fail-fast, or by Ctrl-C), with the
store telling the truth afterwards (no vcjob Running without a pod, no pod Terminating
forever, a job that ended while no run watched ends when its process did)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.podserver import podfs
from vcflow.store import SqliteStore

from .conftest import RunOne, Vc
from .flows import (
    cli,
    ended,
    flow,
    jobflow,
    processes_with,
    running,
    template,
    wait_for,
    wait_until,
)


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "flow.yaml"


@pytest.fixture
def long_flow(tmp_path: Path, manifest: Path, marker: str) -> tuple[Path, Path]:
    """Flow f of one job, a, that adds a line to `started` as it starts, then sleeps
    (`marker`): (the state directory, `started`)."""
    started = tmp_path / "started"
    manifest.write_text(template("a", f"echo go >> {started}; {marker}") + jobflow("f", "a"))
    return tmp_path / "state", started


def opened(state_dir: Path) -> SqliteStore:
    return SqliteStore.in_state_dir(state_dir)


def phases(state_dir: Path) -> dict[str, str]:
    with opened(state_dir) as store:
        return {job.name: job.phase for job in store.list(VCJob)}


def row(out: str, entry: str) -> list[str]:
    """The closing table's row of flow f's `entry`: flow, job, phase, duration, reason."""
    line = next(x for x in out.splitlines() if x.split()[:2] == ["f", entry])
    return [cell.strip() for cell in line.split("   ") if cell.strip()]


def pods(state_dir: Path) -> dict[str, str]:
    """Pod name → phase, `Terminating` for a pod being deleted."""
    with opened(state_dir) as store:
        return {p.name: "Terminating" if p.deleting else p.phase for p in store.list(Pod)}


def flow_status(state_dir: Path, name: str) -> dict[str, object]:
    with opened(state_dir) as store:
        found = store.get(JobFlow, "default", name)
        return found.status.to_dict() if found.status else {}


def test_a_failed_flow_waits_for_its_running_jobs_and_records_their_end(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(
        template("bad", "echo broken; exit 3")
        + template("slow", "sleep 1.5; echo done")
        + jobflow("f", "bad", "slow")
    )
    result = vc("run", "-f", manifest, "--no-live")
    assert result.exit_code == 1, result.output
    assert "waiting for 1 running job(s) to end: f-slow" in result.stderr
    assert "f/slow Completed" in result.stdout
    assert phases(state_dir) == {"f-bad": "Failed", "f-slow": "Completed"}
    assert set(pods(state_dir).values()) == {"Failed", "Succeeded"}
    status = flow_status(state_dir, "f")
    assert status["failedJobs"] == ["f-bad"] and status["completedJobs"] == ["f-slow"]
    assert "runningJobs" not in status


def test_fail_fast_terminates_the_jobs_still_running(
    vc: Vc, manifest: Path, state_dir: Path, marker: str
) -> None:
    manifest.write_text(
        template("bad", "sleep 0.3; exit 3")
        + template("slow", marker)
        + jobflow("f", "bad", "slow")
    )
    result = vc("run", "-f", manifest, "--no-live", "--fail-fast")
    assert result.exit_code == 1, result.output
    assert "flow f failed: terminating 1 running job(s): f-slow (--fail-fast)" in result.stderr
    # (what it then waits for is being terminated: not a hint to give --fail-fast)
    assert "--fail-fast terminates them" not in result.stderr
    assert phases(state_dir) == {"f-bad": "Failed", "f-slow": "Terminated"}
    assert processes_with(marker) == []
    # the table says why it ended (Volcano keeps no reason in the job's status)
    slow = row(result.stdout, "slow")
    assert (slow[2], slow[4]) == ("Terminated", "TerminateJob command (--fail-fast: flow f failed)")


def test_with_strategy_any_the_entries_that_never_ran_are_listed_waiting(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(
        template("a", "exit 3")
        + template("b", "sleep 1")
        + template("c", "true")
        + flow(
            "f", "{name: a}", "{name: b}", "{name: c, dependsOn: {targets: [a, b], strategy: any}}"
        )
    )
    result = vc("run", "-f", manifest, "--no-live")
    assert result.exit_code == 1, result.output
    assert phases(state_dir) == {"f-a": "Failed", "f-b": "Completed"}  # c never created
    table = [line.split()[:3] for line in result.stdout.splitlines() if line.startswith("f ")]
    assert table == [["f", "a", "Failed"], ["f", "b", "Completed"], ["f", "c", "Waiting"]]


def test_terminating_one_job_fails_the_flow_and_the_run_waits_for_the_others(
    tmp_path: Path, manifest: Path, marker: str
) -> None:
    started = tmp_path / "started"
    manifest.write_text(
        template("long", f"echo go >> {started}; {marker}")
        + template("short", f"echo go >> {started}; sleep 2")
        + jobflow("f", "long", "short")
    )
    state_dir = tmp_path / "state"
    with running(state_dir, manifest) as proc:
        wait_for(started, 2)
        done = cli(state_dir, "terminate", "vcjob", "f-long")
        assert done.returncode == 0, done.stderr
        code, out, err = ended(proc)
    assert code == 1, out + err
    assert phases(state_dir) == {"f-long": "Terminated", "f-short": "Completed"}
    assert processes_with(marker) == []
    long = row(out, "long")
    assert (long[2], long[4]) == ("Terminated", "TerminateJob command")
    described = cli(state_dir, "describe", "vcjob", "f-long").stdout
    assert "Failure:           TerminateJob command" in described


def test_ctrl_c_while_waiting_terminates_the_failed_flows_jobs_for_good(
    tmp_path: Path, manifest: Path, marker: str
) -> None:
    started = tmp_path / "started"
    manifest.write_text(
        template("bad", "sleep 0.2; exit 3")
        + template("slow", f"echo go >> {started}; {marker}")
        + jobflow("f", "bad", "slow")
    )
    state_dir = tmp_path / "state"
    with running(state_dir, manifest) as proc:
        wait_for(started, 1)
        wait_until(lambda: phases(state_dir).get("f-bad") == "Failed", "f-bad to fail")
        code, out, err = ended(proc, signal.SIGINT)
    assert code == 130, out + err
    assert "stopping: terminating the running pods" in err
    assert phases(state_dir) == {"f-bad": "Failed", "f-slow": "Terminated"}
    assert processes_with(marker) == []
    slow = row(out, "slow")
    assert (slow[2], slow[4]) == ("Terminated", "TerminateJob command (the run was stopped)")


def test_ctrl_c_leaves_no_vcjob_running_without_a_pod_and_a_rerun_runs_it(
    vc: Vc, tmp_path: Path, manifest: Path, marker: str, long_flow: tuple[Path, Path]
) -> None:
    state_dir, started = long_flow
    with running(state_dir, manifest) as proc:
        wait_for(started, 1)
        code, out, err = ended(proc, signal.SIGINT)
    assert code == 130, out + err
    # as after an eviction: the job's pod is recreated, waiting for the next run
    assert phases(state_dir) == {"f-a": "Pending"}
    assert pods(state_dir) == {"f-a-t-0": "Pending"}
    assert flow_status(state_dir, "f")["pendingJobs"] == ["f-a"]
    with running(state_dir, manifest, "--timeout", "20") as rerun:
        wait_for(started, 2)  # the rerun runs it again
        ended(rerun, signal.SIGINT)
    assert processes_with(marker) == []


def test_the_timeout_leaves_no_vcjob_running_without_a_pod(
    run_one: RunOne, state_dir: Path, marker: str
) -> None:
    result = run_one(marker, "--timeout", "1").result
    assert result.exit_code == 1
    assert phases(state_dir) == {"f-a": "Pending"}
    assert "Running" not in pods(state_dir).values()


def _crash_while(state_dir: Path, manifest: Path, started: Path, lines: int) -> None:
    with running(state_dir, manifest) as proc:
        wait_for(started, lines)
        ended(proc, signal.SIGKILL)


def test_a_job_that_ended_while_no_run_watched_ends_when_its_process_did(
    vc: Vc, tmp_path: Path, manifest: Path
) -> None:
    started = tmp_path / "started"
    manifest.write_text(template("a", f"echo go >> {started}; sleep 1") + jobflow("f", "a"))
    state_dir = tmp_path / "state"
    _crash_while(state_dir, manifest, started, 1)
    pod_dir = state_dir / podfs.PODS / "default" / "f-a-t-0"
    wait_until(
        lambda: (podfs.read_json(str(pod_dir / podfs.STATUS)) or {}).get("phase") == "Succeeded",
        "the pod to end",
    )
    ended = podfs.read_json(str(pod_dir / podfs.STATUS))["containerStatuses"][0]["state"]
    finished_at = ended["terminated"]["finishedAt"]
    time.sleep(2.5)  # the rerun comes well after the process ended
    result = vc("run", "-f", manifest, "--no-live")
    assert result.exit_code == 0, result.output
    status = flow_status(state_dir, "f")
    assert status["completedJobs"] == ["f-a"] and "runningJobs" not in status
    with opened(state_dir) as store:
        job = store.get(VCJob, "default", "f-a")
    assert job.status is not None and job.status.state is not None
    assert job.status.state.last_transition_time == finished_at
    row = next(line.split() for line in result.stdout.splitlines() if line.startswith("f "))
    assert row[:3] == ["f", "a", "Completed"]
    # the process's 1 s (`<1s` when its stamps, to the second, are that close), not the age
    # at the rerun
    assert row[3] == "<1s" or float(row[3].rstrip("s")) < 2.5, row


def test_stopping_a_flow_during_a_run_removes_its_pods(
    tmp_path: Path, manifest: Path, marker: str, long_flow: tuple[Path, Path]
) -> None:
    state_dir, started = long_flow
    with running(state_dir, manifest) as proc:
        wait_for(started, 1)
        assert cli(state_dir, "stop", "jobflow", "f").returncode == 0
        code, out, err = ended(proc)
    assert code == 1, out + err
    assert pods(state_dir) == {}
    assert processes_with(marker) == []


def test_deleting_a_flow_during_a_run_removes_its_pods(
    tmp_path: Path, manifest: Path, marker: str, long_flow: tuple[Path, Path]
) -> None:
    state_dir, started = long_flow
    with running(state_dir, manifest) as proc:
        wait_for(started, 1)
        assert cli(state_dir, "delete", "jobflow", "f", "--force").returncode == 0
        code, out, err = ended(proc)
    assert code == 1, out + err
    assert "jobflow f Deleted" in out
    assert pods(state_dir) == {}
    assert processes_with(marker) == []


def test_deleting_a_flow_with_no_run_active_kills_and_removes_its_pods(
    vc: Vc, tmp_path: Path, manifest: Path, marker: str, long_flow: tuple[Path, Path]
) -> None:
    state_dir, started = long_flow
    _crash_while(state_dir, manifest, started, 1)  # its pod runs on, unsupervised
    assert processes_with(marker)
    result: Result = vc("delete", "jobflow", "f", "--force")
    assert result.exit_code == 0, result.output
    assert pods(state_dir) == {}
    wait_until(lambda: processes_with(marker) == [], "the pod's processes to end")


def test_deleting_a_pod_with_no_run_active_removes_it(
    vc: Vc, run_one: RunOne, state_dir: Path
) -> None:
    assert run_one("exit 3").result.exit_code == 1
    assert pods(state_dir) == {"f-a-t-0": "Failed"}
    result = vc("delete", "pod", "f-a-t-0")
    assert result.exit_code == 0, result.output
    assert 'pod "f-a-t-0" deleted' in result.stdout
    assert pods(state_dir) == {}
    assert not (state_dir / podfs.PODS / "default" / "f-a-t-0").exists()


def test_a_run_that_nothing_moves_any_more_ends_and_says_why(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    """A job with no pods (every task has 0 replicas: Volcano keeps it Running) and a job
    that can never fit the machine: nothing will ever change, so the run ends, exit 1."""
    manifest.write_text(
        template("empty", "true")
        .replace("replicas: 1", "replicas: 0")
        .replace("minAvailable: 1", "minAvailable: 0")
        + template("huge", "true", cpu="1000")
        + jobflow("f", "empty", "huge")
    )
    began = time.monotonic()
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 1, result.output
    assert time.monotonic() - began < 15
    assert "nothing is running and nothing can start:" in result.stderr
    assert "f-empty is Running with no pod left to run" in result.stderr
    assert "f-huge is Pending (Unschedulable:" in result.stderr
    assert "timeout" not in result.stderr


def test_a_run_whose_only_work_is_a_create_the_api_refuses_ends(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    """A template stored before admission checked what it checks now (here: written past
    admission) makes vcjobs the API refuses: the controller retries the create with backoff
    for ever (compatibility row 9), but no retry will succeed unless someone changes the
    template, so a run with nothing else to do ends, naming the entry and why."""
    with SqliteStore.in_state_dir(state_dir) as store:
        bad = JobTemplate.from_dict(
            {
                "metadata": {"name": "bad", "namespace": "default"},
                "spec": {
                    "minAvailable": 5,  # more than the replicas: the vcjob is refused
                    "tasks": [
                        {
                            "name": "t",
                            "replicas": 1,
                            "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
                        }
                    ],
                },
            }
        )
        store.create(bad, admit=False)
    manifest.write_text(jobflow("f", "bad"))
    began = time.monotonic()
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 1, result.output
    assert time.monotonic() - began < 20
    assert "nothing is running and nothing can start: f-bad waits (CreateFailed:" in (result.stderr)
    assert "timeout" not in result.stderr
