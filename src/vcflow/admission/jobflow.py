"""JobFlow admission: Volcano's DAG webhook (reference §6.1), the CRD schema (§6.3) and
vcflow's fixes (compatibility rows 1, 2, 4, 10, 11, 13); the flow features' own checks (row 20:
retries, deadlines, outcomes, probes) are `flowfeatures`, the arguments' (row 22) `arguments`,
`when`/`switch`/`onExit`'s `language`; `spec.queue` and `spec.priorityClassName` are object
names, `spec.schedulingPolicy` and `runningEstimate` are `schedulingpolicy`'s
(docs/scheduling.md).

Checks run in the order the conformance cases assume — spec-update refusal, unique names,
unknown targets, cycles — and every problem is reported, none raised. Pure.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from vcflow.admission import (
    arguments,
    collisions,
    fanout,
    flowfeatures,
    jobtemplate,
    language,
    references,
    schedulingpolicy,
)
from vcflow.api import names, phases, printable
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.platform import Platform
from vcflow.api.vcjob import JobSpec
from vcflow.dag import graph as dag

NOT_DAG = "jobflow Flow is not DAG"
SPEC_UPDATE = "jobflow spec updates are not supported"
HINTS = 5
UNFINISHED = frozenset({phases.FlowPhase.PENDING, phases.FlowPhase.RUNNING})


def _rerun_hint(flow: JobFlow) -> str:
    """What to do instead of changing a flow's spec (its arguments, say)."""
    namespace = "" if flow.namespace in ("", "default") else f" -n {flow.namespace}"
    return (
        "a flow runs its spec once: delete the flow first, or run it again as a new flow "
        f"with vcflow resubmit jobflow {flow.name}{namespace} [-p NAME=VALUE]"
    )


def validate_jobflow(
    flow: JobFlow,
    *,
    old: JobFlow | None = None,
    templates: dict[str, JobTemplate] | None = None,
    resolve_templates: bool = False,
    platform: Platform = Platform.LOCAL,
) -> list[FieldError]:
    """All problems of a JobFlow create (old=None) or update; warnings included.

    `templates` (same namespace) lets the check reach into what each entry will create:
    pod names and the patched job spec. With `resolve_templates`, a missing template is a
    warning (the entry would wait with TemplateNotFound). `platform`: where the pods run
    (locally, say what only vcflow's local runtime cannot do).
    """
    errors: list[FieldError] = []
    if old is not None and _spec_dump(old) != _spec_dump(flow):
        errors.append(FieldError(SPEC_UPDATE, "spec", hint=_rerun_hint(flow)))
    flows = flow.flows
    errors += _schema(flows)
    errors += _scheduling(flow)
    errors += schedulingpolicy.validate(flow)
    errors += _unique_names(flows)
    errors += _dag(flows)
    errors += _probes(flows)
    errors += flowfeatures.validate(flow, templates or {}, platform=platform)
    errors += arguments.validate(flow, platform=platform)
    errors += language.validate(flow)
    errors += _generated_names(flow)
    specs = collisions.entry_specs(flow, templates or {})
    errors += _entries_against_templates(flow, templates or {}, specs, resolve_templates)
    errors += references.validate(flow, templates or {}, specs)
    errors += arguments.env_warnings(flow, specs)
    return errors


def _spec_dump(flow: JobFlow) -> object:
    return flow.spec.to_dict() if flow.spec is not None else None


def _schema(flows: Sequence[Flow]) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, entry in enumerate(flows):
        base = f"spec.flows[{i}]"
        if not entry.name:
            errors.append(
                FieldError(
                    f'Invalid value: "": {base}.name in body should be at least 1 chars long',
                    f"{base}.name",
                )
            )
        errors += _template_name(entry.template, f"{base}.template")
        for j, case in enumerate(entry.switch or []):
            errors += _template_name(case.template, f"{base}.switch[{j}].template")
        probe = entry.depends_on.probe if entry.depends_on else None
        if probe is None:
            continue
        ppath = f"{base}.dependsOn.probe"
        for j, http in enumerate(probe.http_get_list or []):
            errors += _port(http.port, f"{ppath}.httpGetList[{j}].port")
            errors += _max_len(http.task_name, 253, f"{ppath}.httpGetList[{j}].taskName")
        for j, tcp in enumerate(probe.tcp_socket_list or []):
            errors += _port(tcp.port, f"{ppath}.tcpSocketList[{j}].port")
            errors += _max_len(tcp.task_name, 253, f"{ppath}.tcpSocketList[{j}].taskName")
        for j, ts in enumerate(probe.task_status_list or []):
            errors += _max_len(ts.task_name, 253, f"{ppath}.taskStatusList[{j}].taskName")
            errors += _max_len(ts.phase, 63, f"{ppath}.taskStatusList[{j}].phase")
    return errors


