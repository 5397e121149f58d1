"""Events are named as client-go names them, `<object>.<hex of the Unix time in ns>`, so that
their names sort in the order they were recorded: kube-apiserver lists Events by name, and an
Event sent through the events API has no `lastTimestamp`, by which `kubectl describe` sorts
(all equal: it keeps the list's order). With random names, `kubectl describe jf` on a real
cluster listed a flow's Created events in any order (test-b before test-a)."""

from __future__ import annotations

import re
import time
from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import ObjectMeta
from vcflow.store.events import Recorder


class Kept:
    """A store that keeps what is created."""

    def __init__(self) -> None:
        self.created: list[Any] = []

    def create(self, obj: Any, **_: Any) -> Any:
        self.created.append(obj)
        return obj


def test_event_names_sort_in_the_order_they_were_recorded() -> None:
    store = Kept()
    flow = JobFlow(metadata=ObjectMeta(name="test", namespace="default", uid="u-1"))
    recorder = Recorder(store, FakeClock())  # type: ignore[arg-type]
    before = time.time_ns()
    for job in "abcdefghij":
        recorder.record(flow, "Normal", "Created", f"create a job named test-{job}!")
    names = [e.metadata.name for e in store.created]
    assert all(re.fullmatch(r"test\.[0-9a-f]+", n) for n in names), names
    assert sorted(names) == names and len(set(names)) == len(names)
    assert [e.message for e in store.created][:2] == [
        "create a job named test-a!",
        "create a job named test-b!",
    ]
    first = int(names[0].split(".", 1)[1], 16)
    assert before <= first <= time.time_ns()  # the Unix time in ns, as client-go's
