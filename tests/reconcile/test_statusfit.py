"""`statusfit.fit`: a status that fits is written as rendered (Volcano's layout, the very
object); one that does not becomes the compact form, whose plain fields show the entries
users act on — failed or retrying first, then unfinished, then waiting — within the room
left by the rest of the object, and never a finished one."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api import bounds, compactstatus
from vcflow.reconcile import statusfit

LISTS = {"Completed": "completedJobs", "Running": "runningJobs", "Failed": "failedJobs"}


def status(n: int, *, phases: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """n entries, all Completed but those given (index → condition)."""
    phases = phases or {}
    items, conditions = [], {}
    lists: dict[str, list[str]] = {}
    for i in range(n):
        job = f"f-e{i:05d}"
        cond = phases.get(i, {"phase": "Completed", "createTime": "2026-12-01T10:00:00Z"})
        conditions[job] = cond
        if cond["phase"] not in ("Waiting", "Skipped"):
            stamp = f"2026-12-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z"
            items.append(
                {"name": job, "state": cond["phase"], "restartCount": 0, "startTimestamp": stamp}
            )
            key = LISTS.get(cond["phase"], "unKnowJobs")
            lists.setdefault(key, []).append(job)
    order = ("runningJobs", "failedJobs", "completedJobs", "unKnowJobs")
    data: dict[str, Any] = {k: lists[k] for k in order if k in lists}
    data.update(jobStatusList=items, conditions=conditions, state={"phase": "Running"})
    return data


def test_a_status_that_fits_is_written_as_rendered() -> None:
    data = status(50)
    assert statusfit.fit(data, rest=10_000) is data


def test_past_the_status_budget_the_compact_form_holds_every_record() -> None:
    data = status(3_000)
    assert bounds.object_size(data) > statusfit.STATUS_BUDGET
    out = statusfit.fit(data, rest=10_000)
    assert set(out) == {"state", "compactJobStatus"}  # every entry finished: none shown
    assert compactstatus.expand(out) == data
    assert bounds.object_size(out) < bounds.object_size(data) // 10


def test_a_big_spec_leaves_less_room_and_the_status_compacts_sooner() -> None:
    data = status(400)
    size = bounds.object_size(data)
    assert size < statusfit.STATUS_BUDGET
    assert statusfit.fit(data, rest=statusfit.OBJECT_BUDGET - size) is data
    out = statusfit.fit(data, rest=statusfit.OBJECT_BUDGET - size + 1)
    assert "compactJobStatus" in out


def test_failed_and_retrying_come_first_then_unfinished_then_waiting() -> None:
    waiting = {"phase": "Waiting", "reason": "Dependencies", "message": "waiting for all of: x"}
    backoff = {"phase": "Waiting", "reason": "Backoff", "message": "attempt 2 of 3 at ..."}
    phases = {i: {"phase": "Running"} for i in range(100, 600)}
    phases.update({i: dict(waiting) for i in range(600, 900)})
    phases[950] = {"phase": "Failed"}
    phases[960] = backoff
    phases[970] = {"phase": ""}
    data = status(3_000, phases=phases)
    rich = statusfit.compact(data, room=10**9)
    shown = rich["conditions"]
    assert len(shown) == 500 + 300 + 3
    assert all(c["phase"] != "Completed" for c in shown.values())
    assert list(shown) == [j for j in data["conditions"] if j in shown]  # in flow order
    # little room: the failed and retrying ones, then as many running ones as fit
    base = bounds.object_size(statusfit.compact(data, room=0))
    tight = statusfit.compact(data, room=base + 2_000)
    jobs = list(tight["conditions"])
    assert {"f-e00950", "f-e00960"} <= set(jobs)
    assert all(tight["conditions"][j]["phase"] != "Waiting" or j == "f-e00960" for j in jobs)
    assert 2 < len(jobs) < 40
    assert bounds.object_size(tight) <= base + 2_000
    assert tight["failedJobs"] == ["f-e00950"]
    assert "completedJobs" not in tight
    assert [i["name"] for i in tight["jobStatusList"]] == [j for j in jobs if j != "f-e00960"]
    assert compactstatus.expand(tight) == data


def test_no_more_than_active_max_entries_are_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(statusfit, "ACTIVE_MAX", 7)
    data = status(2_000, phases={i: {"phase": "Running"} for i in range(100)})
    out = statusfit.compact(data, room=10**9)
    assert list(out["conditions"]) == [f"f-e{i:05d}" for i in range(7)]
    assert out["runningJobs"] == list(out["conditions"])


@pytest.mark.parametrize(
    ("condition", "rank"),
    [
        ({"phase": "Failed"}, 0),
        ({"phase": "Terminating"}, 0),
        ({"phase": "SyncFailed"}, 0),
        ({"phase": "Waiting", "reason": "TemplateNotFound"}, 0),
        ({"phase": "Waiting", "reason": "Backoff"}, 0),
        ({"phase": "Running"}, 1),
        ({"phase": "Pending"}, 1),
        ({"phase": "Restarting"}, 1),
        ({"phase": ""}, 1),
        ({"phase": "Waiting", "reason": "Dependencies"}, 2),
        ({"phase": "Completed"}, None),
        ({"phase": "Skipped", "reason": "TargetFailed"}, None),
    ],
)
def test_rank(condition: dict[str, Any], rank: int | None) -> None:
    assert statusfit.rank(condition, None) == rank
