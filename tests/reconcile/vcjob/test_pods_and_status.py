"""Pod identity (reference §3), webhook defaults (§2.1), the request of each pod event
(§4.2) and the status fields vcflow reports differently (docs/compatibility.md rows R2, R3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from vcflow.api.names import LABEL_CREATED_BY_FLOW, LABEL_CREATED_BY_TEMPLATE
from vcflow.api.phases import Event, JobPhase
from vcflow.api.vcjob import VCJobStatus
from vcflow.reconcile.vcjob import events, kubelet, pods
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob import status as jobstatus
from vcflow.reconcile.vcjob.status import Change

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_defaults(make: Any) -> None:
    job = make.vcjob(make.job("j", make.task("", 3), make.task("b", 2, minAvailable=1), maxRetry=0))
    spec = job.spec
    assert spec is not None
    assert (spec.queue, spec.scheduler_name, spec.max_retry) == ("default", "volcano", 3)
    assert [(t.name, t.min_available, t.max_retry) for t in spec.tasks or []] == [
        ("default0", 3, 3),
        ("b", 1, 3),
    ]
    assert spec.min_available == 4
    assert jobspec.with_defaults(job).to_dict() == job.to_dict()  # idempotent


def test_framework_plugins_imply_svc_and_ssh(make: Any) -> None:
    job = make.vcjob(make.job("j", plugins={"mpi": []}))
    assert set(jobspec.plugins(job)) == {"mpi", "svc", "ssh"}


def test_pod_identity(make: Any) -> None:
    task = make.task("w", 2)
    task["template"]["metadata"] = {"name": "ignored", "labels": {"team": "x"}}
    job = make.vcjob(make.job("j", task, priorityClassName="high"))
    job.status = VCJobStatus(version=3, retry_count=2)
    pod = pods.build_pod(job, jobspec.task_specs(job)[0], 1)
    assert pod.name == "j-w-1"
    assert pod.metadata.labels["team"] == "x"
    assert pod.metadata.annotations[pods.JOB_VERSION] == "3"
    assert pod.metadata.annotations[pods.RETRY_COUNT] == "2"
    assert pod.metadata.annotations[pods.GROUP_NAME] == "j-uid-j"
    owner = pod.metadata.controller_ref()
    assert owner is not None and (owner.kind, owner.uid) == ("Job", "uid-j")
    assert pod.spec is not None
    assert (pod.spec.priority_class_name, pod.spec.scheduler_name) == ("high", "volcano")
    assert pods.container_env(pod, {}) == {}  # no plugin, no variable


def test_a_flows_pods_carry_its_vcjobs_created_by_labels(make: Any) -> None:
    """The labels the JobFlow controller puts on a flow's vcjobs are on their pods, so a
    selector finds a flow's pods (`kubectl logs -l volcano.sh/createdByJobFlow=...`);
    a vcjob without them makes pods without them, and its other labels stay its own."""
    flow = {LABEL_CREATED_BY_FLOW: "default.f", LABEL_CREATED_BY_TEMPLATE: "default.a"}
    data = make.job("f-a", make.task("w", 1))
    data["metadata"]["labels"] = {**flow, "team": "x"}
    job = make.vcjob(data)
    labels = pods.build_pod(job, jobspec.task_specs(job)[0], 0).metadata.labels
    assert {k: labels.get(k) for k in flow} == flow
    assert "team" not in labels
    plain = make.vcjob(make.job("j", make.task("w", 1)))
    labels = pods.build_pod(plain, jobspec.task_specs(plain)[0], 0).metadata.labels
    assert not set(flow) & set(labels)


def test_a_pod_has_no_null_fields_the_job_did_not_set(make: Any) -> None:
    """The job's scheduler and priority class fill a pod's only when the job has them: an
    empty one was assigned as None, and every pod's YAML showed `priorityClassName: null`."""
    job = make.vcjob(make.job("j", make.task("w", 1)))
    pod = pods.build_pod(job, jobspec.task_specs(job)[0], 0)
    spec = pod.to_dict()["spec"]
    assert "priorityClassName" not in spec
    assert spec["schedulerName"] == "volcano"  # the webhook's default, from the job
    assert None not in spec.values()


def test_env_and_svc(make: Any) -> None:
    job = make.vcjob(
        make.job("j", make.task("ps", 1), make.task("a-b", 2), plugins={"env": [], "svc": []})
    )
    pod = pods.build_pod(job, jobspec.task_specs(job)[1], 1)
    files = pods.svc_files(job)
    assert files["a_b.host"] == "j-a-b-0.j\nj-a-b-1.j"
    assert pods.container_env(pod, files) == {
        "VK_TASK_INDEX": "1",
        "VC_TASK_INDEX": "1",
        "VC_PS_HOSTS": "j-ps-0.j",
        "VC_PS_NUM": "1",
        "VC_A_B_HOSTS": "j-a-b-0.j,j-a-b-1.j",
        "VC_A_B_NUM": "2",
    }
    assert pod.spec is not None and (pod.spec.hostname, pod.spec.subdomain) == ("j-a-b-1", "j")