def _scheduling(flow: JobFlow) -> list[FieldError]:
    """`spec.queue` and `spec.priorityClassName` (docs/scheduling.md) name a Queue and a
    PriorityClass: object names, as the vcjob's own fields are; empty is refused, as an
    entry's `template` is (absent means: the template's, else Volcano's `default` queue)."""
    spec = flow.spec
    if spec is None:
        return []
    return _object_name(spec.queue, "spec.queue") + _object_name(
        spec.priority_class_name, "spec.priorityClassName"
    )


def _template_name(template: str | None, path: str) -> list[FieldError]:
    """An entry's `template` names a JobTemplate: an object name (a DNS-1123 subdomain)."""
    return _object_name(template, path)


def _object_name(value: str | None, path: str) -> list[FieldError]:
    """`value`, when given, must be an object name (a DNS-1123 subdomain), not empty."""
    if value is None:
        return []
    if not value:
        message = f'Invalid value: "": {path} in body should be at least 1 chars long'
        return [FieldError(message, path)]
    return [
        FieldError(f"Invalid value: {printable.quoted(value)}: {problem}", path)
        for problem in names.dns1123_subdomain_errors(value)
    ]


def _port(port: int | None, path: str) -> list[FieldError]:
    if port is None:
        return []
    if port < 0:
        return [
            FieldError(
                f"Invalid value: {port}: {path} in body should be greater than or equal to 0", path
            )
        ]
    if port > 65535:
        return [
            FieldError(
                f"Invalid value: {port}: {path} in body should be less than or equal to 65535", path
            )
        ]
    return []


def _max_len(value: str | None, limit: int, path: str) -> list[FieldError]:
    if value is not None and len(value) > limit:
        return [FieldError(f"Too long: {path} may not be longer than {limit}", path)]
    return []


def _unique_names(flows: Sequence[Flow]) -> list[FieldError]:
    """compatibility row 1: Volcano lets the last duplicate win; vcflow rejects duplicates."""
    errors = []
    seen: set[str] = set()
    for i, entry in enumerate(flows):
        if entry.name in seen:
            errors.append(
                FieldError(
                    f'jobflow Flow names must be unique: "{entry.name}"', f"spec.flows[{i}].name"
                )
            )
        seen.add(entry.name)
    return errors


def _dag(flows: Sequence[Flow]) -> list[FieldError]:
    """compatibility row 2: unknown targets, then cycles, named by path; O(V+E)."""
    graph = dag.Graph.build((f.name, f.targets) for f in flows)
    index = {f.name: i for i, f in reversed(list(enumerate(flows)))}
    errors = []
    for count, (node, j, target) in enumerate(dag.unknown_targets(graph)):
        # difflib is O(entries) per target: hints for the first few typos only
        close = difflib.get_close_matches(target, graph.nodes, n=1) if count < HINTS else []
        errors.append(
            FieldError(
                f"{NOT_DAG}: vertex is not defined: {target}",
                f"spec.flows[{index[node]}].dependsOn.targets[{j}]",
                hint=f'did you mean "{close[0]}"?' if close else "",
            )
        )
    cycle = dag.find_cycle(graph)
    if cycle is not None:
        errors.append(
            FieldError(
                f"{NOT_DAG}: cycle {dag.format_cycle(cycle)}",
                f"spec.flows[{index[cycle[0]]}].dependsOn.targets",
            )
        )
    return errors


def _probes(flows: Sequence[Flow]) -> list[FieldError]:
    """compatibility row 4: a probe says when a target is ready, so it needs targets."""
    errors = []
    for i, entry in enumerate(flows):
        dep = entry.depends_on
        if dep is not None and dep.probe is not None and not dep.probe.is_empty():
            if not dep.targets:
                errors.append(
                    FieldError(
                        "probe requires targets: a probe checks the target jobs, so list them in "
                        "dependsOn.targets",
                        f"spec.flows[{i}].dependsOn.probe",
                    )
                )
    return errors


def _generated_names(flow: JobFlow) -> list[FieldError]:
    """compatibility row 13: the names and label values the flow will create must be valid."""
    errors: list[FieldError] = []
    ns, name = flow.namespace, flow.name
    if not name:
        return errors
    values = fanout.declared_values(flow)
    errors += _created_by_errors(
        names.created_by_value(ns, name),
        names.LABEL_CREATED_BY_FLOW,
        f'the vcjobs of JobFlow "{name}"',
        "metadata.name",
    )
    for i, entry in enumerate(flow.flows):
        if not entry.name:
            continue
        job = names.job_name(name, entry.name)
        largest = _largest_job(flow, entry, values)
        for problem in names.qualified_name_errors(largest):
            said = f'generated vcjob name "{largest}"{_which_item(entry, values)}'
            errors.append(FieldError(f"{said}: {problem}", f"spec.flows[{i}].name"))
        for template, where in _templates_at(entry):
            if template == "":
                continue  # (refused as empty already)
            errors += _created_by_errors(
                names.created_by_value(ns, template),
                names.LABEL_CREATED_BY_TEMPLATE,
                f'vcjob "{job}"',
                f"spec.flows[{i}].{where}",
            )
    return errors


