"""JobTemplate and vcjob admission: the CRD schema (reference §6.3) plus Volcano's vcjob create
rules (§6.4, queue state excluded) applied to a JobSpec (compatibility row 17), with Volcano's
messages, and warnings for the runtime traps of docs/compatibility.md "The local vcjob
runtime". Every problem is reported, none raised. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcflow.admission import fieldtypes, jobspec, podtemplate, policies, replicas
from vcflow.api import names
from vcflow.api.errors import FieldError
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec, NetworkTopology, TaskSpec, VCJob
from vcflow.dag import graph as dag

#: Job plugins registered in Volcano's job controller (rule 18).
PLUGINS = ("ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray")
NO_TASK = "No task specified in job spec"
NOT_DAG = "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)"
TIERS_BOTH = (
    "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"
)


def validate_job_spec(
    spec: JobSpec, *, path: str = "spec", job_name: str = "", references: bool = False
) -> list[FieldError]:
    """Every problem of a vcjob spec under the vcjob create rules (queue state excluded);
    `references`: a JobTemplate's spec, whose quantities may be `${{ }}` references."""
    errors = jobspec.schema_errors(spec, path)
    errors += fieldtypes.job_spec_type_errors(spec, path, references=references)
    errors += _webhook(spec, path, job_name)
    errors += replicas.limit_errors(spec, path)
    errors += _warnings(spec, path)
    return errors


def validate_jobtemplate(template: JobTemplate) -> list[FieldError]:
    """A template is checked as the vcjob it becomes, except for that vcjob's generated names
    (`<flow>-<template>`), which JobFlow admission checks. An absent spec has no task."""
    return validate_job_spec(template.spec or JobSpec(), job_name=template.name, references=True)


def validate_vcjob(job: VCJob) -> list[FieldError]:
    """The spec rules plus rules 12 and 16: the job and pod names must be qualified names."""
    spec = job.spec or JobSpec()
    return validate_job_spec(spec, job_name=job.name) + _generated_names(spec, job.name)


def task_name(task: TaskSpec, index: int) -> str:
    """The name Volcano's mutating webhook leaves a task with: `default<i>` when unset."""
    return task.name or f"default{index}"


def _in_task(task: str, job: str) -> str:
    return f"in task: {task}, job: {job}" if job else f"in task: {task}"


def _webhook(spec: JobSpec, path: str, job: str) -> list[FieldError]:
    """The rules in the order Volcano concatenates their messages."""
    tasks = spec.tasks or []
    if not tasks:
        errors = [FieldError(NO_TASK, f"{path}.tasks")]
    else:
        errors = _mpi_master(spec, path) + _unique_task_names(tasks, path)
        for i, task in enumerate(tasks):
            errors += _task(task, i, f"{path}.tasks[{i}]", job)
        errors += _total_replicas(spec, tasks, path)
    errors += policies.validate_policies(spec.policies, f"{path}.policies")
    errors += _plugins(spec, path)
    errors += _volumes(spec, path)
    errors += _task_dag(tasks, path)
    errors += _network_topology(spec.network_topology, f"{path}.networkTopology")
    return errors


def _total_replicas(spec: JobSpec, tasks: Sequence[TaskSpec], path: str) -> list[FieldError]:
    """Rule 17 (a negative replica count, already reported, counts as 0)."""
    if (spec.min_available or 0) <= sum(max(t.replicas or 0, 0) for t in tasks):
        return []
    message = "job 'minAvailable' should not be greater than total replicas in tasks"
    return [FieldError(message, f"{path}.minAvailable")]


def _task(task: TaskSpec, index: int, path: str, job: str) -> list[FieldError]:
    """Rules 7, 11 (task policies), 13, 14 and 15 for one task."""
    name = task_name(task, index)
    replicas = max(task.replicas or 0, 0)
    errors: list[FieldError] = []
    if task.min_available is not None and task.min_available > replicas:
        message = f"'minAvailable' is greater than 'replicas' {_in_task(name, job)}"
        errors.append(FieldError(message, f"{path}.minAvailable"))
    errors += policies.validate_policies(task.policies, f"{path}.policies")
    errors += podtemplate.template_errors(task, index, path)
    errors += _partition(task, name, path, job)
    return errors


