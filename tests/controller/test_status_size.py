"""A JobFlow's status stays small enough for etcd (docs/status-size.md): a 10,000-entry flow
runs to Succeed with every status write under 1 MiB, `describe` still shows every job's
record, a restarted controller reads the compact form back, and a small flow's statuses are
byte for byte what they were before the compact form existed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vcflow.api import compactstatus
from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.cli import describe
from vcflow.controller.manager import Manager
from vcflow.reconcile import statusfit

from .volcano_player import START, Player, RecordingStore, flow, layered, run_example, template

MIB = 1024 * 1024
ENTRIES = 10_000
WIDTH = 2_500
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "status" / "volcano-example-writes.jsonl"


class Big:
    def __init__(self) -> None:
        self.clock = FakeClock(START)
        self.too_big: list[int] = []
        self.store = RecordingStore(self.clock, self._check)
        self.flows = layered(ENTRIES, WIDTH)
        self.store.apply([*(template(f["name"]) for f in self.flows), flow("big", self.flows)])
        self.manager = Manager(self.store, self.clock)
        Player(self.store, self.clock, self.manager).run()

    def _check(self, size: int, obj: JobFlow) -> None:
        if size >= MIB:
            self.too_big.append(size)

    def flow(self) -> JobFlow:
        return self.store.get(JobFlow, "default", "big")


@pytest.fixture(scope="module")
def big() -> Big:
    return Big()


def test_every_status_write_of_a_10000_entry_flow_is_under_1_mib(big: Big) -> None:
    assert big.flow().phase == "Succeed"
    assert len(big.store.list(VCJob, "default")) == ENTRIES
    assert big.store.sizes, "no status was written"
    assert big.too_big == []
    assert max(big.store.sizes) < MIB
    # the flow outgrew Volcano's layout: its final status is the compact form
    status = big.flow().status
    assert status is not None and status.compact_job_status is not None
    counts = status.compact_job_status.counts
    assert counts["jobStatusList"] == counts["conditions"] == counts["completedJobs"] == ENTRIES


def test_the_compact_status_holds_every_record(big: Big) -> None:
    status = big.flow().to_dict()["status"]
    full = compactstatus.expand(status)
    assert len(full["completedJobs"]) == ENTRIES
    assert len(full["jobStatusList"]) == ENTRIES
    assert len(full["conditions"]) == ENTRIES
    # what Volcano's layout would have written, exactly: the index renders it again
    index = next(iter(big.manager.flows.indexes.values()))
    from vcflow.reconcile import flowstatus

    assert full == flowstatus.render(index.state)


def test_describe_shows_all_10000_records(big: Big) -> None:
    text = describe.render(big.flow(), [], big.clock.now())
    assert "Stored As:" in text and "10,000 job records" in text
    jobs = text.split("  Jobs:\n", 1)[1].split("\n  Completed Jobs:", 1)[0]
    assert len(re.findall(r"^\s+big-l\d\d-\d{4}\s+Completed\s*$", jobs, re.M)) == ENTRIES
    listed = text.split("  Job Status List:\n", 1)[1]
    rows = re.findall(r"^\s+(big-l\d\d-\d{4})\s+Completed\s+(\S+)\s+(\S+)\s+(\d+)$", listed, re.M)
    assert len(rows) == ENTRIES
    # one job's record, as the flow recorded it
    full = compactstatus.expand(big.flow().to_dict()["status"])
    item = next(i for i in full["jobStatusList"] if i["name"] == "big-l03-1234")
    row = next(r for r in rows if r[0] == "big-l03-1234")
    assert row[1:] == (item["startTimestamp"], item["endTimestamp"], "0")


def test_get_yaml_shows_the_stored_form(big: Big) -> None:
    status = big.flow().to_dict()["status"]
    assert "conditions" not in status  # (every entry finished: none is shown in plain)
    assert set(status) == {"state", "compactJobStatus"}
    assert status["state"] == {"phase": "Succeed"}


def test_a_restarted_controller_reads_the_compact_status_back(big: Big) -> None:
    before = big.flow().to_dict()["status"]
    manager = Manager(big.store, big.clock)
    manager.settle()
    assert len(big.store.list(VCJob, "default")) == ENTRIES  # nothing created again
    assert big.flow().to_dict()["status"] == before
    # a completed job deleted now (row 16) is remembered, from the compact records alone
    big.store.delete(VCJob, "default", "big-l00-0007")
    manager.settle()
    assert big.flow().phase == "Succeed"
    assert len(big.store.list(VCJob, "default")) == ENTRIES - 1
    full = compactstatus.expand(big.flow().to_dict()["status"])
    assert full["conditions"]["big-l00-0007"]["phase"] == "Completed"


def test_while_running_the_plain_fields_show_the_unfinished_entries() -> None:
    clock = FakeClock(START)
    store = RecordingStore(clock)
    flows = layered(3_000, 1_500)
    store.apply([*(template(f["name"]) for f in flows), flow("mid", flows)])
    manager = Manager(store, clock)
    player = Player(store, clock, manager)
    manager.settle()
    player.step()  # the first layer completed, the second one created
    for job in store.list(VCJob, "default"):
        if not job.phase:
            job.status = _running()
            store.update_status(job)
    failed = store.get(VCJob, "default", "mid-l01-1499")
    failed.status = VCJobStatus.from_dict({"state": {"phase": "Failed"}})
    store.update_status(failed)
    manager.settle()
    status = store.get(JobFlow, "default", "mid").to_dict()["status"]
    assert "compactJobStatus" in status
    plain = status["conditions"]
    assert 0 < len(plain) <= statusfit.ACTIVE_MAX
    # the failed one first, then running ones; none of the 1,500 completed
    assert next(iter(plain)) != "mid-l01-1499"  # (shown in flow order)
    assert plain["mid-l01-1499"]["phase"] == "Failed"
    assert {c["phase"] for c in plain.values()} == {"Running", "Failed"}
    assert status["failedJobs"] == ["mid-l01-1499"]
    assert len(status["runningJobs"]) == len(plain) - 1
    assert [i["name"] for i in status["jobStatusList"]] == list(plain)
    assert "completedJobs" not in status  # the finished ones are in compactJobStatus only
    counts = status["compactJobStatus"]["counts"]
    assert counts["completedJobs"] == 1_500 and counts["runningJobs"] == 1_499
    assert max(store.sizes) < MIB


def _running() -> VCJobStatus:
    return VCJobStatus.from_dict(
        {"state": {"phase": "Running"}, "taskStatusCount": {"main": {"phase": {"Running": 1}}}}
    )


def test_the_volcano_example_writes_the_statuses_it_wrote_before() -> None:
    """Byte for byte the statuses main wrote before the compact form (golden file written
    by `python tests/controller/volcano_player.py` on that code)."""
    store = run_example()
    assert store.writes == GOLDEN.read_text().splitlines()
    assert all("compactJobStatus" not in w for w in store.writes)


def test_a_status_the_store_refuses_as_too_large_is_retried_not_fatal() -> None:
    clock = FakeClock(START)
    store = RecordingStore(clock)
    store.apply([template("a"), flow("f", [{"name": "a"}])])
    manager = Manager(store, clock)
    manager.settle()
    spec_bytes = 1_600_000  # the flow's status alone passes the store's 1.5 MiB
    key = next(iter(manager.flows.indexes))
    index = manager.flows.indexes[key]
    index.last_retry = "x" * spec_bytes
    manager.flows.status_due.mark(key, phase_changed=False)
    manager.flows.flush()
    assert manager.flows.last_error is not None and "1.5 MiB" in manager.flows.last_error
    assert store.get(JobFlow, "default", "f").status is not None


def _small_compact_flow(monkeypatch: pytest.MonkeyPatch) -> tuple[RecordingStore, FakeClock]:
    monkeypatch.setattr(statusfit, "STATUS_BUDGET", 1_000)  # 6 entries outgrow it
    clock = FakeClock(START)
    store = RecordingStore(clock)
    flows = layered(6, 3)
    store.apply([*(template(f["name"]) for f in flows), flow("small", flows)])
    manager = Manager(store, clock)
    Player(store, clock, manager).run()
    status = store.get(JobFlow, "default", "small").to_dict()["status"]
    assert "compactJobStatus" in status
    return store, clock


def _corrupt(store: RecordingStore) -> None:
    stored = store.get(JobFlow, "default", "small")
    status = stored.to_dict()["status"]
    status["compactJobStatus"]["data"] = "H4sIAAAA"  # a gzip header, cut short
    store.update_status_data(JobFlow, "default", "small", status)


def test_a_compact_status_it_cannot_read_stops_the_flow_and_reruns_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, clock = _small_compact_flow(monkeypatch)
    store.delete(VCJob, "default", "small-l00-0000")  # only the status remembers it
    _corrupt(store)
    manager = Manager(store, clock)
    manager.settle()
    assert manager.flows.last_error is not None
    assert "status.compactJobStatus: data is not gzip+base64" in manager.flows.last_error
    assert {j.name for j in store.list(VCJob, "default")} == {
        f"small-l{i // 3:02d}-{i % 3:04d}" for i in range(1, 6)
    }  # not created again


def test_describe_says_a_compact_status_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    store, clock = _small_compact_flow(monkeypatch)
    _corrupt(store)
    text = describe.render(store.get(JobFlow, "default", "small"), [], clock.now())
    assert (
        "Stored As:" in text
        and "compact, unreadable (status.compactJobStatus: data is not gzip+base64" in text
    )
