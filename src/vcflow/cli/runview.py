"""What `vcflow run` shows: the live view of a run's `Progress` (rich), the lines printed
instead when there is no terminal, and the closing report of its `RunResult` — a table of
every job in flow order, why each failed job failed and the last lines of its log.

The live view fits the terminal: when the jobs do not fit, running and failed jobs come
first, then those that wait (with why), then the completed ones, and a line counts the rest.
The flow features show in both (docs/flow-features.md §6): a retry that waits as `Backoff`
with its next attempt's time, an attempt after the first with its number, a Skipped entry
with why, a running job's or flow's deadline.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TextIO

from rich.console import Group
from rich.text import Text

from vcflow.api.phases import JobPhase
from vcflow.api.printable import escaped
from vcflow.cli import output
from vcflow.local.progress import NOT_CREATED, FlowProgress, JobProgress, Progress
from vcflow.local.result import JobResult, RunResult

_STYLE = {
    "Completed": "green",
    "Succeed": "green",
    "Running": "cyan",
    "Failed": "red",
    "Aborted": "red",
    "Terminated": "red",
    "Deleted": "red",
    "Pending": "yellow",
    "Waiting": "dim",
    "Backoff": "yellow",
    "Skipped": "dim",
}
TAB = "\t"
WAITING = "Waiting"  # shown for a flow entry whose vcjob does not exist yet
#: the order jobs are shown in when they do not all fit: running, failed, waiting, done
_RANK = {
    JobPhase.RUNNING: 0,
    JobPhase.RESTARTING: 0,
    JobPhase.COMPLETING: 0,
    JobPhase.TERMINATING: 0,
    JobPhase.ABORTING: 0,
    JobPhase.FAILED: 1,
    JobPhase.TERMINATED: 1,
    JobPhase.ABORTED: 1,
    JobPhase.PENDING: 2,
    "Backoff": 2,
    NOT_CREATED: 3,
    "Skipped": 4,
    JobPhase.COMPLETED: 4,
}


def phase_text(job: JobProgress | JobResult) -> str:
    if isinstance(job, JobProgress):
        return job.shown_phase or WAITING
    return job.phase or WAITING


def _duration(seconds: float | None, coarse: bool = False) -> str:
    """A time to its resolution: tenths of a second as measured (`<0.1s` below that), whole
    seconds when it comes from stored timestamps, which are to the second (`<1s`)."""
    if seconds is None:
        return ""
    if coarse:
        return "<1s" if seconds < 1 else f"{seconds:.0f}s"
    return "<0.1s" if seconds < 0.05 else f"{seconds:.1f}s"


class LiveView:
    """The live view: one block per flow (its phase, counts, time) and its jobs."""

    def __init__(self, progress: Progress, height: Callable[[], int]) -> None:
        self.progress = progress
        self.height = height
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def render(self) -> Group:
        now = self.progress.now()
        flows = list(self.progress.flows.values())
        alone = list(self.progress.jobs.values())
        budget = max(3, self.height() - 2 - len(flows) - min(len(self.notes), 3))
        lines: list[Text] = []
        shown_budget = _share(
            budget, [len(f.jobs) for f in flows] + ([len(alone)] if alone else [])
        )
        for flow, room in zip(flows, shown_budget, strict=False):
            lines.append(_flow_line(flow, self.progress.flow_span(flow), now))
            lines += _job_lines(flow.in_order(), room, now)
        if alone:
            lines.append(Text("vcjobs", style="bold"))
            lines += _job_lines(alone, shown_budget[-1], now)
        lines += [Text(escaped(note), style="bold") for note in self.notes[-3:]]
        return Group(*lines)


def _share(budget: int, sizes: list[int]) -> list[int]:
    """Lines for each block's jobs: all of them when they fit, else a fair share each."""
    if sum(sizes) <= budget or not sizes:
        return sizes
    each = max(2, math.floor(budget / len(sizes)))
    return [min(size, each) for size in sizes]


def _flow_line(flow: FlowProgress, span: float, now: float) -> Text:
    counts: dict[str, int] = {}
    for job in flow.jobs.values():
        counts[phase_text(job)] = counts.get(phase_text(job), 0) + 1
    summary = ", ".join(f"{n} {p}" for p, n in sorted(counts.items())) or "no jobs"
    deadline = ""
    if flow.deadline is not None and not flow.ended:
        deadline = f"  deadline in {_left(flow.deadline - now)}"
    return Text.assemble(
        ("jobflow ", "bold"),
        (flow.name, "bold"),
        "  ",
        _phase(flow.phase or "Pending"),
        f"  {summary}  {span:.1f}s",
        (deadline, "dim"),
    )


def _left(seconds: float) -> str:
    """A time to go, as a person reads it: `12s`, `4m10s`, `passed`."""
    if seconds <= 0:
        return "0s"
    whole = math.ceil(seconds)
    return f"{whole // 60}m{whole % 60}s" if whole >= 60 else f"{whole}s"


