"""Watches of a real `vcflow server` (a bare store) while others write: a list then a watch
from its resourceVersion loses no change, nor does a watch of the current objects first
(resourceVersion unset, or kube's `sendInitialEvents`), with selectors or without; an
object leaving or entering a label selector is DELETED or ADDED; a resourceVersion ahead
of the store is waited for; a list or watch of one name reads that object only."""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import httpx
from tests.store.kubeserver import Served

from vcflow.api.config import ConfigMap, Secret
from vcflow.api.meta import ObjectMeta
from vcflow.server import watching
from vcflow.server.app import create_app
from vcflow.store import MemoryStore, SqliteStore

from .asgi import Client
from .conftest import CORE, DEADLINE, Server, Start

BARE = ("--runtime", "none", "--controllers", "off")
CONFIGMAPS = f"{CORE}/configmaps"
END = "zz-end"  # written last, with every label a watcher selects: its event ends a watch
Replica = dict[str, str]  # name → resourceVersion


def _configmap(name: str, labels: dict[str, str], value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"v": value},
    }


def _http_writer(server: Server, stop: threading.Event, seed: int) -> None:
    """Creates, relabels and deletes ConfigMaps h0..h9 through the API."""
    rand = random.Random(seed)
    with server.client() as client:
        while not stop.is_set():
            name = f"h{rand.randrange(10)}"
            labels = {"pick": rand.choice(["yes", "no"])}
            doing = rand.random()
            if doing < 0.2:
                client.delete(f"{CONFIGMAPS}/{name}")
            elif (
                client.post(CONFIGMAPS, json=_configmap(name, labels, str(doing))).status_code
                == 409
            ):
                patch = {"metadata": {"labels": labels}, "data": {"v": str(doing)}}
                client.patch(
                    f"{CONFIGMAPS}/{name}",
                    content=json.dumps(patch),
                    headers={"Content-Type": "application/merge-patch+json"},
                )


def _store_writer(server: Server, stop: threading.Event, seed: int) -> None:
    """The same on s0..s9 through a store connection of its own (as the control plane's)."""
    rand = random.Random(seed)
    with SqliteStore.in_state_dir(server.state_dir) as store:
        while not stop.is_set():
            name = f"s{rand.randrange(10)}"
            labels = {"pick": rand.choice(["yes", "no"])}
            try:
                found = store.get(ConfigMap, "default", name)
            except Exception:
                meta = ObjectMeta(name=name, namespace="default", labels=labels)
                store.create(ConfigMap(metadata=meta, data={"v": "0"}))
                continue
            if rand.random() < 0.2:
                store.delete(ConfigMap, "default", name)
            else:
                found.metadata.labels = labels
                found.data = {"v": str(rand.random())}
                store.update(found)
            time.sleep(0.001)


class _Watcher(threading.Thread):
    """A client of one watch: applies its events to a replica until END's event comes."""

    def __init__(self, server: Server, selector: str, mode: str) -> None:
        super().__init__(daemon=True)
        self.server, self.selector, self.mode = server, selector, mode
        self.replica: Replica = {}
        self.problems: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # (reported by the test)
            self.problems.append(f"{self.mode} {self.selector!r}: {exc!r}")
        finally:
            self.done.set()

    def _run(self) -> None:
        params = {"watch": "true", "labelSelector": self.selector}
        with self.server.client() as client:
            if self.mode == "list":
                listed = client.get(CONFIGMAPS, params={"labelSelector": self.selector}).json()
                self.replica = {
                    o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listed["items"]
                }
                params["resourceVersion"] = listed["metadata"]["resourceVersion"]
            elif self.mode == "initial-events":
                params.update(sendInitialEvents="true", allowWatchBookmarks="true")
                params["resourceVersionMatch"] = "NotOlderThan"
            last = int(params.get("resourceVersion", "0"))
            # (initial ADDED events carry each object's own resourceVersion, in no order)
            synced = self.mode == "list"
            with client.stream("GET", CONFIGMAPS, params=params) as answer:
                for text in answer.iter_lines():
                    if not text:
                        continue
                    event = json.loads(text)
                    meta = event["object"]["metadata"]
                    rv = int(meta["resourceVersion"])
                    if event["type"] == "BOOKMARK":
                        synced = synced or bool(meta.get("annotations"))
                        continue
                    if synced and rv <= last:
                        self.problems.append(f"{self.mode}: rv {rv} after {last}")
                    last = rv if synced else last
                    if event["type"] == "DELETED":
                        self.replica.pop(meta["name"], None)
                    else:
                        self.replica[meta["name"]] = meta["resourceVersion"]
                    if meta["name"] == END:
                        return


