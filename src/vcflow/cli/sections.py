"""The text `vcflow describe` prints, built as indented sections (kubectl describe's look).

`Text` collects lines: `fields` aligns `Key:  value` pairs of one block, `table` indents an
aligned table, `heading` opens a nested section. The per-kind `Spec:`/`Status:` sections
are here; the command and the shared header and events are in `describe.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vcflow.api import printable
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec, VCJob
from vcflow.cli import output

NONE = "<none>"
INDENT = "  "


class Text:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def fields(self, pairs: Sequence[tuple[str, str | Sequence[str]]], level: int = 0) -> None:
        """`Key:  value` lines, values aligned; a list value continues on the next lines."""
        width = max((len(key) for key, _ in pairs), default=0) + 3
        pad = INDENT * level
        for key, value in pairs:
            values = [value] if isinstance(value, str) else list(value) or [NONE]
            self.lines.append((pad + f"{key}:".ljust(width) + values[0]).rstrip())
            self.lines += [pad + " " * width + more for more in values[1:]]

    def heading(self, key: str, level: int = 0) -> None:
        self.lines.append(INDENT * level + f"{key}:")

    def table(
        self, headers: Sequence[str], rows: Sequence[Sequence[str]], level: int, *, gap: int = 3
    ) -> None:
        self.lines += [INDENT * level + line for line in output.aligned(headers, rows, gap=gap)]

    def render(self) -> str:
        """The text, each line with its control characters escaped (a label, an annotation
        or a message may hold an ESC or OSC sequence: it is shown, not obeyed)."""
        return "\n".join(printable.escaped(line) for line in self.lines) + "\n"


def pairs_of(mapping: Mapping[str, str]) -> list[str]:
    """`key=value` lines of labels or annotations, sorted; `<none>` when empty."""
    return [f"{k}={v}" for k, v in sorted(mapping.items())] or [NONE]


def _or_none(value: object) -> str:
    return NONE if value is None or value == "" else str(value)


def flow_sections(flow: JobFlow, text: Text) -> None:
    text.heading("Spec")
    text.fields([("Job Retain Policy", str(flow.retain_policy))], 1)
    text.heading("Flows", 1)
    rows = [
        [
            entry.name,
            ", ".join(entry.targets) or NONE,
            str(entry.strategy) if entry.targets else "",
            "yes" if entry.patch is not None else "no",
        ]
        for entry in flow.flows
    ]
    text.table(["NAME", "DEPENDS ON", "STRATEGY", "PATCH"], rows, 2)
    _flow_status(flow, text)


def _flow_status(flow: JobFlow, text: Text) -> None:
    text.heading("Status")
    status = flow.status
    text.fields([("Phase", _or_none(flow.phase))], 1)
    if status is None:
        return
    conditions = status.conditions or {}
    if conditions:
        text.heading("Jobs", 1)
        order = [e.name for e in flow.flows]
        names = sorted(conditions, key=lambda job: _entry_rank(flow.name, job, order))
        rows = [
            [
                job,
                _or_none(conditions[job].phase),
                conditions[job].reason or "",
                conditions[job].message or "",
            ]
            for job in names
        ]
        text.table(["JOB", "PHASE", "REASON", "MESSAGE"], rows, 2)
    lists = [
        ("Pending Jobs", status.pending_jobs),
        ("Running Jobs", status.running_jobs),
        ("Completed Jobs", status.completed_jobs),
        ("Failed Jobs", status.failed_jobs),
        ("Terminated Jobs", status.terminated_jobs),
        ("Unknown Jobs", status.un_know_jobs),
    ]
    text.fields([(key, ", ".join(jobs)) for key, jobs in lists if jobs], 1)
    if status.job_status_list:
        text.heading("Job Status List", 1)
        rows = [
            [
                item.name,
                _or_none(item.state),
                _or_none(item.start_timestamp),
                _or_none(item.end_timestamp),
                str(item.restart_count or 0),
            ]
            for item in status.job_status_list
        ]
        text.table(["NAME", "STATE", "STARTED", "ENDED", "RESTARTS"], rows, 2)


def _entry_rank(flow: str, job: str, order: list[str]) -> tuple[int, str]:
    entry = job.removeprefix(f"{flow}-")
    return (order.index(entry) if entry in order else len(order), job)


def job_spec_section(spec: JobSpec | None, text: Text) -> None:
    text.heading("Spec")
    if spec is None:
        return
    text.fields(
        [
            ("Min Available", _or_none(spec.min_available)),
            ("Queue", _or_none(spec.queue)),
            ("Scheduler Name", _or_none(spec.scheduler_name)),
            ("Max Retry", _or_none(spec.max_retry)),
        ],
        1,
    )
    if spec.tasks:
        text.heading("Tasks", 1)
        rows = []
        for task in spec.tasks:
            pod = task.template.spec if task.template else None
            images = [c.image or "" for c in (pod.containers or [])] if pod else []
            rows.append(
                [
                    _or_none(task.name),
                    _or_none(task.replicas),
                    _or_none(task.min_available),
                    ", ".join(images) or NONE,
                ]
            )
        text.table(["NAME", "REPLICAS", "MIN AVAILABLE", "IMAGES"], rows, 2)


def vcjob_sections(job: VCJob, text: Text) -> None:
    job_spec_section(job.spec, text)
    text.heading("Status")
    status = job.status
    if status is None:
        text.fields([("Phase", NONE)], 1)
        return
    state = status.state
    text.fields(
        [
            ("Phase", _or_none(job.phase)),
            ("Reason", _or_none(state.reason if state else None)),
            ("Message", _or_none(state.message if state else None)),
            ("Min Available", _or_none(status.min_available)),
            ("Pending", str(status.pending or 0)),
            ("Running", str(status.running or 0)),
            ("Succeeded", str(status.succeeded or 0)),
            ("Failed", str(status.failed or 0)),
            ("Terminating", str(status.terminating or 0)),
            ("Unknown", str(status.unknown or 0)),
            ("Version", str(status.version or 0)),
            ("Retry Count", str(status.retry_count or 0)),
            ("Running Duration", _or_none(status.running_duration)),
            ("Last Transition", _or_none(state.last_transition_time if state else None)),
        ],
        1,
    )
    counts = status.task_status_count or {}
    if counts:
        text.heading("Task Status Count", 1)
        rows = [
            [task, ", ".join(f"{p}={n}" for p, n in sorted((c.phase or {}).items())) or NONE]
            for task, c in sorted(counts.items())
        ]
        text.table(["TASK", "PODS"], rows, 2)
    if status.conditions:
        text.heading("Conditions", 1)
        rows = [[c.status or "", c.last_transition_time or ""] for c in status.conditions]
        text.table(["STATUS", "LAST TRANSITION"], rows, 2)


def template_sections(template: JobTemplate, text: Text) -> None:
    job_spec_section(template.spec, text)
    text.heading("Status")
    jobs = template.status.job_depends_on_list if template.status else None
    text.fields([("Job Depends On List", ", ".join(jobs or []) or NONE)], 1)