def _job_lines(jobs: list[JobProgress], room: int, now: float) -> list[Text]:
    shown = jobs
    if len(jobs) > room:  # running, failed, pending, waiting, done; flow order within each
        shown = sorted(jobs, key=lambda j: _RANK.get(j.phase, 0))[: max(1, room - 1)]
    width = max((len(j.entry) for j in shown), default=0)
    out = []
    for job in shown:
        why = _why(job, now)
        out.append(
            Text.assemble(
                f"  {job.entry.ljust(width)}  ",
                _phase(phase_text(job).ljust(10)),
                f" {_duration(job.elapsed(now), job.coarse):>7}",
                (f"  {why}" if why else "", "dim"),
            )
        )
    if len(jobs) > len(shown):
        rest = [j for j in jobs if j not in shown]
        done = sum(1 for j in rest if j.phase == JobPhase.COMPLETED)
        out.append(Text(f"  … and {len(rest)} more ({done} completed)", style="dim"))
    return out


def _why(job: JobProgress, now: float) -> str:
    return escaped(_why_raw(job, now))


def _why_raw(job: JobProgress, now: float) -> str:
    if job.skipped:
        return job.skipped
    if job.backoff:
        due = f" (in {_left(job.next_attempt - now)})" if job.next_attempt is not None else ""
        return job.backoff + due
    if job.phase == NOT_CREATED:
        return job.waiting
    parts = [f"attempt {job.attempt}"] if job.attempt > 1 else []
    if job.failure:
        parts.append(job.failure)
    elif job.reason and (not job.ended or job.suspended):
        parts.append(f"{job.reason}: {job.message}" if job.message else job.reason)
    if job.deadline and job.active and job.started is not None:
        parts.append(f"deadline in {_left(job.started + job.deadline - now)}")
    return "; ".join(parts)


def _phase(text: str) -> Text:
    return Text(text, style=_STYLE.get(text.strip(), ""))


# -- the lines printed without a live view --------------------------------------------------


def change_line(what: str, phase: str, seconds: float) -> str:
    return f"{seconds:7.1f}s  {what} {phase}"


# -- the closing report -----------------------------------------------------------------------

HEADERS = ["flow", "job", "phase", "duration", "reason"]


#: a `for` entry with more items than this lists only those that did not complete
ITEMS_LISTED = 16


def final_rows(result: RunResult) -> list[list[str]]:
    """One row per job, in flow order (a flow's entries not created show Waiting); a `for`
    entry's items after it, only the ones that did not complete when it has many (its row
    counts them all)."""
    rows = []
    jobs = result.all_jobs()
    many = _crowded(jobs)
    for job in jobs:
        if job.item_of and (job.flow, job.item_of) in many and job.succeeded:
            continue
        phase = phase_text(job)
        if job.attempts > 1:
            phase += f" ({job.attempts} attempts)"
        rows.append([job.flow or "-", job.entry, phase, _job_duration(job), _reason(job)])
    return rows


def _crowded(jobs: list[JobResult]) -> set[tuple[str, str]]:
    counts: dict[tuple[str, str], int] = {}
    for job in jobs:
        if job.item_of:
            key = (job.flow, job.item_of)
            counts[key] = counts.get(key, 0) + 1
    return {key for key, n in counts.items() if n > ITEMS_LISTED}


def _job_duration(job: JobResult) -> str:
    """The whole entry's time; a retried one's last attempt's too (`12.3s (last 4.0s)`)."""
    whole = _duration(job.duration, job.coarse)
    if job.attempts > 1 and job.last_attempt is not None and job.last_attempt != job.duration:
        return f"{whole} (last {_duration(job.last_attempt, job.coarse)})"
    return whole


def _reason(job: JobResult) -> str:
    return escaped(_reason_raw(job))


def _reason_raw(job: JobResult) -> str:
    if job.skipped:
        return job.skipped
    if job.backoff:
        return f"Backoff: {job.backoff}"
    if job.verdict:
        return f"{job.verdict}; {job.failure}" if job.failure is not None else job.verdict
    if job.failure is not None:
        return str(job.failure)
    if job.ended_by:
        return job.ended_by
    if job.phase == NOT_CREATED:
        return f"not started: {job.waiting}" if job.waiting else "not started"
    if job.reason:
        return f"{job.reason}: {job.message}" if job.message else job.reason
    return ""


def report(result: RunResult, out: TextIO) -> None:
    """The table, each failed container's last log lines, each flow's outcome."""
    rows = final_rows(result)
    if not any(row[-1] for row in rows):
        output.table(HEADERS[:-1], [row[:-1] for row in rows], out)
    else:
        output.table(HEADERS, rows, out)
    for job in result.all_jobs():
        failure = job.failure
        if failure is None or not failure.log_tail:
            continue
        where = f"{job.flow}/{job.entry}" if job.flow else job.job
        namespace = "" if job.namespace == "default" else f" -n {job.namespace}"
        attempt = f" --attempt {failure.attempt}" if failure.attempt is not None else ""
        out.write(
            f"\n{where}: the last lines of its log "
            f"(vcflow logs {failure.pod} -c {failure.container}{attempt}{namespace}):\n"
        )
        out.write("".join(f"  {escaped(line, keep=TAB)}\n" for line in failure.log_tail))
    out.write("\n" if any(j.failure and j.failure.log_tail for j in result.all_jobs()) else "")
    for flow in result.flows:
        before = " (it had ended before this run)" if flow.ended_before else ""
        why = f": {flow.reason}" if flow.reason else ""
        took = _duration(flow.duration, flow.ended_before or flow.coarse)
        out.write(f"flow {flow.name} {flow.phase} in {took}{before}{why}\n")
    for job in result.jobs:
        out.write(f"vcjob {job.job} {phase_text(job)} in {_job_duration(job) or '0s'}\n")
