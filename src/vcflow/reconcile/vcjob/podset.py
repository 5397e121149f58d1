"""One job's pods as the vcjob runtime reads them: a read-only mapping by name that keeps, as
pods are put and removed, the counts the lifecycle (`lifecycle`), the event sources
(`events`) and the gang scheduler (`gang`) ask for — so that handling a request costs the
pods it changes, not every pod of the job. The runtime shell keeps one per job
(`runtime.podcache`); any other mapping or list of pods is indexed once by `of`. Pure.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from vcflow.api.phases import PodPhase
from vcflow.api.pod import Pod
from vcflow.reconcile.vcjob import kubelet, pods

RETAINED = frozenset({PodPhase.SUCCEEDED, PodPhase.FAILED})  # kept by a soft KillJob
_ALIVE = frozenset(kubelet.ALIVE)
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class _Entry:
    """What the counts read of one pod, taken once as it is put."""

    pod: Pod
    seq: int  # insertion order: the mapping's order
    task: str  # its task-spec label
    phase: str
    deleting: bool
    out_of_sync: bool
    placed: bool
    restarts: int
    up: bool  # Succeeded, or Running with every container Ready (`dependsOn`)


def _entry(pod: Pod, seq: int) -> _Entry:
    phase = pod.phase
    return _Entry(
        pod,
        seq,
        pods.task_of(pod),
        phase,
        pod.deleting,
        pods.is_out_of_sync(pod),
        pod.placed,
        kubelet.restart_count(pod) if phase in _ALIVE else 0,
        phase == PodPhase.SUCCEEDED or kubelet.is_ready(pod),
    )


class PodSet(Mapping[str, Pod]):
    """The pods by name, in the order they were first put (a removed pod put again goes
    last, as in a dict). Counts by the pods' task-spec label; `layout` adds the counts by
    the names the job's tasks generate."""

    def __init__(self, given: Iterable[Pod] = ()) -> None:
        self._entries: dict[str, _Entry] = {}
        self._seq = 0
        self._live: dict[tuple[str, str], int] = {}  # (task, phase) of non-deleting pods
        self.deleting = 0
        self._succeeded: dict[str, int] = {}
        self._restarts: dict[str, int] = {}  # summed over Pending/Running pods
        self._gang: dict[str, int] = {}  # placed, not deleting, not Failed
        self._unplaced: dict[str, None] = {}  # Pending, not placed, not deleting
        self._killable: dict[str, None] = {}  # not deleting, not Succeeded/Failed
        self._layout: Layout | None = None
        for pod in given:
            self.put(pod)

    # -- the mapping ----------------------------------------------------------------------

    def __getitem__(self, name: str) -> Pod:
        return self._entries[name].pod

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    # -- changes --------------------------------------------------------------------------

    def put(self, pod: Pod) -> Pod | None:
        """Add `pod`, or replace the pod of its name; the pod it replaced."""
        old = self._entries.get(pod.name)
        if old is not None:
            self._count(old, -1)
            entry = _entry(pod, old.seq)
        else:
            self._seq += 1
            entry = _entry(pod, self._seq)
        self._entries[pod.name] = entry
        self._count(entry, 1)
        return old.pod if old is not None else None

    def remove(self, name: str) -> Pod | None:
        old = self._entries.pop(name, None)
        if old is None:
            return None
        self._count(old, -1)
        return old.pod

    def _count(self, e: _Entry, sign: int) -> None:
        name = e.pod.name
        if e.deleting:
            self.deleting += sign
        else:
            _add(self._live, (e.task, e.phase), sign)
            _member(self._killable, name, sign, e.phase not in RETAINED)
            _member(self._unplaced, name, sign, not e.placed and e.phase == PodPhase.PENDING)
            if e.placed and e.phase != PodPhase.FAILED:
                _add(self._gang, e.task, sign)
        if e.phase == PodPhase.SUCCEEDED:
            _add(self._succeeded, e.task, sign)
        if e.restarts:
            _add(self._restarts, e.task, sign * e.restarts)
        if self._layout is not None:
            self._layout.count(e, sign)

    # -- by the task-spec label -----------------------------------------------------------

    def live_counts(self) -> Iterator[tuple[str, str, int]]:
        """(task, phase, count) of the pods not being deleted."""
        for (task, phase), count in self._live.items():
            yield task, phase, count

    def succeeded(self, task: str) -> int:
        """The task's Succeeded pods (deleting ones too)."""
        return self._succeeded.get(task, 0)

    def alive_restarts(self, task: str) -> int:
        """In-place restarts summed over the task's Pending and Running pods."""
        return self._restarts.get(task, 0)

    def gang(self, task: str | None = None) -> int:
        """Placed pods that are neither deleting nor Failed (the task's, or all)."""
        return sum(self._gang.values()) if task is None else self._gang.get(task, 0)

    def gang_tasks(self) -> Mapping[str, int]:
        return self._gang

    def unplaced(self) -> list[Pod]:
        """Pending pods not placed and not being deleted, in the mapping's order."""
        return [self._entries[n].pod for n in self.ordered(self._unplaced)]

    def unplaced_count(self) -> int:
        return len(self._unplaced)

    def live(self) -> list[Pod]:
        """The pods not being deleted, in the mapping's order."""
        return [e.pod for e in self._entries.values() if not e.deleting]

    def killable(self) -> list[Pod]:
        """The pods not being deleted that have not ended, in the mapping's order."""
        return [self._entries[n].pod for n in self.ordered(self._killable)]

    def ordered(self, names: Iterable[str]) -> list[str]:
        """`names` (of pods held) in the mapping's order."""
        return sorted(names, key=lambda n: self._entries[n].seq)

    # -- by the names the job's tasks generate --------------------------------------------

    def layout(self, job: str, tasks: tuple[tuple[str, int], ...]) -> Layout:
        """The counts by generated name (`<job>-<task>-<index>`, index below the task's
        replicas) for these tasks (name, replicas), kept from then on as pods change; built
        again, over every pod, only when the tasks change. (A memo: what the set holds is
        not changed.)"""
        if self._layout is None or self._layout.key != (job, tasks):
            self._layout = Layout(job, tasks)
            for entry in self._entries.values():
                self._layout.count(entry, 1)
        return self._layout