def test_list_then_watch_loses_no_change_while_others_write(start_server: Start) -> None:
    server = start_server(*BARE)
    stop = threading.Event()
    writers = [
        threading.Thread(target=_http_writer, args=(server, stop, 1), daemon=True),
        threading.Thread(target=_store_writer, args=(server, stop, 2), daemon=True),
    ]
    for writer in writers:
        writer.start()
    watchers = []
    for round_ in range(12):  # each starts while the writers write
        time.sleep(0.05)
        for selector in ("", "pick=yes"):
            mode = ("list", "unset", "initial-events")[round_ % 3]
            watchers.append(_Watcher(server, selector, mode))
            watchers[-1].start()
    time.sleep(0.5)
    stop.set()
    for writer in writers:
        writer.join(DEADLINE)
    with server.client() as client:
        made = client.post(CONFIGMAPS, json=_configmap(END, {"pick": "yes"}, "end"))
        assert made.status_code == 201
        for watcher in watchers:
            assert watcher.done.wait(DEADLINE), f"a {watcher.mode} watch did not see the end"
            assert not watcher.problems
            final = client.get(CONFIGMAPS, params={"labelSelector": watcher.selector}).json()
            expected = {
                o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in final["items"]
            }
            assert watcher.replica == expected, (watcher.mode, watcher.selector)


def _events(client: httpx.Client, query: str, count: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    with client.stream("GET", f"{CONFIGMAPS}?watch=true&{query}") as answer:
        assert answer.status_code == 200, answer.read()
        for line in answer.iter_lines():
            if line:
                found.append(json.loads(line))
            if len(found) >= count:
                break
    return found


def test_an_object_leaving_a_selector_is_deleted_and_one_entering_added(
    start_server: Start,
) -> None:
    with start_server(*BARE).client() as client:
        made = client.post(CONFIGMAPS, json=_configmap("a", {"pick": "yes"}, "1")).json()
        rv = made["metadata"]["resourceVersion"]
        merge = {"Content-Type": "application/merge-patch+json"}
        for pick in ("no", "yes"):
            patch = json.dumps({"metadata": {"labels": {"pick": pick}}})
            assert client.patch(f"{CONFIGMAPS}/a", content=patch, headers=merge).status_code == 200
        events = _events(client, f"labelSelector=pick%3Dyes&resourceVersion={rv}", 2)
        assert [e["type"] for e in events] == ["DELETED", "ADDED"]
        assert events[0]["object"]["metadata"]["labels"] == {"pick": "yes"}  # its last state
        assert int(events[0]["object"]["metadata"]["resourceVersion"]) == int(rv) + 1


def test_initial_events_end_with_a_bookmark_and_a_newer_version_is_waited_for(
    start_server: Start,
) -> None:
    server = start_server(*BARE)
    with server.client() as client:
        made = client.post(CONFIGMAPS, json=_configmap("a", {}, "1")).json()
        rv = int(made["metadata"]["resourceVersion"])
        query = "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
        added, bookmark = _events(client, query, 2)
        assert added["type"] == "ADDED" and added["object"]["metadata"]["name"] == "a"
        assert bookmark["type"] == "BOOKMARK"
        assert bookmark["object"]["metadata"] == {
            "resourceVersion": str(rv),
            "annotations": {"k8s.io/initial-events-end": "true"},
        }

        def later() -> None:
            time.sleep(0.5)
            with server.client() as other:
                other.post(CONFIGMAPS, json=_configmap("b", {}, "1"))
                other.post(CONFIGMAPS, json=_configmap("c", {}, "1"))

        writer = threading.Thread(target=later)
        writer.start()
        ahead = _events(client, f"resourceVersion={rv + 1}", 1)  # waits for b, then c
        writer.join()
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in ahead] == [("ADDED", "c")]
        far = client.get(CONFIGMAPS, params={"watch": "true", "resourceVersion": str(rv + 100)})
        assert far.status_code == 504 and far.json()["reason"] == "Timeout"
        assert far.json()["message"] == f"Too large resource version: {rv + 100}, current: {rv + 2}"


