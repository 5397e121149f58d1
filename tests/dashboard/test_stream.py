"""The event stream's parts over an in-memory store (`dashboard.stream`): the hub caps the
open streams and tells each which flows changed (a vcjob's change is its flow's), a page
sends `row`, `nodes` with only the changed nodes, `reload` and `deleted`, and a stream
ends when the server stops."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from datetime import UTC, datetime
from typing import Any

from vcflow.api import names
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.dashboard import stream
from vcflow.store.base import Cursor
from vcflow.store.memory import MemoryStore

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def flow(name: str = "f") -> JobFlow:
    return JobFlow.from_dict(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
        }
    )


def no_past(namespace: str, name: str) -> dict[str, list[float]]:
    return {}


def page(store: MemoryStore, name: str | None = "f") -> stream.Page:
    return stream.Page(store, stream.Scope("default", name), no_past, lambda: NOW)


def decoded(frames: list[bytes]) -> list[tuple[str, Any]]:
    out = []
    for chunk in frames:
        head, data = chunk.decode().strip().split("\n")
        out.append((head.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def set_phase(store: MemoryStore, name: str, conditions: dict[str, str]) -> None:
    stored = store.get(JobFlow, "default", name)
    status = {
        "state": {"phase": "Running"},
        "conditions": {job: {"phase": phase} for job, phase in conditions.items()},
    }
    store.update_status_data(JobFlow, "default", name, status, base=stored)


def test_a_page_sends_rows_and_only_the_nodes_that_changed() -> None:
    store = MemoryStore()
    store.create(flow(), admit=False)
    shown = page(store)
    shown.start()  # (the page has the graph: nothing sent for it)
    set_phase(store, "f", {"f-a": "Running", "f-b": "Waiting"})
    first = decoded(shown.frames(("default", "f")))
    assert [e for e, _ in first] == ["row", "nodes"]
    assert {n["id"] for n in first[1][1]["nodes"]} == {"a", "b"}
    set_phase(store, "f", {"f-a": "Completed", "f-b": "Waiting"})
    second = decoded(shown.frames(("default", "f")))
    assert [n["id"] for n in second[1][1]["nodes"]] == ["a"]
    assert second[0][1]["done"] == 1
    assert decoded(shown.frames(("default", "f")))[1:] == []  # (nothing changed: a row only)
    store.delete(JobFlow, "default", "f", force=True)
    assert decoded(shown.frames(("default", "f"))) == [
        ("deleted", {"namespace": "default", "name": "f"})
    ]
    store.create(flow(), admit=False)  # (a new uid: lay it out again)
    assert [e for e, _ in decoded(shown.frames(("default", "f")))] == ["row", "reload"]


def test_the_hub_caps_the_streams_and_names_the_flows_that_changed() -> None:
    store = MemoryStore()
    stopping = threading.Event()
    hub = stream.Hub(store, stopping)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        listeners = [hub.join(loop) for _ in range(stream.MAX_STREAMS)]
        assert all(listener is not None for listener in listeners)
        assert hub.join(loop) is None
        first = listeners[0]
        assert first is not None
        await asyncio.sleep(0.3)  # (the hub's thread has its cursor)
        store.create(flow("g"), admit=False)
        job = VCJob.from_dict(
            {
                "metadata": {
                    "name": "g-a",
                    "namespace": "default",
                    "labels": {names.LABEL_CREATED_BY_FLOW: names.created_by_value("default", "h")},
                }
            }
        )
        store.create(job, admit=False)
        seen: set[tuple[str, str]] = set()
        for _ in range(50):
            await first.wait(0.1)
            seen |= first.take()
            if seen >= {("default", "g"), ("default", "h")}:
                break
        assert seen == {("default", "g"), ("default", "h")}
        for listener in listeners:
            assert listener is not None
            hub.leave(listener)
        assert hub.open == 0

    asyncio.run(run())
    stopping.set()
    hub.close()


def test_a_stream_says_hello_and_ends_when_the_server_stops() -> None:
    store = MemoryStore()
    store.create(flow("x"), admit=False)
    stopping = threading.Event()
    hub = stream.Hub(store, stopping)

    async def run() -> list[bytes]:
        listener = hub.join(asyncio.get_running_loop())
        assert listener is not None
        got = []
        body = stream.events(hub, listener, page(store, None), stopping)
        async for chunk in body:
            got.append(chunk)
            stopping.set()
        return got

    got = asyncio.run(asyncio.wait_for(run(), 10))
    assert decoded(got) == [("hello", {"resourceVersion": str(Cursor.now(store).rv)})]
    assert hub.open == 0
    hub.close()


def test_a_client_gone_before_the_first_frame_leaves_the_hub() -> None:
    store = MemoryStore()
    stopping = threading.Event()
    hub = stream.Hub(store, stopping)

    async def run() -> None:
        listener = hub.join(asyncio.get_running_loop())
        assert listener is not None
        body = stream.events(hub, listener, page(store, None), stopping)
        answer = stream.Response(body, hub, listener)

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(10)
            return {"type": "http.disconnect"}

        async def send(message: Any) -> None:
            raise OSError("the client is gone")

        scope = {"type": "http", "asgi": {"spec_version": "2.4"}, "method": "GET"}
        with contextlib.suppress(Exception):
            await answer(scope, receive, send)
        assert hub.open == 0

    asyncio.run(run())
    stopping.set()
    hub.close()
