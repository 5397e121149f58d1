"""What `vcflow run` shows: each flow's jobs, their phases and how long they took.

`Tracker` is the runtime's observer (every vcjob change, deletions included, so a flow
with `jobRetainPolicy: delete` still has its jobs listed at the end); flows are read from
the store. `render()` is the live view (rich); `changes` are the plain lines printed
instead when the view is off; `final_rows()` the closing table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rich.console import Group
from rich.text import Text

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.phases import FINISHED_JOB_PHASES, FlowPhase, JobPhase
from vcflow.api.vcjob import VCJob

MAX_LINES = 20  # job lines per flow in the live view
ENDED = frozenset({*FINISHED_JOB_PHASES, JobPhase.ABORTED})
FLOW_ENDED = frozenset({FlowPhase.SUCCEED, FlowPhase.FAILED})
_STYLE = {
    "Completed": "green",
    "Succeed": "green",
    "Running": "cyan",
    "Failed": "red",
    "Aborted": "red",
    "Terminated": "red",
    "Pending": "yellow",
}


@dataclass
class JobRow:
    flow: names.ObjectKey
    entry: str
    phase: str
    started: float  # wall-clock seconds
    finished: float | None = None
    deleted: bool = False

    def elapsed(self, now: float) -> float:
        return max(0.0, (self.finished if self.finished is not None else now) - self.started)


@dataclass
class FlowRow:
    name: str
    phase: str = ""
    started: float = 0.0
    finished: float | None = None
    jobs: dict[str, JobRow] = field(default_factory=dict)  # by vcjob name

    def elapsed(self, now: float) -> float:
        return max(0.0, (self.finished if self.finished is not None else now) - self.started)


def _stamp(text: str | None, default: float) -> float:
    if not text:
        return default
    try:
        return clocks.parse_rfc3339(text).timestamp()
    except ValueError:
        return default


class Tracker:
    def __init__(
        self,
        flows: Mapping[names.ObjectKey, float | None],
        *,
        echo: Callable[[str], None] | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.now = now
        self.begun = now()
        self.flows = {
            key: FlowRow(key.rsplit("/", 1)[-1], started=self.begun if since is None else since)
            for key, since in flows.items()
        }
        self.echo = echo
        self.resyncing = False  # jobs seen now existed before this run

    def observe(self, job: VCJob, deleted: bool) -> None:
        ref = job.metadata.controller_ref()
        if ref is None or ref.kind != "JobFlow":
            return
        flow = self.flows.get(names.object_key(job.namespace, ref.name))
        if flow is None:
            return
        now = self.now()
        row = flow.jobs.get(job.name)
        phase = job.phase or JobPhase.PENDING
        if row is None:
            prefix = f"{flow.name}-"
            entry = job.name[len(prefix) :] if job.name.startswith(prefix) else job.name
            started = _stamp(job.metadata.creation_timestamp, now) if self.resyncing else now
            row = JobRow(names.object_key(job.namespace, ref.name), entry, "", started)
            flow.jobs[job.name] = row
        if deleted:
            row.deleted = True
            return
        if phase != row.phase:
            row.phase = phase
            if phase in ENDED and row.finished is None:
                state = job.status.state if job.status else None
                when = state.last_transition_time if state else None
                row.finished = _stamp(when, now) if self.resyncing else now
            elif phase not in ENDED:
                row.finished = None
            self._say(f"{flow.name}/{row.entry}", phase, now)

    def update_flows(self, phases: Mapping[names.ObjectKey, str]) -> None:
        """Take in each flow's phase (by key; `FlowWatch.current`)."""
        now = self.now()
        for key, seen in phases.items():
            row = self.flows.get(key)
            if row is None:
                continue
            phase = seen or FlowPhase.PENDING
            if phase != row.phase:
                row.phase = phase
                if phase in FLOW_ENDED:
                    row.finished = now
                self._say(f"jobflow {row.name}", phase, now)

    def _say(self, what: str, phase: str, now: float) -> None:
        if self.echo is not None:
            self.echo(f"{now - self.begun:7.1f}s  {what} {phase}")

    def all_succeeded(self) -> bool:
        return all(f.phase == FlowPhase.SUCCEED for f in self.flows.values())

    # -- rendering --------------------------------------------------------------------

    def render(self) -> Group:
        now = self.now()
        lines: list[Text] = []
        for row in self.flows.values():
            counts: dict[str, int] = {}
            for job in row.jobs.values():
                counts[job.phase] = counts.get(job.phase, 0) + 1
            summary = ", ".join(f"{n} {p}" for p, n in sorted(counts.items())) or "no jobs yet"
            head = Text.assemble(
                ("jobflow ", "bold"),
                (row.name, "bold"),
                "  ",
                _phase(row.phase or "Pending"),
                f"  {summary}  {row.elapsed(now):.1f}s",
            )
            lines.append(head)
            shown = list(row.jobs.values())
            if len(shown) > MAX_LINES:  # the unfinished ones first, then the latest
                shown = sorted(shown, key=lambda j: (j.phase in ENDED, -j.started))[:MAX_LINES]
            width = max((len(j.entry) for j in shown), default=0)
            for job in shown:
                lines.append(
                    Text.assemble(
                        f"  {job.entry.ljust(width)}  ",
                        _phase(job.phase.ljust(10)),
                        f" {job.elapsed(now):6.1f}s",
                    )
                )
            if len(row.jobs) > len(shown):
                lines.append(Text(f"  … and {len(row.jobs) - len(shown)} more", style="dim"))
        return Group(*lines)

    def final_rows(self) -> list[list[str]]:
        now = self.now()
        return [
            [flow.name, job.entry, job.phase, f"{job.elapsed(now):.1f}s"]
            for flow in self.flows.values()
            for job in flow.jobs.values()
        ]

    def summaries(self) -> list[str]:
        now = self.now()
        return [
            f"flow {f.name} {f.phase or 'Pending'} in {f.elapsed(now):.1f}s"
            for f in self.flows.values()
        ]


def _phase(text: str) -> Text:
    return Text(text, style=_STYLE.get(text.strip(), ""))
