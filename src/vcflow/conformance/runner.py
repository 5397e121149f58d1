"""Run conformance case files: load, apply the skip rules, dispatch to the runner of the case's
kind (`RUNNERS`; controller cases over the store a `world.Serve` gives, if one is), and turn
every problem — unreadable file, malformed case, a crash in the code under test — into a
Failed outcome with a reason, never a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from vcflow.conformance.admission_runner import run_admission
from vcflow.conformance.cases import Case, CaseError, load_case, skip_reason
from vcflow.conformance.controller_runner import run_controller
from vcflow.conformance.results import Failed, Outcome, Result, Skipped
from vcflow.conformance.runtime_runner import run_runtime
from vcflow.conformance.world import Serve

Runner = Callable[[Case], Result]

#: kind → runner. Every kind in `cases.KINDS` has an entry.
RUNNERS: dict[str, Runner] = {
    "admission": run_admission,
    "controller": run_controller,
    "runtime": run_runtime,
}


def run_case(case: Case, *, serve: Serve | None = None) -> Result:
    """The verdict on one loaded case: skipped by its flags, else its kind's runner's;
    `serve`: the store a controller case runs over (None: the memory store itself)."""
    reason = skip_reason(case)
    if reason is not None:
        return Skipped(reason)
    runner = RUNNERS.get(case.kind)
    if serve is not None and case.kind == "controller":
        runner = functools.partial(run_controller, serve=serve)
    if runner is None:
        return Failed(f"no runner for kind {case.kind!r}")
    try:
        return runner(case)
    except CaseError as exc:
        return Failed(f"malformed case: {exc}")
    except Exception as exc:  # the boundary: a crash is reported as this case's failure
        return Failed(f"runner crashed: {type(exc).__name__}: {exc}")


def run_file(path: str, *, serve: Serve | None = None) -> Outcome:
    """Load and run one case file (`serve`: as `run_case`'s)."""
    try:
        case = load_case(path)
    except CaseError as exc:
        return Outcome(path, Failed(f"invalid case file: {exc}"), path)
    return Outcome(case.id, run_case(case, serve=serve), path)


def run_files(paths: Iterable[str]) -> list[Outcome]:
    """Run every file in order; a case id seen before fails the later file."""
    outcomes: list[Outcome] = []
    seen: dict[str, str] = {}
    for path in paths:
        outcome = run_file(path)
        first = seen.setdefault(outcome.label, path)
        if first != path:
            outcome = Outcome(path, Failed(f'duplicate case id "{outcome.label}" (also {first})'))
        outcomes.append(outcome)
    return outcomes
