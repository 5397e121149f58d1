"""JobTemplate / vcjob admission: CRD schema, the vcjob webhook rules (reference §6.3, §6.4)
and the runtime-trap warnings (docs/compatibility.md "The local vcjob runtime"), one table per
area."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcflow.admission.jobtemplate import validate_job_spec, validate_jobtemplate, validate_vcjob
from vcflow.api.errors import FieldError
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec, VCJob

Spec = dict[str, Any]


def pod(**fields: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}],
    }
    spec.update(fields)
    return {"spec": {k: v for k, v in spec.items() if v is not None}}


def task(name: str | None = "main", replicas: int = 1, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "replicas": replicas, "template": pod()}
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def spec(*tasks: dict[str, Any], **fields: Any) -> Spec:
    out: Spec = {"minAvailable": 1, "schedulerName": "volcano", "queue": "default"}
    out["tasks"] = list(tasks) if tasks else [task()]
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def check(data: Spec, *, path: str = "spec", job: str = "job") -> list[FieldError]:
    return validate_job_spec(JobSpec.from_dict(data), path=path, job_name=job)


def errors(found: list[FieldError]) -> list[FieldError]:
    return [e for e in found if not e.warning]


def warnings(found: list[FieldError]) -> list[FieldError]:
    return [e for e in found if e.warning]


def assert_reports(found: list[FieldError], path: str, message: str) -> None:
    hits = [e for e in found if e.path == path and message in e.message]
    assert hits, f"no error at {path} containing {message!r}; got {[str(e) for e in found]}"


def policy(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def guaranteed(cpu: str = "2", memory: str = "1Gi", **extra: Any) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": memory}
    return {"name": "main", "image": "x", "resources": {"requests": res, "limits": res}, **extra}


# --- the conformance cases (adm-jt-*), objects inline ------------------------------------

ADM_JT = [
    pytest.param(spec(), None, id="adm-jt-01-upstream-example"),
    pytest.param(
        spec(minAvailable=-1),
        "spec.minAvailable in body should be greater than or equal to 0",
        id="adm-jt-02-min-available-negative",
    ),
    pytest.param(
        spec(maxRetry=-1),
        "spec.maxRetry in body should be greater than or equal to 0",
        id="adm-jt-03-max-retry-negative",
    ),
    pytest.param(
        {**spec(), "tasks": []}, "should have at least 1 items", id="adm-jt-04-empty-task-list"
    ),
    pytest.param(
        spec(task("worker"), task("worker", 2)),
        "duplicated task name worker",
        id="adm-jt-05-duplicate-task-names",
    ),
    pytest.param(
        spec(task(replicas=-1), minAvailable=0),
        "spec.tasks[0].replicas in body should be greater than or equal to 0",
        id="adm-jt-06-replicas-negative",
    ),
    pytest.param(
        spec(task(replicas=2, minAvailable=3)),
        "'minAvailable' is greater than 'replicas' in task: main",
        id="adm-jt-07-task-min-available-gt-replicas",
    ),
    pytest.param(
        spec(policies=[policy(event="PodFailed", exitCode=3, action="RestartJob")]),
        "must not specify event and exitCode simultaneously",
        id="adm-jt-08-event-and-exitcode",
    ),
    pytest.param(
        spec(policies=[policy(event="PodFailed", action="Restart")]),
        "invalid policy action",
        id="adm-jt-09-invalid-action",
    ),
    pytest.param(
        spec(task("ps"), task("worker", 2), minAvailable=5),
        "job 'minAvailable' should not be greater than total replicas in tasks",
        id="adm-jt-10-min-available-gt-total",
    ),
    pytest.param(
        spec(policies=[policy(event="OutOfSync", action="RestartJob")]),
        "invalid policy event",
        id="adm-jt-11-internal-event",
    ),
]


@pytest.mark.parametrize(("data", "message"), ADM_JT)
def test_conformance_cases(data: Spec, message: str | None) -> None:
    template = JobTemplate.from_dict(
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "spec": data}
    )
    found = errors(validate_jobtemplate(template))
    if message is None:
        assert found == []
    else:
        assert any(message in str(e) for e in found), [str(e) for e in found]


# --- CRD schema (reference §2.6, §6.3) ----------------------------------------------------

LONG = "a" * 64
SCHEMA = [
    (
        "min-available",
        spec(minAvailable=-1),
        "spec.minAvailable",
        "Invalid value: -1: spec.minAvailable in body should be greater than or equal to 0",
    ),
    (
        "max-retry",
        spec(maxRetry=-2),
        "spec.maxRetry",
        "Invalid value: -2: spec.maxRetry in body should be greater than or equal to 0",
    ),
    (
        "ttl",
        spec(ttlSecondsAfterFinished=-1),
        "spec.ttlSecondsAfterFinished",
        "spec.ttlSecondsAfterFinished in body should be greater than or equal to 0",
    ),
    (
        "min-success",
        spec(minSuccess=0),
        "spec.minSuccess",
        "Invalid value: 0: spec.minSuccess in body should be greater than or equal to 1",
    ),
    (
        "tasks-min-items",
        {**spec(), "tasks": []},
        "spec.tasks",
        "Invalid value: 0: spec.tasks in body should have at least 1 items",
    ),
    (
        "scheduler-name-long",
        spec(schedulerName=LONG),
        "spec.schedulerName",
        "Too long: spec.schedulerName may not be longer than 63",
    ),
    (
        "queue-pattern",
        spec(queue="My_Queue"),
        "spec.queue",
        'Invalid value: "My_Queue": spec.queue in body should match \'^[a-z0-9]',
    ),
    (
        "queue-empty",
        spec(queue=""),
        "spec.queue",
        'Invalid value: "": spec.queue in body should match',
    ),
    (
        "queue-long",
        spec(queue="q" * 254),
        "spec.queue",
        "Too long: spec.queue may not be longer than 253",
    ),
    (
        "priority-class-pattern",
        spec(priorityClassName="High"),
        "spec.priorityClassName",
        "spec.priorityClassName in body should match",
    ),
    (
        "task-name-pattern",
        spec(task("Main")),
        "spec.tasks[0].name",
        (
            'Invalid value: "Main": spec.tasks[0].name in body should '
            "match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"
        ),
    ),
    (
        "task-name-empty",
        spec(task("")),
        "spec.tasks[0].name",
        "spec.tasks[0].name in body should match",
    ),
    (
        "task-name-long",
        spec(task(LONG)),
        "spec.tasks[0].name",
        "Too long: spec.tasks[0].name may not be longer than 63",
    ),
    (
        "task-replicas",
        spec(task(replicas=-1), minAvailable=0),
        "spec.tasks[0].replicas",
        "spec.tasks[0].replicas in body should be greater than or equal to 0",
    ),
    (
        "task-min-available",
        spec(task(minAvailable=-1)),
        "spec.tasks[0].minAvailable",
        "spec.tasks[0].minAvailable in body should be greater than or equal to 0",
    ),
    (
        "task-max-retry",
        spec(task(maxRetry=-1)),
        "spec.tasks[0].maxRetry",
        "spec.tasks[0].maxRetry in body should be greater than or equal to 0",
    ),
    (
        "topology-policy-enum",
        spec(task(topologyPolicy="numa")),
        "spec.tasks[0].topologyPolicy",
        (
            'Unsupported value: "numa": supported values: "none", '
            '"best-effort", "restricted", "single-numa-node"'
        ),
    ),
    (
        "network-mode-enum",
        spec(networkTopology={"mode": "strict"}),
        "spec.networkTopology.mode",
        'Unsupported value: "strict": supported values: "hard", "soft"',
    ),
    (
        "network-tier-negative",
        spec(networkTopology={"highestTierAllowed": -1}),
        "spec.networkTopology.highestTierAllowed",
        "greater than or equal to 0",
    ),
    (
        "network-tier-name-long",
        spec(networkTopology={"highestTierName": "n" * 254}),
        "spec.networkTopology.highestTierName",
        "may not be longer than 253",
    ),
    (
        "event-enum",
        spec(policies=[policy(event="Crashed", action="RestartJob")]),
        "spec.policies[0].event",
        'Unsupported value: "Crashed": supported values: "*", "PodPending"',
    ),
    (
        "events-enum",
        spec(task(policies=[policy(events=["PodFailed", "Boom"], action="AbortJob")])),
        "spec.tasks[0].policies[0].events[1]",
        'Unsupported value: "Boom"',
    ),
    (
        "partition-required-total",
        spec(task(replicas=2, partitionPolicy={"partitionSize": 2})),
        "spec.tasks[0].partitionPolicy.totalPartitions",
        "Required value",
    ),
    (
        "partition-required-size",
        spec(task(replicas=2, partitionPolicy={"totalPartitions": 2})),
        "spec.tasks[0].partitionPolicy.partitionSize",
        "Required value",
    ),
    (
        "partition-total-min",
        spec(task(partitionPolicy={"totalPartitions": 0, "partitionSize": 1})),
        "spec.tasks[0].partitionPolicy.totalPartitions",
        (
            "Invalid value: 0: spec.tasks[0].partitionPolicy.totalPartitions "
            "in body should be greater than or equal to 1"
        ),
    ),
    (
        "partition-size-min",
        spec(task(partitionPolicy={"totalPartitions": 1, "partitionSize": 0})),
        "spec.tasks[0].partitionPolicy.partitionSize",
        "should be greater than or equal to 1",
    ),
    (
        "partition-min-partitions",
        spec(task(partitionPolicy={"totalPartitions": 1, "partitionSize": 1, "minPartitions": -1})),
        "spec.tasks[0].partitionPolicy.minPartitions",
        "should be greater than or equal to 0",
    ),
    (
        "partition-network-mode",
        spec(
            task(
                partitionPolicy={
                    "totalPartitions": 1,
                    "partitionSize": 1,
                    "networkTopology": {"mode": "x"},
                }
            )
        ),
        "spec.tasks[0].partitionPolicy.networkTopology.mode",
        'Unsupported value: "x"',
    ),
    (
        "volume-mount-required",
        spec(volumes=[{"volumeClaimName": "data"}]),
        "spec.volumes[0].mountPath",
        "Required value",
    ),
    (
        "volume-mount-min-length",
        spec(volumes=[{"mountPath": "", "volumeClaimName": "d"}]),
        "spec.volumes[0].mountPath",
        'Invalid value: "": spec.volumes[0].mountPath in body should be at least 1 chars long',
    ),
    (
        "volume-mount-pattern",
        spec(volumes=[{"mountPath": "/a:b", "volumeClaimName": "d"}]),
        "spec.volumes[0].mountPath",
        "should match '^[^:]+$'",
    ),
    (
        "volume-claim-name-long",
        spec(volumes=[{"mountPath": "/d", "volumeClaimName": "c" * 254}]),
        "spec.volumes[0].volumeClaimName",
        "may not be longer than 253",
    ),
]


@pytest.mark.parametrize(
    ("data", "path", "message"), [pytest.param(*row[1:], id=row[0]) for row in SCHEMA]
)
def test_crd_schema_rejects(data: Spec, path: str, message: str) -> None:
    assert_reports(errors(check(data)), path, message)


VALID = [
    pytest.param(spec(), id="minimal"),
    pytest.param({**spec(), "minAvailable": 0}, id="min-available-zero"),
    pytest.param(spec(task(None)), id="task-name-absent-defaults"),
    pytest.param(spec(queue="team.a-1", priorityClassName="high"), id="subdomain-queue"),
    pytest.param(spec(minSuccess=1, ttlSecondsAfterFinished=0, maxRetry=0), id="lower-bounds"),
    pytest.param(spec(networkTopology={"mode": "soft", "highestTierAllowed": 2}), id="network"),
    pytest.param(spec(plugins={"ssh": [], "svc": [], "env": []}), id="plugins"),
    pytest.param(
        spec(
            task(
                replicas=8,
                partitionPolicy={"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1},
            )
        ),
        id="partition",
    ),
    pytest.param(
        spec(
            task(
                replicas=8,
                minAvailable=4,
                partitionPolicy={"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1},
            )
        ),
        id="partition-min-available",
    ),
    pytest.param(spec(task("a"), task("b", dependsOn={"name": ["a"]})), id="task-depends-on"),
    pytest.param(
        spec(
            volumes=[
                {"mountPath": "/data", "volumeClaimName": "pvc-1"},
                {"mountPath": "/new", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}},
            ]
        ),
        id="volumes",
    ),
    pytest.param(
        spec(
            policies=[
                policy(events=["PodFailed", "PodEvicted"], action="RestartJob"),
                policy(exitCode=3, action="AbortJob"),
                policy(event="TaskCompleted", action="CompleteJob"),
            ]
        ),
        id="policies",
    ),
    pytest.param(spec(policies=[policy(event="*", action="AbortJob")]), id="star-alone"),
    pytest.param(
        spec(policies=[policy(exitCode=1, action="Anything")]), id="exit-code-action-unchecked"
    ),
    pytest.param(
        spec(
            task(
                template=pod(
                    containers=[guaranteed("1")], initContainers=[guaranteed("1", name="init")]
                ),
                topologyPolicy="single-numa-node",
            )
        ),
        id="topology-whole-cpus",
    ),
    pytest.param(spec(task(topologyPolicy="none")), id="topology-none"),
]


@pytest.mark.parametrize("data", VALID)
def test_valid_specs_are_admitted(data: Spec) -> None:
    assert errors(check(data)) == []


# --- the vcjob webhook rules (reference §6.4) ---------------------------------------------

WEBHOOK = [
    (
        "4-no-tasks-field",
        {k: v for k, v in spec().items() if k != "tasks"},
        "spec.tasks",
        "No task specified in job spec",
    ),
    ("4-empty-tasks", {**spec(), "tasks": []}, "spec.tasks", "No task specified in job spec"),
    (
        "5-mpi-default-master",
        spec(task("worker"), plugins={"mpi": []}),
        "spec.plugins.mpi",
        "The specified mpi master task was not found",
    ),
    (
        "5-mpi-named-master",
        spec(task("master"), task("worker"), plugins={"mpi": ["--master=launcher"]}),
        "spec.plugins.mpi",
        "The specified mpi master task was not found",
    ),
    (
        "6-job-tiers",
        spec(networkTopology={"highestTierAllowed": 1, "highestTierName": "volcano.sh/hypernode"}),
        "spec.networkTopology",
        (
            "must not specify 'highestTierAllowed' and "
            "'highestTierName' in networkTopology simultaneously"
        ),
    ),
    (
        "6-partition-tiers",
        spec(
            task(
                replicas=2,
                partitionPolicy={
                    "totalPartitions": 1,
                    "partitionSize": 2,
                    "networkTopology": {"highestTierAllowed": 1, "highestTierName": "t"},
                },
            )
        ),
        "spec.tasks[0].partitionPolicy.networkTopology",
        "must not specify 'highestTierAllowed' and 'highestTierName'",
    ),
    (
        "7-task-min-gt-replicas",
        spec(task(replicas=2, minAvailable=3)),
        "spec.tasks[0].minAvailable",
        "'minAvailable' is greater than 'replicas' in task: main, job: job",
    ),
    (
        "9-duplicate",
        spec(task("a"), task("b"), task("a")),
        "spec.tasks[2].name",
        "duplicated task name a",
    ),
    (
        "9-duplicate-defaulted",
        spec(task(None), task("default0")),
        "spec.tasks[1].name",
        "duplicated task name default0",
    ),
    (
        "15-total-partitions",
        spec(task(replicas=8, partitionPolicy={"totalPartitions": -1, "partitionSize": 8})),
        "spec.tasks[0].partitionPolicy.totalPartitions",
        "'TotalPartitions' must be greater than 0 in task: main, job: job",
    ),
    (
        "15-partition-size",
        spec(task(replicas=8, partitionPolicy={"totalPartitions": 8, "partitionSize": -1})),
        "spec.tasks[0].partitionPolicy.partitionSize",
        "'PartitionSize' must be greater than 0 in task: main, job: job",
    ),
    (
        "15-replicas",
        spec(task(replicas=8, partitionPolicy={"totalPartitions": 2, "partitionSize": 3})),
        "spec.tasks[0].replicas",
        "'Replicas' are not equal to TotalPartitions*PartitionSize in task: main, job: job",
    ),
    (
        "15-min-available",
        spec(
            task(
                replicas=8,
                minAvailable=1,
                partitionPolicy={"totalPartitions": 4, "partitionSize": 2, "minPartitions": 1},
            )
        ),
        "spec.tasks[0].minAvailable",
        "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: main, job: job",
    ),
    (
        "17-min-available-gt-total",
        spec(task("a"), task("b", 2), minAvailable=4),
        "spec.minAvailable",
        "job 'minAvailable' should not be greater than total replicas in tasks",
    ),
    (
        "18-unknown-plugin",
        spec(plugins={"ssh": [], "horovod": []}),
        "spec.plugins.horovod",
        "unable to find job plugin: horovod",
    ),
    (
        "19-mount-required",
        spec(volumes=[{"mountPath": "", "volumeClaimName": "d"}]),
        "spec.volumes[0].mountPath",
        "mountPath is required",
    ),
    (
        "19-duplicate-mount",
        spec(
            volumes=[
                {"mountPath": "/d", "volumeClaimName": "a"},
                {"mountPath": "/d", "volumeClaimName": "b"},
            ]
        ),
        "spec.volumes[1].mountPath",
        "duplicated mountPath: /d",
    ),
    (
        "19-no-claim",
        spec(volumes=[{"mountPath": "/d"}]),
        "spec.volumes[0]",
        "either VolumeClaim or VolumeClaimName must be specified",
    ),
    (
        "19-claim-conflict",
        spec(volumes=[{"mountPath": "/d", "volumeClaimName": "a", "volumeClaim": {}}]),
        "spec.volumes[0]",
        (
            "conflict: If you want to use an existing PVC, just specify VolumeClaimName.If you "
            "want to create a new PVC, you do not need to specify VolumeClaimName"
        ),
    ),
    (
        "19-claim-name",
        spec(volumes=[{"mountPath": "/d", "volumeClaimName": "Bad_Name"}]),
        "spec.volumes[0].volumeClaimName",
        "invalid VolumeClaimName Bad_Name : [a lowercase RFC 1123 subdomain",
    ),
    (
        "21-cycle",
        spec(
            task("a", dependsOn={"name": ["b"]}),
            task("b", dependsOn={"name": ["a"]}),
            minAvailable=2,
        ),
        "spec.tasks[0].dependsOn",
        (
            "job has dependencies between tasks, but doesn't form a "
            "directed acyclic graph(DAG): cycle a → b → a"
        ),
    ),
    (
        "21-self",
        spec(task("a", dependsOn={"name": ["a"]})),
        "spec.tasks[0].dependsOn",
        "doesn't form a directed acyclic graph(DAG): cycle a → a",
    ),
    (
        "21-unknown-task",
        spec(task("t1", dependsOn={"name": ["t3"]}), task("t2")),
        "spec.tasks[0].dependsOn.name[0]",
        (
            "doesn't form a directed acyclic graph(DAG): dependsOn "
            'names "t3", which is not a task of this job'
        ),
    ),
]


@pytest.mark.parametrize(
    ("data", "path", "message"), [pytest.param(*row[1:], id=row[0]) for row in WEBHOOK]
)
def test_webhook_rules_reject(data: Spec, path: str, message: str) -> None:
    assert_reports(errors(check(data)), path, message)


def test_mpi_master_flag_forms() -> None:
    for args in (["--master=launcher"], ["-master=launcher"], ["--master", "launcher"]):
        data = spec(task("launcher"), plugins={"mpi": [*args, "--port=22"]})
        assert errors(check(data)) == [], args


def test_no_tasks_reports_only_the_no_task_rule() -> None:
    found = errors(check({"minAvailable": 3, "plugins": {"mpi": []}}))
    assert [e.message for e in found] == ["No task specified in job spec"]


def test_negative_replicas_do_not_cascade() -> None:
    found = errors(check(spec(task(replicas=-1), minAvailable=0)))
    assert [e.path for e in found] == ["spec.tasks[0].replicas"]


def test_every_duplicate_and_every_problem_is_reported() -> None:
    data = spec(task("a"), task("a"), task("a", replicas=1, minAvailable=2), minAvailable=9)
    found = errors(check(data))
    assert [e.path for e in found if "duplicated" in e.message] == [
        "spec.tasks[1].name",
        "spec.tasks[2].name",
    ]
    assert any("greater than 'replicas'" in e.message for e in found)
    assert any("total replicas" in e.message for e in found)


# --- lifecycle policies (rule 11), job and task lists -------------------------------------

POLICIES = [
    (
        "both-event-and-exit-code",
        [policy(event="PodFailed", exitCode=3, action="RestartJob")],
        "[0]",
        "must not specify event and exitCode simultaneously",
    ),
    (
        "events-and-exit-code",
        [policy(events=["PodFailed"], exitCode=3, action="RestartJob")],
        "[0]",
        "must not specify event and exitCode simultaneously",
    ),
    (
        "neither",
        [policy(action="RestartJob")],
        "[0]",
        "either event and exitCode should be specified",
    ),
    (
        "internal-event",
        [policy(event="CommandIssued", action="RestartJob")],
        "[0]",
        'Invalid value: "CommandIssued": invalid policy event; valid events are [* PodFailed',
    ),
    (
        "pod-running-event",
        [policy(events=["PodRunning"], action="RestartJob")],
        "[0]",
        "invalid policy event",
    ),
    (
        "internal-action",
        [policy(event="PodFailed", action="SyncJob")],
        "[0].action",
        'Invalid value: "SyncJob": invalid policy action; valid actions are [AbortJob',
    ),
    (
        "missing-action",
        [policy(event="PodFailed")],
        "[0].action",
        'Invalid value: "": invalid policy action',
    ),
    (
        "duplicate-event",
        [
            policy(event="PodFailed", action="RestartJob"),
            policy(events=["PodEvicted", "PodFailed"], action="AbortJob"),
        ],
        "[1]",
        "duplicate event PodFailed  across different policy",
    ),
    (
        "exit-code-zero",
        [policy(exitCode=0, action="RestartJob")],
        "[0].exitCode",
        "0 is not a valid error code",
    ),
    (
        "duplicate-exit-code",
        [policy(exitCode=2, action="RestartJob"), policy(exitCode=2, action="AbortJob")],
        "[1].exitCode",
        "duplicate exitCode 2",
    ),
    (
        "star-with-others",
        [policy(event="*", action="AbortJob"), policy(event="PodFailed", action="RestartJob")],
        "",
        "if there's * here, no other policy should be here",
    ),
]


@pytest.mark.parametrize(
    ("items", "suffix", "message"), [pytest.param(*row[1:], id=row[0]) for row in POLICIES]
)
@pytest.mark.parametrize("level", ["job", "task"])
def test_policy_rules(items: list[dict[str, Any]], suffix: str, message: str, level: str) -> None:
    if level == "job":
        data, base = spec(policies=items), "spec.policies"
    else:
        data, base = spec(task(policies=items)), "spec.tasks[0].policies"
    assert_reports(errors(check(data)), base + suffix, message)


def test_event_and_event_list_are_deduplicated_within_one_policy() -> None:
    data = spec(policies=[policy(event="PodFailed", events=["PodFailed"], action="RestartJob")])
    assert errors(check(data)) == []


def test_job_and_task_lists_are_separate() -> None:
    failed = policy(event="PodFailed", action="RestartJob")
    assert errors(check(spec(task(policies=[failed]), policies=[failed]))) == []


# --- pod template (rules 13, 14) ----------------------------------------------------------

TEMPLATE = [
    (
        "no-containers",
        pod(containers=[]),
        "spec.tasks[0].template.spec.containers",
        "spec.task[0].template.spec.containers: Required value",
    ),
    (
        "no-pod-spec",
        {"metadata": {"name": "x"}},
        "spec.tasks[0].template.spec.containers",
        "Required value",
    ),
    (
        "container-name-missing",
        pod(containers=[{"image": "x"}]),
        "spec.tasks[0].template.spec.containers[0].name",
        "spec.task[0].template.spec.containers[0].name: Required value",
    ),
    (
        "container-name-invalid",
        pod(containers=[{"name": "Main", "image": "x"}]),
        "spec.tasks[0].template.spec.containers[0].name",
        'Invalid value: "Main": a lowercase RFC 1123 label',
    ),
    (
        "container-duplicate",
        pod(containers=[{"name": "a"}, {"name": "a"}]),
        "spec.tasks[0].template.spec.containers[1].name",
        'spec.task[0].template.spec.containers[1].name: Duplicate value: "a"',
    ),
    (
        "init-duplicates-container",
        pod(initContainers=[{"name": "main"}]),
        "spec.tasks[0].template.spec.initContainers[0].name",
        'Duplicate value: "main"',
    ),
    (
        "restart-policy",
        pod(restartPolicy="Sometimes"),
        "spec.tasks[0].template.spec.restartPolicy",
        (
            "spec.task[0].template.spec.restartPolicy: Unsupported value: "
            '"Sometimes": supported values: "Always", "OnFailure", "Never"'
        ),
    ),
]


@pytest.mark.parametrize(
    ("template", "path", "message"), [pytest.param(*row[1:], id=row[0]) for row in TEMPLATE]
)
def test_pod_template_rules(template: dict[str, Any], path: str, message: str) -> None:
    assert_reports(errors(check(spec(task(template=template)))), path, message)


def test_pod_template_index_is_the_task_position() -> None:
    data = spec(task("a"), task("b", template=pod(containers=[])))
    assert_reports(errors(check(data)), "spec.tasks[1].template.spec.containers", "spec.task[1].")


TOPOLOGY = [
    (
        "best-effort-pod",
        [{"name": "main"}],
        "spec.tasks[0].topologyPolicy",
        "spec.task[0] isn't Guaranteed pod, kind=BestEffort",
    ),
    (
        "burstable-pod",
        [{"name": "main", "resources": {"requests": {"cpu": "1"}}}],
        "spec.tasks[0].topologyPolicy",
        "spec.task[0] isn't Guaranteed pod, kind=Burstable",
    ),
    (
        "fractional-cpu",
        [guaranteed("1500m")],
        "spec.tasks[0].template.spec.containers[0].resources",
        "the cpu request isn't an integer in spec.task[0] container[0].",
    ),
    (
        "second-container",
        [guaranteed("1"), guaranteed("0.5", name="side")],
        "spec.tasks[0].template.spec.containers[1].resources",
        "container[1].",
    ),
]


@pytest.mark.parametrize(
    ("containers", "path", "message"), [pytest.param(*row[1:], id=row[0]) for row in TOPOLOGY]
)
def test_topology_policy_needs_whole_guaranteed_cpus(
    containers: list[dict[str, Any]], path: str, message: str
) -> None:
    data = spec(task(template=pod(containers=containers), topologyPolicy="restricted"))
    assert_reports(errors(check(data)), path, message)


def test_limits_stand_in_for_missing_requests() -> None:
    limits = {"cpu": 2, "memory": "512Mi"}
    container = {"name": "main", "resources": {"limits": limits}}
    data = spec(task(template=pod(containers=[container]), topologyPolicy="best-effort"))
    assert errors(check(data)) == []


# --- warnings: runtime traps, never rejections --------------------------------------------

WARNINGS = [
    (
        "star-restart-job",
        spec(policies=[policy(event="*", action="RestartJob")]),
        "spec.policies[0]",
        'event "*" with action RestartJob also matches TaskCompleted',
    ),
    (
        "star-restart-task-level",
        spec(task(policies=[policy(events=["*"], action="RestartTask")])),
        "spec.tasks[0].policies[0]",
        "restarts each time a task completes",
    ),
    (
        "star-restart-pod",
        spec(policies=[policy(event="*", action="RestartPod")]),
        "spec.policies[0]",
        "list the failure events instead",
    ),
    (
        "star-restart-partition",
        spec(policies=[policy(event="*", action="RestartPartition")]),
        "spec.policies[0]",
        "Volcano bug B3",
    ),
    (
        "no-restart-policy",
        spec(task(template=pod(restartPolicy=None))),
        "spec.tasks[0].template.spec.restartPolicy",
        'task "main" has no restartPolicy: Kubernetes defaults it to Always',
    ),
    (
        "depends-on-default-min",
        {
            k: v
            for k, v in spec(task("a"), task("b", 2, dependsOn={"name": ["a"]})).items()
            if k != "minAvailable"
        },
        "spec.minAvailable",
        "task b uses dependsOn but minAvailable is not set",
    ),
    (
        "depends-on-min-zero",
        spec(task("a", 2), task("b", 3, dependsOn={"name": ["a"]}), minAvailable=0),
        "spec.minAvailable",
        "set spec.minAvailable to at most 2, the pods of the tasks without dependsOn",
    ),
]


@pytest.mark.parametrize(
    ("data", "path", "message"), [pytest.param(*row[1:], id=row[0]) for row in WARNINGS]
)
def test_warnings(data: Spec, path: str, message: str) -> None:
    found = check(data)
    assert errors(found) == []
    assert_reports(warnings(found), path, message)


def test_empty_template_is_an_error_and_a_warning() -> None:
    found = check(spec(task(template={})))
    assert_reports(errors(found), "spec.tasks[0].template.spec.containers", "Required value")
    path = "spec.tasks[0].template.spec.restartPolicy"
    assert_reports(warnings(found), path, "set template.spec.restartPolicy to Never")


NO_WARNING = [
    pytest.param(spec(policies=[policy(event="*", action="AbortJob")]), id="star-abort"),
    pytest.param(
        spec(policies=[policy(event="PodFailed", action="RestartJob")]), id="restart-on-failure"
    ),
    pytest.param(spec(task(template=pod(restartPolicy="OnFailure"))), id="restart-policy-set"),
    pytest.param(
        spec(task("a"), task("b", dependsOn={"name": ["a"]}), minAvailable=1),
        id="depends-on-with-min",
    ),
    pytest.param(
        {
            k: v
            for k, v in spec(task("a"), task("b", dependsOn={"name": []})).items()
            if k != "minAvailable"
        },
        id="depends-on-empty",
    ),
]


@pytest.mark.parametrize("data", NO_WARNING)
def test_no_warning(data: Spec) -> None:
    assert check(data) == []


# --- entry points, names, paths -----------------------------------------------------------


def vcjob(name: str, data: Spec) -> VCJob:
    return VCJob.from_dict(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": data,
        }
    )


def test_vcjob_checks_job_and_pod_names() -> None:
    name = "j" * 60
    found = errors(validate_vcjob(vcjob(name, spec(task("main", 3)))))
    pod_name = f"{name}-main-2"
    assert_reports(found, "spec.tasks[0].name", f"create pod with name {pod_name} validate failed")
    assert_reports(found, "spec.tasks[0].name", "must be no more than 63 characters")


def test_vcjob_name_too_long() -> None:
    name = "j" * 64
    found = errors(validate_vcjob(vcjob(name, spec())))
    assert_reports(found, "metadata.name", f"create job with name {name} validate failed [")


def test_template_skips_generated_name_rules() -> None:
    template = JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": "t" * 70},
            "spec": spec(),
        }
    )
    assert validate_jobtemplate(template) == []


def test_template_without_spec_has_no_task() -> None:
    template = JobTemplate.from_dict(
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate"}
    )
    assert [e.message for e in validate_jobtemplate(template)] == ["No task specified in job spec"]


def test_path_prefixes_every_error_and_schema_message() -> None:
    base = "spec.flows[0].patch.jobSpec"
    found = check(spec(task(replicas=-1, template=pod(restartPolicy=None))), path=base)
    assert found and all(e.path.startswith(base + ".") for e in found)
    assert_reports(found, f"{base}.tasks[0].replicas", f"{base}.tasks[0].replicas in body")


def test_job_name_omitted_from_task_messages_when_unknown() -> None:
    found = errors(check(spec(task(replicas=1, minAvailable=2)), job=""))
    assert [e.message for e in found] == ["'minAvailable' is greater than 'replicas' in task: main"]


_EVENTS = st.sampled_from(["*", "PodFailed", "OutOfSync", "TaskCompleted", "", "Bogus"])
_ACTIONS = st.sampled_from(["RestartJob", "AbortJob", "SyncJob", "", "Restart"])
_INTS = st.integers(min_value=-3, max_value=5)
_NAMES = st.sampled_from(["a", "b", "main", "A_b", "", "x" * 70])
_POLICY = st.fixed_dictionaries(
    {},
    optional={
        "event": _EVENTS,
        "events": st.lists(_EVENTS, max_size=3),
        "action": _ACTIONS,
        "exitCode": _INTS,
    },
)
_TASK = st.fixed_dictionaries(
    {"template": st.just(pod())},
    optional={
        "name": _NAMES,
        "replicas": _INTS,
        "minAvailable": _INTS,
        "policies": st.lists(_POLICY, max_size=3),
        "topologyPolicy": st.sampled_from(["none", "restricted", "odd"]),
        "dependsOn": st.fixed_dictionaries({"name": st.lists(_NAMES, max_size=2)}),
        "partitionPolicy": st.fixed_dictionaries(
            {}, optional={"totalPartitions": _INTS, "partitionSize": _INTS, "minPartitions": _INTS}
        ),
    },
)
_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "minAvailable": _INTS,
        "maxRetry": _INTS,
        "tasks": st.lists(_TASK, max_size=4),
        "policies": st.lists(_POLICY, max_size=3),
        "plugins": st.dictionaries(st.sampled_from(["mpi", "ssh", "nope"]), st.just(["--master"])),
        "volumes": st.lists(
            st.fixed_dictionaries({}, optional={"mountPath": _NAMES, "volumeClaimName": _NAMES}),
            max_size=3,
        ),
    },
)


@settings(max_examples=200, deadline=None)
@given(_SPEC)
def test_never_raises_and_paths_are_prefixed(data: Spec) -> None:
    found = check(data, path="spec.x")
    assert all(e.path.startswith("spec.x") for e in found)
