"""The status that fits etcd (docs/status-size.md) over the Kubernetes API: the controllers
(`Manager`) over a `KubeStore`, talking HTTP to `vcflow server`'s application (controllers
and runtime off) around a memory store, on which the test plays Volcano's job controller. A
flow past the 512 KiB status budget runs to Succeed; every status write is a JSON merge patch
of `/status` that the server takes, under 1 MiB, and leaves the stored status exactly what
the controller rendered: the finished entries the compact form drops from `conditions` and
`jobStatusList` are sent as `null` and gone. `vcflow describe` through the API shows every
job; a controller restarted on a fresh KubeStore creates no vcjob again."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from tests.store.kubeserver import Served
from typer.testing import CliRunner

from vcflow.api import bounds, compactstatus
from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli.app import app
from vcflow.controller.manager import Manager
from vcflow.kubeapi import resources
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.reconcile import flowstatus, statusfit
from vcflow.server import watching
from vcflow.server.app import create_app
from vcflow.store import Cursor

from .volcano_player import START, Player, RecordingStore, flow, layered, template

MIB = 1024 * 1024
ENTRIES = 1_200  # 614 KB of status in Volcano's layout: past STATUS_BUDGET
WIDTH = 400  # three layers: the switch to the compact form comes while one runs
FLOWS = resources.of_model(JobFlow).path("default")
VCJOBS = resources.of_model(VCJob).path("default")
FINISHED = ("Completed", "Skipped")
DELETED = "big-l00-0007"  # deleted by a user once the status is compact


@dataclass
class Request:
    method: str
    path: str
    body: bytes = b""
    status: int = 0


class _Recorded:
    """ASGI middleware keeping every request: method, path, body and the answer's code."""

    def __init__(self, app: ASGIApp, seen: list[Request]) -> None:
        self.app, self.seen = app, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(str(scope["method"]), str(scope["path"]))
        self.seen.append(request)

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                request.body += message.get("body", b"")
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                request.status = int(message["status"])
            await send(message)

        await self.app(scope, receiving, sending)


class IntentStore(KubeStore):
    """A KubeStore keeping, in `intended`, each JobFlow status its controller wrote."""

    def __init__(self, client: KubeClient, intended: list[Any]) -> None:
        super().__init__(client)
        self.intended = intended

    def update_status_data(self, kind: Any, *args: Any, **kwargs: Any) -> Any:
        written = super().update_status_data(kind, *args, **kwargs)
        if kind is JobFlow:
            status = args[2] if len(args) > 2 else kwargs["status"]
            self.intended.append(json.loads(json.dumps(status)))
        return written


