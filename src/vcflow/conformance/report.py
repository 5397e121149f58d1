"""Text report of a conformance run: one line per failed or skipped case (every case with
`verbose`), then `N passed, N failed, N skipped`. Pure: returns lines, prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcflow.conformance.results import Failed, Outcome, Passed, Skipped


def case_line(outcome: Outcome) -> str:
    result = outcome.result
    if isinstance(result, Passed):
        return f"PASS {outcome.label}" + (f": {result.detail}" if result.detail else "")
    word = "FAIL" if isinstance(result, Failed) else "SKIP"
    return _one_line(f"{word} {outcome.label}: {result.reason}")


def summary_line(outcomes: Sequence[Outcome]) -> str:
    passed = sum(isinstance(o.result, Passed) for o in outcomes)
    failed = sum(isinstance(o.result, Failed) for o in outcomes)
    skipped = sum(isinstance(o.result, Skipped) for o in outcomes)
    return f"{passed} passed, {failed} failed, {skipped} skipped"


def render(outcomes: Sequence[Outcome], *, verbose: bool = False) -> list[str]:
    lines = [case_line(o) for o in outcomes if verbose or not isinstance(o.result, Passed)]
    return [*lines, summary_line(outcomes)]


def any_failed(outcomes: Sequence[Outcome]) -> bool:
    return any(isinstance(o.result, Failed) for o in outcomes)


def _one_line(text: str) -> str:
    return " ".join(text.split())
