"""The runtime shell after its watch expired (issue 12, item 8): it lists the store again and
reconciles the processes it runs against it — a pod removed from the store meanwhile has its
processes killed, a pod replaced by another of its name (another uid) has the old run killed
and the new one launched, and every other pod keeps its run, not started again. Real
processes on a SQLite store whose watch log keeps few events, so that the executor's
resourceVersion expires while it does not look."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vcflow.api.event import Event
from vcflow.api.meta import ObjectMeta
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.podserver import podfs, statusfile
from vcflow.runtime.executor import Executor
from vcflow.runtime.pods import PodRunner
from vcflow.store import Expired, SqliteStore

from .conftest import shut_down
from .test_executor import DEADLINE, drive, vcjob

RETENTION = 50  # events the store keeps for resuming a watch


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    db = SqliteStore.in_state_dir(tmp_path / "state", event_retention=RETENTION)
    yield db
    db.close()


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PodRunner]:
    pods = PodRunner(tmp_path / "state", server_idle=5.0, sweep_interval=0.2)
    yield pods
    shut_down(pods)


def running(store: SqliteStore, *names: str) -> Callable[[], bool]:
    def check() -> bool:
        return all(
            any(p.name == n and p.phase == "Running" for p in store.list(Pod)) for n in names
        )

    return check


def process_of(runner: PodRunner, pod: str) -> tuple[int, int | None]:
    """(pid, start) of the pod's one container process, from its status record."""
    record = statusfile.read(str(runner.pod_dir("default", pod)))
    assert record is not None
    (process,) = statusfile.processes(record)
    return process


def alive(process: tuple[int, int | None]) -> bool:
    start = podfs.process_start(process[0])
    return start is not None and start == process[1]


def remove_behind_its_back(store: SqliteStore, pod: str) -> None:
    """What a force deletion that skips the runtime does: the pod is gone, finalizer and all."""
    with store.transaction():
        gone = store.delete(Pod, "default", pod, force=True)  # (Terminating: a finalizer)
        gone.metadata.finalizers = []
        store.update(gone, admit=False)  # the last finalizer went: the pod with it
    assert all(p.name != pod for p in store.list(Pod))


def expire_its_watch(store: SqliteStore, executor: Executor[object]) -> None:
    """Writes the executor does not watch, until its resourceVersion is compacted away."""
    for i in range(2 * RETENTION):
        meta = ObjectMeta(name=f"noise.{i}", namespace="default")
        store.create(Event(metadata=meta, reason="Noise"), admit=False)
    with pytest.raises(Expired):
        store.events_since(executor.cursor.rv)


def eventually(check: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < end, what
        time.sleep(0.02)


def test_a_pod_gone_while_the_watch_expired_has_its_processes_killed(
    store: SqliteStore, runner: PodRunner, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    store.create(vcjob("gone", "sleep 60"))
    store.create(vcjob("kept", f"echo $HOSTNAME >> {marks}; sleep 60"))
    executor = Executor(store, runner)
    drive(executor, running(store, "gone-t-0", "kept-t-0"))
    doomed, kept = process_of(runner, "gone-t-0"), process_of(runner, "kept-t-0")
    store.delete(VCJob, "default", "gone", force=True)  # (its pod: Terminating, finalizer)
    remove_behind_its_back(store, "gone-t-0")
    expire_its_watch(store, executor)

    executor.settle()  # the watch expired: the executor lists the store again
    eventually(lambda: not alive(doomed), "the removed pod's process still runs")
    assert set(executor.node.active) == {"default/kept-t-0"}
    assert alive(kept)  # kept running, and not started again
    assert marks.read_text().split() == ["kept-t-0"]
    assert [p.name for p in store.list(Pod)] == ["kept-t-0"]


def test_a_pod_replaced_while_the_watch_expired_runs_anew(
    store: SqliteStore, runner: PodRunner, tmp_path: Path
) -> None:
    """The job's pod is removed behind the runtime's back; after the expiry the job
    controller creates it again (another uid): the old run is killed, the new one runs."""
    marks = tmp_path / "marks"
    store.create(vcjob("again", f"echo run >> {marks}; sleep 60"))
    executor = Executor(store, runner)
    drive(executor, running(store, "again-t-0"))
    old = process_of(runner, "again-t-0")
    old_uid = store.get(Pod, "default", "again-t-0").metadata.uid
    remove_behind_its_back(store, "again-t-0")
    expire_its_watch(store, executor)

    drive(
        executor,
        lambda: (
            running(store, "again-t-0")()
            and store.get(Pod, "default", "again-t-0").metadata.uid != old_uid
        ),
    )
    assert not alive(old)
    eventually(lambda: marks.read_text().count("run") == 2, "the new pod did not run")
    assert alive(process_of(runner, "again-t-0"))
    assert store.get(VCJob, "default", "again").phase == "Running"
