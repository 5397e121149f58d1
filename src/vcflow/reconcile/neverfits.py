"""`admission: Hold` (docs/scheduling.md): can every entry of a flow ever run? Each entry's
minimum resources (`gang.min_resources` of the vcjob it would build; a `switch` entry's of
each case's template, a `for` entry's of one item) against its queue — the vcjob's `queue`:
the entry's patch, else the flow's, else the template's; `default` implicit, Open and
uncapped — and, locally, against the machine. The first entry (in flow order) that can never
fit says why, in one line: `entry p2 needs cpu 4; queue team-a capability cpu 2`, `entry p2
needs cpu 4; this machine has cpu 2`, `queue team-a is Closed`.

A queue that is not known is no reason to hold (on a cluster Volcano's webhook refuses the
vcjob: CreateFailed; locally any name is taken). The flow controller holds a flow with it
(`FlowIndex.hold`), `vcflow validate` warns with it for any flow. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction

from vcflow.api import quantity, scheduling
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.queues import QueueTable
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile.vcjob import gang, resources
from vcflow.reconcile.vcjob.resources import UNLIMITED, Capacity


def why_held(
    flow: JobFlow,
    templates: Mapping[str, JobTemplate],
    queues: QueueTable,
    machine: Capacity = UNLIMITED,
) -> str:
    """Why some entry of `flow` can never run (one line), or "" when each may. An entry
    whose template is missing is left out (it waits with TemplateNotFound)."""
    found = misfit(flow, templates, queues, machine)
    return found[1] if found is not None else ""


def misfit(
    flow: JobFlow,
    templates: Mapping[str, JobTemplate],
    queues: QueueTable,
    machine: Capacity = UNLIMITED,
) -> tuple[int, str] | None:
    """The first entry that can never run, (its index in `spec.flows`, why), or None."""
    for at, entry in enumerate(flow.flows):
        for job in _jobs_of(flow, entry, templates):
            problem = job_problem(entry.name, job, queues, machine)
            if problem:
                return at, problem
    return None


def job_problem(entry: str, job: VCJob, queues: QueueTable, machine: Capacity) -> str:
    """Why the vcjob `job` of `entry` can never be admitted, or ""."""
    name = (job.spec.queue if job.spec is not None else None) or scheduling.DEFAULT_QUEUE
    queue = queues.get(name)
    need = gang.min_resources(job)
    if queue is not None:
        if queue.state != scheduling.OPEN:
            return f"queue {name} is {queue.state}"
        short = _over_capability(need, queue.spec.capability if queue.spec else None)
        if short:
            return f"entry {entry} needs {_wants(short)}; queue {name} capability {_has(short)}"
    short = resources.shortfall(need, machine)
    if short:
        return f"entry {entry} needs {_wants(short)}; this machine has {_has(short)}"
    return ""


def _jobs_of(flow: JobFlow, entry: Flow, templates: Mapping[str, JobTemplate]) -> Iterator[VCJob]:
    """The vcjobs the entry may build (one per `switch` case), each as its first attempt
    would be built, before any substitution."""
    wanted = [case.template for case in entry.switch] if entry.switch else [entry.template_name]
    for name in wanted:
        template = templates.get(name) if name else None
        if template is not None and template.spec is not None:
            yield jobbuild.build_job(flow, entry, template, env=None)


Short = list[tuple[str, Fraction, Fraction]]


def _over_capability(
    need: Mapping[str, Fraction], capability: Mapping[str, object] | None
) -> Short:
    """(resource, needed, cap) for each resource the capability lists and `need` exceeds; a
    resource it does not list is not capped (Volcano: the cluster's total)."""
    out: Short = []
    for name in sorted(need):
        if capability is None or name not in capability:
            continue
        raw = capability[name]
        cap = quantity.parse(raw) if isinstance(raw, (str, int, float)) else None
        if cap is not None and need[name] > cap:
            out.append((name, need[name], cap))
    return out


def _wants(short: Short) -> str:
    return ", ".join(f"{n} {resources.show(n, need)}" for n, need, _ in short)


def _has(short: Short) -> str:
    return ", ".join(
        f"{n} {resources.show(n, have)}" if have else f"no {n}" for n, _, have in short
    )