class Cluster:
    """`vcflow server`'s app (controllers and runtime off) around a memory store that
    records every JobFlow status write, each request it answers kept (`seen`)."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.engine = RecordingStore(clock)
        self.seen: list[Request] = []
        self.intended: list[Any] = []
        self.stores: list[KubeStore] = []
        self.stopping = threading.Event()
        recorded = Middleware(_Recorded, seen=self.seen)
        self.served = Served(create_app(self.engine, stopping=self.stopping, middleware=[recorded]))
        self.url = self.served.url

    def fresh_store(self) -> IntentStore:
        """A new client (its own connection pool and watches), unlimited in rate."""
        store = IntentStore(KubeClient.for_url(self.url, timeout=30, qps=0), self.intended)
        self.stores.append(store)
        return store

    def close(self) -> None:
        for store in self.stores:
            store.close()
        self.stopping.set()
        self.served.stop()
        self.engine.close()

    def flow(self) -> JobFlow:
        return self.engine.get(JobFlow, "default", "big")

    def status_writes(self) -> list[Request]:
        return [r for r in self.seen if r.path == f"{FLOWS}/big/status" and r.method != "GET"]

    def vcjob_creates(self) -> list[str]:
        """The name of each vcjob POSTed, in order."""
        posts = [r for r in self.seen if r.method == "POST" and r.path == VCJOBS]
        return [json.loads(r.body)["metadata"]["name"] for r in posts]


class KubePlayer(Player):
    """The player writes on the server's store (as Volcano's job controller writes on the
    API server); the controllers settle once their watches have brought those writes. The
    first time the stored status is compact, a user deletes a completed vcjob and the
    controller is restarted on a fresh KubeStore: it knows that job only from the records."""

    def __init__(self, cluster: Cluster, manager: Manager) -> None:
        super().__init__(cluster.engine, cluster.clock, manager)
        self.cluster = cluster
        self.restarted_at = 0  # the status writes before the restart

    def settle(self) -> None:
        latest = self.store.resource_version()
        deadline = time.monotonic() + 30
        store = self.manager.store
        assert isinstance(store, KubeStore)
        while latest > self.manager.cursor.rv and not store.wait(Cursor(latest - 1), 1.0):
            assert time.monotonic() < deadline, "the controllers' watch never brought the writes"
        self.manager.settle()
        status = self.cluster.flow().status
        if not self.restarted_at and status is not None and status.compact_job_status:
            self.restarted_at = len(self.cluster.status_writes())
            self.store.delete(VCJob, "default", DELETED)
            self.manager = Manager(self.cluster.fresh_store(), self.clock)
            self.settle()


@dataclass
class Run:
    cluster: Cluster
    manager: Manager  # the restarted one
    restarted_at: int
    seconds: float


@pytest.fixture(scope="module")
def run() -> Iterator[Run]:
    with pytest.MonkeyPatch.context() as patch:
        # as a kube-apiserver, the server sends a watch event at once, not at its next poll
        patch.setattr(watching, "POLL", 0.01)
        clock = FakeClock(START)
        cluster = Cluster(clock)
        try:
            flows = layered(ENTRIES, WIDTH)
            cluster.engine.apply([*(template(f["name"]) for f in flows), flow("big", flows)])
            began = time.monotonic()
            player = KubePlayer(cluster, Manager(cluster.fresh_store(), clock))
            player.run()
            yield Run(cluster, player.manager, player.restarted_at, time.monotonic() - began)
        finally:
            cluster.close()


def _status(request: Request) -> Any:
    return json.loads(request.body)["status"]


def _plain(status: dict[str, Any]) -> set[str]:
    """The entries a stored status lists in plain: its `conditions` keys."""
    return set(status.get("conditions") or {})


def test_every_status_write_is_taken_by_the_server_under_1_mib(run: Run) -> None:
    cluster = run.cluster
    assert cluster.flow().phase == "Succeed"
    writes = cluster.status_writes()
    assert writes and {(r.method, r.status) for r in writes} == {("PATCH", 200)}
    assert run.manager.flows.last_error is None  # nothing refused, so nothing retried
    # no 409, 413 or 422 anywhere, handled or not: the only refusals are the 404s of a
    # flow's full sync looking for each vcjob not found by label, by name
    refused = [r for r in cluster.seen if r.status >= 400]
    assert {(r.method, r.status) for r in refused} <= {("GET", 404)}
    assert all(r.path.startswith(VCJOBS + "/") for r in refused)
    assert max(len(r.body) for r in writes) < MIB
    assert len(cluster.engine.sizes) == len(writes) and max(cluster.engine.sizes) < MIB
    # (the flow did outgrow Volcano's layout: its status would be past STATUS_BUDGET)
    full = compactstatus.expand(cluster.flow().to_dict()["status"])
    assert bounds.object_size(full) > statusfit.STATUS_BUDGET


def test_each_merge_patch_leaves_the_status_the_controller_rendered(run: Run) -> None:
    """What the server holds after each PATCH is exactly the status the controller meant:
    the keys it dropped were sent as null and are gone, none left behind by the merge."""
    stored = [json.loads(w) for w in run.cluster.engine.writes]
    assert stored == run.cluster.intended


def test_the_switch_to_the_compact_form_drops_the_finished_entries(run: Run) -> None:
    writes = run.cluster.status_writes()
    stored = [json.loads(w) for w in run.cluster.engine.writes]
    compact = ["compactJobStatus" in s for s in stored]
    switch = compact.index(True)
    assert not any(compact[:switch]) and all(compact[switch:])  # once compact, compact
    before, after = stored[switch - 1], stored[switch]
    finished = {n for n, c in before["conditions"].items() if c["phase"] in FINISHED}
    assert len(finished) >= WIDTH  # plain, the layers done were listed one by one
    # the patch sent each finished entry as null, and the server dropped it
    sent = _status(writes[switch])
    assert {n for n, c in sent["conditions"].items() if c is None} == finished
    assert sent["completedJobs"] is None and "completedJobs" not in after
    assert not finished & _plain(after)
    assert {i["name"] for i in after["jobStatusList"]} == _plain(after)
    # what is left in plain is what the compact form keeps unfinished; it keeps the rest
    full = compactstatus.expand(after)
    unfinished = {n for n, c in full["conditions"].items() if c["phase"] not in FINISHED}
    assert _plain(after) == unfinished and finished <= set(full["conditions"])
    for name in _plain(after):
        assert after["conditions"][name] == full["conditions"][name]
    # from then on no record is lost, however few are in plain
    known: set[str] = set(before["conditions"])
    for status in stored[switch:]:
        records = set(compactstatus.expand(status)["conditions"])
        assert known <= records
        known = records
    assert len(known) == ENTRIES


def test_the_stored_compact_status_holds_every_record(run: Run) -> None:
    status = run.cluster.fresh_store().get(JobFlow, "default", "big").to_dict()["status"]
    assert set(status) == {"state", "compactJobStatus"}  # every entry done: none in plain
    counts = status["compactJobStatus"]["counts"]
    assert counts["jobStatusList"] == counts["conditions"] == counts["completedJobs"] == ENTRIES
    full = compactstatus.expand(status)
    assert len(full["jobStatusList"]) == len(full["conditions"]) == ENTRIES
    index = next(iter(run.manager.flows.indexes.values()))
    assert full == flowstatus.render(index.state)  # Volcano's layout of it, exactly
    assert full["conditions"][DELETED]["phase"] == "Completed"


def test_describe_through_the_api_shows_every_job(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VCFLOW_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["describe", "jf", "big", "--server", run.cluster.url])
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"compact (status.compactJobStatus: {ENTRIES:,} job records, all shown here)" in text
    jobs = text.split("  Jobs:\n", 1)[1].split("\n  Completed Jobs:", 1)[0]
    assert len(re.findall(r"^\s+big-l\d\d-\d{4}\s+Completed\s*$", jobs, re.M)) == ENTRIES
    listed = text.split("  Job Status List:\n", 1)[1]
    rows = re.findall(r"^\s+(big-l\d\d-\d{4})\s+Completed\s+(\S+)\s+(\S+)\s+(\d+)$", listed, re.M)
    assert len({r[0] for r in rows}) == ENTRIES
    full = compactstatus.expand(run.cluster.flow().to_dict()["status"])
    item = next(i for i in full["jobStatusList"] if i["name"] == "big-l02-0123")
    row = next(r for r in rows if r[0] == "big-l02-0123")
    assert row[1:] == (item["startTimestamp"], item["endTimestamp"], "0")


def test_a_controller_restarted_mid_flow_on_a_fresh_kubestore_creates_no_vcjob_twice(
    run: Run,
) -> None:
    """Restarted once the status is compact, after a user deleted a completed vcjob: the
    controller knows that job only from `compactJobStatus`, and runs it not again."""
    assert 0 < run.restarted_at < len(run.cluster.status_writes())
    created = run.cluster.vcjob_creates()
    assert len(created) == len(set(created)) == ENTRIES
    names = {j.name for j in run.cluster.engine.list(VCJob, "default")}
    assert DELETED in created and DELETED not in names and len(names) == ENTRIES - 1


def test_a_controller_restarted_after_the_flow_succeeded_creates_no_vcjob(run: Run) -> None:
    cluster = run.cluster
    before = cluster.flow().to_dict()["status"]
    created = len(cluster.vcjob_creates())
    store = cluster.fresh_store()
    manager = Manager(store, cluster.clock)
    manager.settle()
    assert len(cluster.vcjob_creates()) == created
    assert cluster.flow().to_dict()["status"] == before
    # a completed vcjob deleted now (row 16) is remembered from the compact records alone
    store.delete(VCJob, "default", "big-l01-0007")
    manager.settle()
    assert len(cluster.vcjob_creates()) == created and manager.flows.last_error is None
    assert cluster.flow().phase == "Succeed"
    full = compactstatus.expand(cluster.flow().to_dict()["status"])
    assert full["conditions"]["big-l01-0007"]["phase"] == "Completed"