def _partition(task: TaskSpec, name: str, path: str, job: str) -> list[FieldError]:
    """Rule 15 and rule 6 for the partition's own network topology."""
    policy = task.partition_policy
    if policy is None:
        return []
    ppath, where = f"{path}.partitionPolicy", _in_task(name, job)
    total, size = policy.total_partitions or 0, policy.partition_size or 0
    errors: list[FieldError] = []
    if total <= 0:
        message = f"'TotalPartitions' must be greater than 0 {where}"
        errors.append(FieldError(message, f"{ppath}.totalPartitions"))
    if size <= 0:
        errors.append(
            FieldError(f"'PartitionSize' must be greater than 0 {where}", f"{ppath}.partitionSize")
        )
    if total > 0 and size > 0 and (task.replicas or 0) != total * size:
        message = f"'Replicas' are not equal to TotalPartitions*PartitionSize {where}"
        errors.append(FieldError(message, f"{path}.replicas"))
    minimum = policy.min_partitions or 0
    if minimum > 0 and task.min_available is not None and task.min_available != minimum * size:
        message = f"'MinAvailable' is not equal to MinPartitions*PartitionSize {where}"
        errors.append(FieldError(message, f"{path}.minAvailable"))
    topology = jobspec.partition_topology(policy)
    errors += _network_topology(topology, f"{ppath}.networkTopology")
    return errors


def _network_topology(topology: NetworkTopology | None, path: str) -> list[FieldError]:
    """Rule 6."""
    if topology is None or topology.highest_tier_allowed is None:
        return []
    return [FieldError(TIERS_BOTH, path)] if topology.highest_tier_name else []


def _unique_task_names(tasks: Sequence[TaskSpec], path: str) -> list[FieldError]:
    """Rule 9. Volcano stops its task loop at the first duplicate; every one is reported here."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        name = task_name(task, i)
        if name in seen:
            errors.append(FieldError(f"duplicated task name {name}", f"{path}.tasks[{i}].name"))
        seen.add(name)
    return errors


def _mpi_master(spec: JobSpec, path: str) -> list[FieldError]:
    """Rule 5: the mpi plugin's `--master` task (default `master`) must be a task."""
    plugins = spec.plugins or {}
    if "mpi" not in plugins:
        return []
    master = _flag(plugins["mpi"] or [], "master", "master")
    if master in {task_name(t, i) for i, t in enumerate(spec.tasks or [])}:
        return []
    return [FieldError("The specified mpi master task was not found", f"{path}.plugins.mpi")]


def _flag(args: Sequence[str], flag: str, default: str) -> str:
    """The value of `--flag=v`, `-flag=v` or `--flag v` in Go flag syntax; the last one wins."""
    value = default
    for k, arg in enumerate(args):
        key, eq, rest = arg.lstrip("-").partition("=")
        if arg.startswith("-") and key == flag:
            value = rest if eq else (args[k + 1] if k + 1 < len(args) else value)
    return value


def _plugins(spec: JobSpec, path: str) -> list[FieldError]:
    """Rule 18."""
    return [
        FieldError(f"unable to find job plugin: {name}", f"{path}.plugins.{name}")
        for name in spec.plugins or {}
        if name not in PLUGINS
    ]


def _volumes(spec: JobSpec, path: str) -> list[FieldError]:
    """Rule 19 (Volcano's validateIO), per volume instead of stopping at the first problem."""
    errors: list[FieldError] = []
    mounts: set[str] = set()
    for k, volume in enumerate(spec.volumes or []):
        vpath, mount = f"{path}.volumes[{k}]", volume.mount_path or ""
        claim_name = volume.volume_claim_name or ""
        if not mount:
            errors.append(FieldError("mountPath is required", f"{vpath}.mountPath"))
        elif mount in mounts:
            errors.append(FieldError(f"duplicated mountPath: {mount}", f"{vpath}.mountPath"))
        elif volume.volume_claim is None and not claim_name:
            message = "either VolumeClaim or VolumeClaimName must be specified"
            errors.append(FieldError(message, vpath))
        elif claim_name and volume.volume_claim is not None:
            errors.append(FieldError(_CLAIM_CONFLICT, vpath))
        elif claim_name and (problems := names.dns1123_subdomain_errors(claim_name)):
            message = f"invalid VolumeClaimName {claim_name} : [{' '.join(problems)}]"
            errors.append(FieldError(message, f"{vpath}.volumeClaimName"))
        mounts.add(mount)
    return errors


_CLAIM_CONFLICT = (
    "conflict: If you want to use an existing PVC, just specify VolumeClaimName.If you want to "
    "create a new PVC, you do not need to specify VolumeClaimName"
)


def _task_dag(tasks: Sequence[TaskSpec], path: str) -> list[FieldError]:
    """Rule 21: `dependsOn` names are tasks of this job and form no cycle."""
    if all(t.depends_on is None for t in tasks):
        return []
    entries = [(task_name(t, i), _depends_on(t)) for i, t in enumerate(tasks)]
    graph = dag.Graph.build(entries)
    index = {name: i for i, (name, _) in reversed(list(enumerate(entries)))}
    errors = [
        FieldError(
            f'{NOT_DAG}: dependsOn names "{target}", which is not a task of this job',
            f"{path}.tasks[{index[node]}].dependsOn.name[{j}]",
        )
        for node, j, target in dag.unknown_targets(graph)
    ]
    cycle = dag.find_cycle(graph)
    if cycle is not None:
        message = f"{NOT_DAG}: cycle {dag.format_cycle(cycle)}"
        errors.append(FieldError(message, f"{path}.tasks[{index[cycle[0]]}].dependsOn"))
    return errors


