"""The runtime shell (`runtime.executor`) on a real SQLite store with real processes: vcjobs
created in the store run to their Volcano phase, pods carry the kubelet's status, the gang
scheduler respects the capacity, deletions and Commands stop processes, and a new executor
adopts the pods of one that went away."""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from vcflow.api.command import Command, command_for
from vcflow.api.phases import Action
from vcflow.api.pod import Pod
from vcflow.api.vcjob import EnvVar, VCJob
from vcflow.reconcile.vcjob.resources import Capacity
from vcflow.runtime import kubelet_bridge, logs
from vcflow.runtime.executor import Executor
from vcflow.runtime.pods import PodRunner
from vcflow.store import SqliteStore

from .conftest import EXECUTOR_DEADLINE as DEADLINE
from .conftest import drive, phase, vcjob


def test_a_job_of_true_completes_with_kubelet_status(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    store.create(vcjob("ok", "true", replicas=2))
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "ok") == "Completed")
    pods = store.list(Pod)
    assert [p.name for p in pods] == ["ok-t-0", "ok-t-1"]
    for pod in pods:
        assert pod.phase == "Succeeded"
        assert pod.spec is not None and pod.spec.node_name == "localhost"
        assert pod.metadata.finalizers == [kubelet_bridge.FINALIZER]
        assert pod.status is not None and pod.status.container_statuses
        terminated = pod.status.container_statuses[0].state
        assert terminated is not None and terminated.terminated is not None
        assert terminated.terminated.exit_code == 0
        assert {c.type for c in pod.status.conditions or []} >= {"PodScheduled", "Ready"}


def test_a_failing_command_fails_its_job(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    store.create(vcjob("bad", "exit 3"))
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "bad") in ("Failed", "Completed"))
    assert phase(store, "bad") == "Failed"
    pod = store.get(Pod, "default", "bad-t-0")
    assert pod.phase == "Failed"
    assert pod.status is not None and pod.status.container_statuses
    state = pod.status.container_statuses[0].state
    assert state is not None and state.terminated is not None
    assert state.terminated.exit_code == 3


def test_env_and_svc_plugins_reach_the_processes(
    store: SqliteStore, runners: Callable[[], PodRunner], state: Path
) -> None:
    script = 'echo "index=$VK_TASK_INDEX hosts=$VC_T_HOSTS num=$(cat $VC_SVC_DIR/VC_T_NUM)"'
    store.create(vcjob("envy", script, replicas=2, plugins={"env": [], "svc": []}))
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "envy") == "Completed")
    hosts = "envy-t-0.envy,envy-t-1.envy"
    for index in (0, 1):
        pod_dir = state / "pods" / "default" / f"envy-t-{index}"
        text = logs.read_log(pod_dir, "main").decode()
        assert text == f"index={index} hosts={hosts} num=2\n"


def test_gang_scheduling_runs_jobs_one_after_the_other_on_small_capacity(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    store.create(vcjob("first", "sleep 0.3", cpu="2"))
    store.create(vcjob("second", "sleep 0.3", cpu="2"))
    executor = Executor(store, runners(), capacity=Capacity({"cpu": Fraction(2)}))
    most = [0]

    def count() -> None:
        most[0] = max(most[0], len(executor.pods.live))

    done = ("Completed",)
    drive(
        executor,
        lambda: phase(store, "first") in done and phase(store, "second") in done,
        each=count,
    )
    assert most[0] == 1
    finished = {}
    for pod in store.list(Pod):
        assert pod.status is not None and pod.status.container_statuses
        term = pod.status.container_statuses[0].state
        assert term is not None and term.terminated is not None
        finished[pod.name] = (term.terminated.started_at or "", term.terminated.finished_at or "")
    a, b = sorted(finished.values())
    assert b[0] >= a[1]


def test_deleting_a_job_terminates_and_removes_its_pods(
    store: SqliteStore, runners: Callable[[], PodRunner], state: Path
) -> None:
    store.create(vcjob("long", "sleep 30", terminationGracePeriodSeconds=1))
    runner = runners()
    executor = Executor(store, runner)
    drive(executor, lambda: store.get(Pod, "default", "long-t-0").phase == "Running")
    store.delete(VCJob, "default", "long", force=True)
    assert store.get(Pod, "default", "long-t-0").deleting
    drive(executor, lambda: not store.list(Pod))
    assert runner.adopt("default", "long-t-0") is None
    assert not (state / "pods" / "default" / "long-t-0").exists()


def test_a_command_aborts_the_job_and_is_consumed(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    store.create(vcjob("cmd", "sleep 30"))
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "cmd") == "Running")
    store.create(command_for(store.get(VCJob, "default", "cmd"), Action.ABORT_JOB))
    drive(executor, lambda: phase(store, "cmd") == "Aborted")
    assert store.list(Command) == []
    assert store.list(Pod) == []


