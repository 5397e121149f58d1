"""`vcflow logs --attempts`' FINISHED column for each state of an attempt: a kept attempt's
end, the current pod's end once it has ended, `running` while it runs, `-` before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vcflow.cli.logs import ATTEMPT_HEADERS, _attempt_row
from vcflow.runtime.loghistory import Attempt

STARTED = "2026-12-01T10:00:00Z"
ENDED = "2026-12-01T10:00:07Z"


def _record(phase: str, finished: str | None) -> dict[str, Any]:
    return {
        "uid": "u-1",
        "status": {"phase": phase, "startTime": STARTED},
        "finishedAt": finished,
    }


@pytest.mark.parametrize(
    ("phase", "finished", "current", "shown"),
    [
        ("Failed", ENDED, False, ENDED),  # kept
        ("Failed", ENDED, True, ENDED),  # the current pod, ended
        ("Succeeded", ENDED, True, ENDED),
        ("Running", None, True, "running"),
        ("Running", ENDED, True, "running"),  # an init container ended; the pod runs on
        ("Pending", None, True, "-"),
    ],
)
def test_finished_column(
    tmp_path: Path, phase: str, finished: str | None, current: bool, shown: str
) -> None:
    attempt = Attempt(2, tmp_path, _record(phase, finished), current=current)
    row = dict(zip(ATTEMPT_HEADERS, _attempt_row(attempt), strict=True))
    assert row["finished"] == shown
    assert row["phase"] == phase