def _depends_on(task: TaskSpec) -> list[str]:
    return list(task.depends_on.name or []) if task.depends_on is not None else []


def _warnings(spec: JobSpec, path: str) -> list[FieldError]:
    """Volcano behaviours that are traps (docs/compatibility.md "The local vcjob runtime");
    never reject."""
    tasks = spec.tasks or []
    found = policies.star_restart_warnings(spec.policies, f"{path}.policies")
    for i, task in enumerate(tasks):
        tpath = f"{path}.tasks[{i}]"
        found += policies.star_restart_warnings(task.policies, f"{tpath}.policies")
        found += podtemplate.restart_policy_warning(task, task_name(task, i), tpath)
        found += podtemplate.working_dir_warnings(task, tpath)
    found += _no_pods_warnings(tasks, path) + _min_success_warning(spec, path)
    return found + _gang_deadlock_warning(spec, path)


def _no_pods_warnings(tasks: Sequence[TaskSpec], path: str) -> list[FieldError]:
    """Volcano admits tasks with 0 replicas (the CRD's minimum, and what an omitted or
    misspelt `replicas` means); a job whose every task has none goes Running with no pod
    and stays so (Running rule 1: Σreplicas = 0 keeps the phase). Never rejects."""
    empty = [i for i, t in enumerate(tasks) if (t.replicas or 0) == 0]
    if not empty:
        return []
    if len(empty) == len(tasks):
        message = (
            "every task has 0 replicas: the job creates no pods; it goes Running at once "
            "and never finishes (set tasks[].replicas)"
        )
        return [FieldError(message, f"{path}.tasks", warning=True)]
    found: list[FieldError] = []
    for i in empty:
        said = "0 replicas" if tasks[i].replicas == 0 else "no replicas (0 when omitted)"
        message = f"{said}: the task creates no pods"
        found.append(FieldError(message, f"{path}.tasks[{i}].replicas", warning=True))
    return found


def _min_success_warning(spec: JobSpec, path: str) -> list[FieldError]:
    """`minSuccess` above the job's pods can never be met: the job ends Failed once every
    pod has finished (Running rule 3b). Volcano admits it."""
    total = sum(max(t.replicas or 0, 0) for t in spec.tasks or [])
    wanted = spec.min_success
    if wanted is None or not total or wanted <= total:
        return []
    pods = "pod" if total == 1 else "pods"
    message = (
        f"minSuccess {wanted} is more than the job's {total} {pods}: the job can never "
        "complete, it ends Failed once every pod has finished"
    )
    return [FieldError(message, f"{path}.minSuccess", warning=True)]


def _gang_deadlock_warning(spec: JobSpec, path: str) -> list[FieldError]:
    """dependsOn holds pods back, but the default minAvailable waits for all of them."""
    tasks = spec.tasks or []
    waiting = [task_name(t, i) for i, t in enumerate(tasks) if _depends_on(t)]
    if not waiting or spec.min_available:
        return []
    total = sum(max(t.replicas or 0, 0) for t in tasks)
    first = sum(max(t.replicas or 0, 0) for t in tasks if not _depends_on(t))
    who = f"task {waiting[0]} uses" if len(waiting) == 1 else f"tasks {', '.join(waiting)} use"
    return [
        FieldError(
            f"{who} dependsOn but minAvailable is not set: Volcano then gang-schedules all "
            f"{total} pods together, while dependsOn keeps the dependent pods from being "
            "created, so the job stays Pending forever; set spec.minAvailable to at most "
            f"{first}, the pods of the tasks without dependsOn",
            f"{path}.minAvailable",
            warning=True,
        )
    ]


def _generated_names(spec: JobSpec, job: str) -> list[FieldError]:
    """Rules 16 and 12, for a vcjob (a template's vcjob gets another name). Pod index: the
    task's largest replica index (Volcano uses the task's list position, bug B8)."""
    if not job:
        return []
    errors: list[FieldError] = []
    if problems := names.qualified_name_errors(job):
        message = f"create job with name {job} validate failed [{' '.join(problems)}]"
        errors.append(FieldError(message, "metadata.name"))
    for i, task in enumerate(spec.tasks or []):
        pod = names.pod_name(job, task_name(task, i), max((task.replicas or 0) - 1, 0))
        if problems := names.qualified_name_errors(pod):
            message = f"create pod with name {pod} validate failed [{' '.join(problems)}]"
            errors.append(FieldError(message, f"spec.tasks[{i}].name"))
    return errors