def test_a_podfailed_restartjob_policy_reruns_the_job(
    store: SqliteStore, runners: Callable[[], PodRunner], tmp_path: Path
) -> None:
    """A failure policy with real exit codes: the first run exits 3, the job restarts
    (RestartJob), the second run exits 0 and the job completes after one retry."""
    marker = tmp_path / "failed-once"
    script = f"if [ -e {marker} ]; then exit 0; fi; touch {marker}; exit 3"
    policies = [{"event": "PodFailed", "action": "RestartJob"}]
    store.create(vcjob("pol", script, policies=policies, maxRetry=3))
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "pol") in ("Completed", "Failed"))
    status = store.get(VCJob, "default", "pol").status
    assert status is not None
    assert (status.phase, status.retry_count) == ("Completed", 1)


def test_resume_restarts_a_suspended_job_and_counts_a_retry(
    store: SqliteStore, runners: Callable[[], PodRunner], tmp_path: Path
) -> None:
    """`vcflow suspend` then `vcflow resume`: the pods run again (ResumeJob is a retry, B2)."""
    runs = tmp_path / "runs"
    store.create(vcjob("sr", f"echo run >> {runs}; sleep 30"))
    executor = Executor(store, runners())
    # (its script ran: an abort before the shell wrote its line would leave no first run)
    drive(executor, lambda: phase(store, "sr") == "Running" and runs.exists())
    store.create(command_for(store.get(VCJob, "default", "sr"), Action.ABORT_JOB))
    drive(executor, lambda: phase(store, "sr") == "Aborted" and not store.list(Pod))
    store.create(command_for(store.get(VCJob, "default", "sr"), Action.RESUME_JOB))
    drive(executor, lambda: phase(store, "sr") == "Running" and runs.read_text().count("run") == 2)
    status = store.get(VCJob, "default", "sr").status
    assert status is not None and status.retry_count == 1
    store.create(command_for(store.get(VCJob, "default", "sr"), Action.TERMINATE_JOB))
    drive(executor, lambda: phase(store, "sr") == "Terminated" and not store.list(Pod))
    assert store.list(Command) == []


def test_a_new_executor_adopts_running_pods_and_never_starts_them_twice(
    store: SqliteStore, runners: Callable[[], PodRunner], tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    store.create(vcjob("once", f"echo $HOSTNAME >> {marks}; sleep 0.5", replicas=2))
    first_runner = runners()
    first = Executor(store, first_runner)
    drive(first, lambda: phase(store, "once") == "Running")
    first_runner.close()  # the control plane dies; its pods go on
    second = Executor(store, runners())
    drive(second, lambda: phase(store, "once") == "Completed")
    assert sorted(marks.read_text().split()) == ["once-t-0", "once-t-1"]


def test_a_pod_that_cannot_launch_fails_with_the_reason(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    job = vcjob("nolaunch", "true")
    assert job.spec is not None and job.spec.tasks
    template = job.spec.tasks[0].template
    assert template is not None and template.spec is not None and template.spec.containers
    limit = {"resourceFieldRef": {"resource": "limits.cpu"}}
    template.spec.containers[0].env = [EnvVar(name="S", value_from=limit)]
    store.create(job)
    executor = Executor(store, runners())
    drive(executor, lambda: phase(store, "nolaunch") == "Failed")
    pod = store.get(Pod, "default", "nolaunch-t-0")
    assert pod.status is not None and pod.status.reason == "LaunchError"
    assert "resourceFieldRef" in (pod.status.message or "")


def test_a_pod_that_ended_while_the_loop_waited_is_not_terminated_again(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    """`wait` leaves what it saw for the next burst; a stop right after it (Ctrl-C) writes
    that pod's end and does not wait for it to end again."""
    store.create(vcjob("quick", "sleep 0.5"))
    executor = Executor(store, runners())
    drive(executor, lambda: bool(executor.node.active))

    def ended() -> bool:
        return any(h.last is not None and h.last.finished for h in executor.node.seen.values())

    end = time.monotonic() + DEADLINE
    while not ended():
        executor.wait(0.1)
        assert time.monotonic() < end, "the pod did not end"
    started = time.monotonic()
    assert executor.terminate_all(5.0, DEADLINE) == 0  # nothing left running
    assert time.monotonic() - started < DEADLINE / 2  # (not waited for until the patience)
    assert store.get(Pod, "default", "quick-t-0").phase == "Succeeded"


def test_a_spent_budget_commits_the_burst_and_hands_back(
    store: SqliteStore, runners: Callable[[], PodRunner]
) -> None:
    """The server's control plane: a burst commits once its budget is spent, `between` runs
    (the API's writers get a turn), and the call returns with the rest still to do."""
    for i in range(3):
        store.create(vcjob(f"j{i}", "true"))
    executor = Executor(store, runners())
    turns: list[int] = []
    assert executor.settle(budget=0.0, between=lambda: turns.append(1)) is True
    assert turns == [1]
    assert store.list(Pod) == []  # nothing done yet: the budget was spent before the first step
    end = time.monotonic() + DEADLINE
    while not all(phase(store, f"j{i}") == "Completed" for i in range(3)):
        assert time.monotonic() < end, "the budgeted bursts never finished the jobs"
        executor.settle(budget=0.01, between=lambda: turns.append(1))
        executor.wait(0.05)