def test_a_watch_behind_many_events_gets_each_in_order(start_server: Start) -> None:
    server = start_server(*BARE)
    with server.client() as client:
        rv = int(client.get(CONFIGMAPS).json()["metadata"]["resourceVersion"])
    count = 2_500  # (the stream reads them a page at a time)
    with SqliteStore.in_state_dir(server.state_dir) as store, store.transaction():
        for i in range(count):
            store.create(ConfigMap(metadata=ObjectMeta(name=f"c{i:04d}", namespace="default")))
    with server.client() as client:
        events = _events(client, f"resourceVersion={rv}", count)
    assert [e["object"]["metadata"]["name"] for e in events] == [f"c{i:04d}" for i in range(count)]
    assert [int(e["object"]["metadata"]["resourceVersion"]) for e in events] == list(
        range(rv + 1, rv + count + 1)
    )


class _CountingStore:
    """A store that counts its `list` calls (reads of every object of a kind)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store, self.lists = store, 0

    def list(self, *args: Any, **kwargs: Any) -> Any:
        self.lists += 1
        return self.store.list(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_a_list_or_watch_of_one_name_reads_only_that_object() -> None:
    store = MemoryStore()
    for name in ("a", "b"):
        meta = ObjectMeta(name=name, namespace="default", labels={"k": name})
        store.create(ConfigMap(metadata=meta))
    counting = _CountingStore(store)
    app = create_app(counting)  # type: ignore[arg-type]
    client = Client(app)
    one = client.get(CONFIGMAPS, params={"fieldSelector": "metadata.name=b"}).json()
    assert [o["metadata"]["name"] for o in one["items"]] == ["b"]
    none = client.get(
        CONFIGMAPS, params={"fieldSelector": "metadata.name=b", "labelSelector": "k=a"}
    )
    assert none.json()["items"] == []
    missing = client.get(CONFIGMAPS, params={"fieldSelector": "metadata.name=zz"})
    assert missing.json()["items"] == []
    assert counting.lists == 0
    every = client.get("/api/v1/configmaps", params={"fieldSelector": "metadata.name=b"}).json()
    assert [o["metadata"]["name"] for o in every["items"]] == ["b"]  # (all namespaces: a list)


def test_a_watch_bookmarks_as_soon_as_it_has_caught_up() -> None:
    """A watch from a resourceVersion, with bookmarks, sends the events after it and then a
    BOOKMARK at the store's current resourceVersion at once, even when the latest write is
    of another kind: a client reading up to a resourceVersion (KubeStore.events_since)
    knows it has every event, without waiting for the periodic bookmark or for silence."""
    store = MemoryStore()
    first = store.create(ConfigMap(metadata=ObjectMeta(name="a", namespace="default")))
    store.create(ConfigMap(metadata=ObjectMeta(name="b", namespace="default")))
    latest = store.create(Secret(metadata=ObjectMeta(name="s", namespace="default")))
    served = Served(create_app(store))
    try:
        began = time.monotonic()
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": first.metadata.resource_version,
        }
        frames = []
        with (
            httpx.Client(base_url=served.url, timeout=DEADLINE) as client,
            client.stream("GET", CONFIGMAPS, params=query) as answer,
        ):
            for line in answer.iter_lines():
                if line:
                    frames.append(json.loads(line))
                if len(frames) == 2:
                    break
        waited = time.monotonic() - began
    finally:
        served.stop()
    assert [(f["type"], f["object"]["metadata"].get("name")) for f in frames] == [
        ("ADDED", "b"),
        ("BOOKMARK", None),
    ]
    assert frames[1]["object"]["metadata"]["resourceVersion"] == latest.metadata.resource_version
    assert waited < watching.BOOKMARK_EVERY, waited