def _created_by_errors(value: str, label: str, of: str, path: str) -> list[FieldError]:
    """Why `value` cannot be the value of label `label` on `of` (a createdBy label)."""
    return [
        FieldError(f'label value "{value}" ({label}) of {of}: {problem}', path)
        for problem in names.label_value_errors(value)
    ]


def _largest_job(flow: JobFlow, entry: Flow, values: dict[str, str | None]) -> str:
    """The longest vcjob name the entry makes: `<flow>-<entry>`, or with `for` its last
    item's `<flow>-<entry>-<index>` (the worst case when the items are known only when it
    runs)."""
    job = names.job_name(flow.name, entry.name)
    index = fanout.largest_index(entry, values)
    return job if index is None else f"{job}-{index}"


def _which_item(entry: Flow, values: dict[str, str | None]) -> str:
    """Whose name `_largest_job` is, said after it ("" for an entry without `for`)."""
    index = fanout.largest_index(entry, values)
    if index is None:
        return ""
    if fanout.known_items(entry, values) is None:
        return f" (of item {index}: fromOutput may give up to {index + 1} items)"
    return f" (of item {index}, for's last)"


def _templates_at(entry: Flow) -> list[tuple[str, str]]:
    """(template name, field under the entry naming it) of every JobTemplate the entry may
    be built from: each `switch` case's (docs/flow-features.md section 13), else its
    `template`, else its name."""
    if entry.switch is not None:
        return [(case.template, f"switch[{j}].template") for j, case in enumerate(entry.switch)]
    return [(entry.template_name, "template" if entry.template is not None else "name")]


def _entries_against_templates(
    flow: JobFlow,
    templates: dict[str, JobTemplate],
    specs: Sequence[JobSpec | None],
    resolve: bool,
) -> list[FieldError]:
    """What each entry would create (`specs`: `collisions.entry_specs`), checked like the
    vcjob it becomes (patch applied), and pods of two entries that would have one name."""
    errors: list[FieldError] = []
    values = fanout.declared_values(flow)
    for i, (entry, spec) in enumerate(zip(flow.flows, specs, strict=True)):
        path = f"spec.flows[{i}]"
        missing = False
        for wanted, where in _templates_at(entry):
            if wanted in templates:
                continue
            missing = True
            if resolve and wanted:
                errors.append(
                    FieldError(
                        f'JobTemplate "{wanted}" not found; the entry will wait '
                        "(TemplateNotFound) until it is created",
                        f"{path}.{where}",
                        warning=True,
                    )
                )
        if missing or spec is None:
            continue
        if entry.patch is not None and entry.patch.job_spec is not None:
            checked = jobtemplate.validate_job_spec(
                spec, path="spec", references=flow.uses_language
            )
            for err in checked:
                errors.append(
                    FieldError(
                        f"after patch: {err.message}",
                        f"{path}.patch.jobSpec{err.path.removeprefix('spec')}",
                        warning=err.warning,
                    )
                )
        if not flow.name:
            continue  # (`metadata.name: Required value` says it: no pod name is made of "")
        job = _largest_job(flow, entry, values)
        for task in spec.tasks or []:
            replicas = max(task.replicas or 0, 1)
            pod = names.pod_name(job, task.name or "", replicas - 1)
            for problem in names.qualified_name_errors(pod)[:1]:
                errors.append(FieldError(f'generated pod name "{pod}": {problem}', f"{path}.name"))
    return errors + collisions.flow_errors(flow, specs)


def validate_delete(flow: JobFlow) -> list[FieldError]:
    """compatibility row 11: an unfinished flow is stopped before it is deleted."""
    phase = flow.phase
    if phase in UNFINISHED:
        return [
            FieldError(
                f'cannot delete JobFlow "{flow.name}" while it is {phase}: stop it first '
                f"(vcflow stop jobflow {flow.name} -n {flow.namespace}), which terminates its "
                "jobs, then delete it",
            )
        ]
    return []


def validate_template_delete(template: JobTemplate, flows: Sequence[JobFlow]) -> list[FieldError]:
    """compatibility row 11: a template still needed by an unfinished flow stays."""
    users = [
        f.name
        for f in flows
        if f.namespace == template.namespace
        and f.phase in UNFINISHED
        and any(template.name in e.templates_named for e in f.flows)
    ]
    if not users:
        return []
    return [
        FieldError(
            f'cannot delete JobTemplate "{template.name}": unfinished JobFlow(s) '
            f"{', '.join(sorted(users))} use it; stop or delete them first",
        )
    ]