def test_pod_events(make: Any) -> None:
    job = make.vcjob(make.job("j", make.task("w", 2, restart="OnFailure", maxRetry=2)))
    task = jobspec.task_specs(job)[0]
    a, b = (kubelet.place(pods.build_pod(job, task, k), NOW) for k in range(2))
    assert events.pod_created(a).event == Event.POD_PENDING
    ra = kubelet.start(a, NOW)
    assert events.pod_updated(job, a, ra, [ra, b]).event == Event.POD_RUNNING
    once = kubelet.exit_container(ra, 1, NOW)
    assert events.pod_updated(job, ra, once, [once, b]).event == Event.OUT_OF_SYNC
    twice = kubelet.exit_container(once, 1, NOW)
    assert events.pod_updated(job, once, twice, [twice, b]).event == Event.TASK_FAILED
    done = kubelet.exit_container(twice, 0, NOW)
    assert events.pod_updated(job, twice, done, [done, b]).event == Event.OUT_OF_SYNC
    assert events.pod_deleted(b).event == Event.POD_EVICTED
    assert events.pod_deleted(pods.marked_out_of_sync(b)).event == Event.OUT_OF_SYNC


def test_running_duration_from_first_running_to_the_end() -> None:
    """R2: set at the first Running, grown at each phase change, kept."""
    status = VCJobStatus()
    steps = [
        (JobPhase.PENDING, 0),
        (JobPhase.RUNNING, 10),
        (JobPhase.RESTARTING, 70),
        (JobPhase.PENDING, 75),
        (JobPhase.RUNNING, 80),
        (JobPhase.COMPLETED, 200),
    ]
    for phase, second in steps:
        status = jobstatus.written(status, Change(phase, 0, 0), NOW + timedelta(seconds=second))
    assert status.running_duration == "3m10s"


def test_transition_time_moves_only_with_the_phase() -> None:
    """R3: counter changes leave lastTransitionTime and the conditions alone."""
    first = jobstatus.written(VCJobStatus(), Change(JobPhase.RUNNING, 0, 0), NOW)
    later = NOW + timedelta(seconds=5)
    counted = jobstatus.written(
        first, Change(JobPhase.RUNNING, 0, 0, counts=jobstatus.Counts(running=2)), later
    )
    assert counted.running == 2
    assert (
        counted.state is not None and counted.state.last_transition_time == "2026-01-01T00:00:00Z"
    )
    assert counted.conditions == first.conditions


def test_conditions_keep_one_entry_per_phase_in_last_write_order() -> None:
    status = VCJobStatus()
    for phase in (JobPhase.PENDING, JobPhase.RUNNING, JobPhase.RESTARTING, JobPhase.PENDING):
        status = jobstatus.written(status, Change(phase, 0, 0), NOW)
    assert [c.status for c in status.conditions or []] == ["Running", "Restarting", "Pending"]


def test_unschedulable_reason_on_the_current_condition() -> None:
    status = jobstatus.written(
        VCJobStatus(), Change(JobPhase.PENDING, 0, 0, unschedulable="too big"), NOW
    )
    extra = (status.conditions or [])[-1].model_extra or {}
    assert (extra.get("reason"), extra.get("message")) == ("Unschedulable", "too big")
    cleared = jobstatus.written(status, Change(JobPhase.PENDING, 0, 0, unschedulable=""), NOW)
    assert "reason" not in ((cleared.conditions or [])[-1].model_extra or {})


def test_a_change_that_changes_nothing_returns_the_old_status_itself() -> None:
    """The runtime compares by identity-or-equality and skips the write; every field that a
    Change sets must still count as a change."""
    counts = jobstatus.Counts(running=1, tasks={"main": {"Running": 1}})
    base = Change(JobPhase.RUNNING, 1, 2, counts=counts, min_available=1, controlled={})
    status = jobstatus.written(VCJobStatus(), base, NOW)
    assert jobstatus.written(status, base, NOW + timedelta(seconds=9)) is status
    variants = [
        Change(JobPhase.COMPLETED, 1, 2, counts=counts),
        Change(JobPhase.RUNNING, 2, 2),
        Change(JobPhase.RUNNING, 1, 3),
        Change(JobPhase.RUNNING, 1, 2, min_available=2),
        Change(JobPhase.RUNNING, 1, 2, counts=jobstatus.Counts(succeeded=1)),
        Change(JobPhase.RUNNING, 1, 2, controlled={"plugin-svc": "svc"}),
        Change(JobPhase.RUNNING, 1, 2, unschedulable="too big"),
    ]
    for change in variants:
        new = jobstatus.written(status, change, NOW)
        assert new is not status and new.to_dict() != status.to_dict(), change
