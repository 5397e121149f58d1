"""`Cursor`: where a watcher stands in a Feed — one counter for an embedded store, a
position per kind behind it for KubeStore — and the one resume rule of a counter."""

from __future__ import annotations

import dataclasses

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.store import Cursor, EventType, MemoryStore, WatchEvent


def _event(model: type[VCJob] | type[JobFlow], rv: int) -> WatchEvent:
    return WatchEvent(EventType.ADDED, model, "default", f"o{rv}", rv, "{}")


def test_a_new_cursor_is_at_its_resource_version_for_every_kind() -> None:
    assert Cursor() == Cursor(0)
    assert Cursor(7).position(VCJob) == Cursor(7).position(JobFlow) == 7
    store = MemoryStore()
    assert Cursor.now(store) == Cursor(store.resource_version())


def test_it_is_immutable_and_hashable() -> None:
    cursor = Cursor.per_kind(9, {JobFlow: 4})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cursor.rv = 10  # type: ignore[misc]
    assert hash(cursor) == hash(Cursor.per_kind(9, {JobFlow: 4}))


def test_per_kind_keeps_only_the_kinds_behind() -> None:
    cursor = Cursor.per_kind(9, {JobFlow: 4, VCJob: 9, JobTemplate: 2})
    assert cursor.position(JobFlow) == 4 and cursor.position(JobTemplate) == 2
    assert cursor.position(VCJob) == 9
    assert cursor == Cursor.per_kind(9, {JobTemplate: 2, JobFlow: 4})  # (in any order)
    assert Cursor.per_kind(9, {VCJob: 9}) == Cursor(9)
    assert repr(cursor).startswith("Cursor(9, ")


def test_past_is_the_counters_resume_rule() -> None:
    start = Cursor(3)
    assert start.past([]) is start
    assert start.past([], 8) == Cursor(8)  # nothing of these kinds: past the others'
    assert start.past([_event(VCJob, 5)], 4) == Cursor(5)  # (a write after the look)
    assert start.past([_event(VCJob, 5), _event(JobFlow, 6)], 9) == Cursor(9)
    assert start.past([_event(VCJob, 5)]) == Cursor(5)  # a full page: up to its last


def test_past_moves_the_kinds_behind_too() -> None:
    behind = Cursor.per_kind(9, {JobFlow: 4, VCJob: 2})
    assert behind.past([], 9) == Cursor(9)  # every kind read up to 9
    partly = behind.past([_event(VCJob, 3)], 3)
    assert partly.rv == 9 and partly.position(JobFlow) == 4 and partly.position(VCJob) == 3


def test_own_skips_a_write_that_directly_follows() -> None:
    assert Cursor(4).own(5) == Cursor(5)
    assert Cursor(4).own(7) == Cursor(4)  # another write came between: read it
    behind = Cursor.per_kind(4, {JobFlow: 2})
    assert behind.own(5) == Cursor.per_kind(5, {JobFlow: 2})