class Layout:
    """Counts of a PodSet against the pods a job's tasks should have."""

    def __init__(self, job: str, tasks: tuple[tuple[str, int], ...]) -> None:
        self.key = (job, tasks)
        self._prefix = f"{job}-"
        self._replicas = dict(tasks)
        self._phases: dict[str, dict[str, int]] = {t: {} for t in self._replicas}
        self._absent: dict[str, set[int]] = {t: set(range(n)) for t, n in tasks}
        self._up: dict[str, int] = {}
        self._slots: dict[str, tuple[str, int]] = {}
        self.terminating = 0  # expected pods being deleted, and every other pod
        self._stale: dict[str, None] = {}  # expected, not deleting, marked out of sync
        self._strays: dict[str, int] = {}  # not expected, not deleting → seq

    def slot(self, name: str) -> tuple[str, int] | None:
        """(task, index) when `name` is a pod the tasks should have."""
        if not name.startswith(self._prefix):
            return None
        task, _, text = name[len(self._prefix) :].rpartition("-")
        replicas = self._replicas.get(task)
        if replicas is None or not (text.isascii() and text.isdigit()) or str(int(text)) != text:
            return None
        index = int(text)
        return (task, index) if index < replicas else None

    def count(self, e: _Entry, sign: int) -> None:
        name = e.pod.name
        where = self.slot(name)
        if where is None:
            self.terminating += sign
            if not e.deleting:
                if sign > 0:
                    self._strays[name] = e.seq
                else:
                    self._strays.pop(name, None)
            return
        task, index = where
        if sign > 0:
            self._absent[task].discard(index)
            self._slots[name] = where
        else:
            self._absent[task].add(index)
            self._slots.pop(name, None)
        if e.up:
            _add(self._up, task, sign)
        if e.deleting:
            self.terminating += sign
            return
        _add(self._phases[task], e.phase, sign)
        _member(self._stale, name, sign, e.out_of_sync)

    def phases(self, task: str) -> Mapping[str, int]:
        """Phase → count of the task's expected pods not being deleted."""
        return self._phases.get(task, {})

    def absent(self, task: str) -> list[int]:
        """The indices of the task's pods that do not exist, in order."""
        return sorted(self._absent.get(task, ()))

    def missing(self, task: str) -> int:
        return len(self._absent.get(task, ()))

    def up(self, task: str) -> int:
        """The task's expected pods that are Succeeded, or Running with every container
        Ready (deleting ones too)."""
        return self._up.get(task, 0)

    def surplus(self) -> list[str]:
        """The pods to delete: expected ones marked out of sync, in task and index order,
        then the others (scaled down, or of a task no longer in the spec), in the set's
        order — none being deleted already."""
        order = {t: i for i, t in enumerate(self._replicas)}
        stale = sorted(self._stale, key=lambda n: (order[self._slots[n][0]], self._slots[n][1]))
        return stale + sorted(self._strays, key=self._strays.__getitem__)


def of(given: Mapping[str, Pod] | Iterable[Pod]) -> PodSet:
    """`given` as a PodSet: itself if it is one, else indexed once."""
    if isinstance(given, PodSet):
        return given
    if isinstance(given, Mapping):
        return PodSet(given.values())
    return PodSet(given)


def _add(counts: dict[K, int], key: K, delta: int) -> None:
    value = counts.get(key, 0) + delta
    if value:
        counts[key] = value
    else:
        counts.pop(key, None)


def _member(members: dict[str, None], name: str, sign: int, holds: bool) -> None:
    if not holds:
        return
    if sign > 0:
        members[name] = None
    else:
        members.pop(name, None)
