"""Probes on a cluster reach the target's pods by their IPs (`status.podIP`, the pods found
by Volcano's labels), not this host: the operator's `PodHosts` resolver under the flow
controller's real prober, on a memory store. A listener on 127.0.0.2 stands for a pod IP:
the embedded default (127.0.0.1) cannot reach it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.controller.prober import SocketProber
from vcflow.operator.podhosts import PodHosts
from vcflow.reconcile.probes import TCP, Check
from vcflow.store import Cursor, MemoryStore

POD_IP = "127.0.0.2"


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind((POD_IP, 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "main", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def probed(port: int) -> JobFlow:
    probe = {"tcpSocketList": [{"taskName": "main", "port": port}]}
    flows = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"], "probe": probe}}]
    spec = {"jobRetainPolicy": "retain", "flows": flows}
    return JobFlow.from_dict({"metadata": {"name": "f", "namespace": "default"}, "spec": spec})


def run_a(store: MemoryStore) -> None:
    status = {"state": {"phase": "Running"}, "taskStatusCount": {"main": {"phase": {"Running": 1}}}}
    store.update_status_data(VCJob, "default", "f-a", status)


def pod(job: str, ip: str | None, phase: str = "Running") -> Pod:
    labels = {"volcano.sh/job-name": job, "volcano.sh/task-spec": "main"}
    status: dict[str, Any] = {"phase": phase, **({"podIP": ip} if ip else {})}
    return Pod.from_dict(
        {
            "metadata": {"name": f"{job}-main-0", "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "x"}]},
            "status": status,
        }
    )


def message_of(store: MemoryStore, entry: str) -> str:
    status = store.get(JobFlow, "default", "f").status
    assert status is not None
    return str(status.conditions[entry].message or "")


def test_a_probe_connects_to_the_pod_ip_of_the_targets_task(listening: int) -> None:
    store = MemoryStore()
    store.apply([template("a"), template("b"), probed(listening)])
    manager = Manager(store, options=ControllerOptions(prober=SocketProber(hosts=PodHosts(store))))
    manager.settle()
    run_a(store)
    manager.settle()
    assert "no pod with an IP yet" in message_of(store, "f-b")
    assert store.names(VCJob, "default") == ["f-a"]
    store.create(pod("f-a", POD_IP))
    for _ in range(50):  # probe rounds come every second: wait for the next one
        manager.settle()
        if "f-b" in store.names(VCJob, "default"):
            break
        store.wait(Cursor.now(store), 0.1)
    assert store.names(VCJob, "default") == ["f-a", "f-b"]


def test_without_a_resolver_the_probe_connects_to_this_host(listening: int) -> None:
    store = MemoryStore()
    store.apply([template("a"), template("b"), probed(listening)])
    manager = Manager(store)  # embedded: 127.0.0.1, where nothing listens on that port
    manager.settle()
    run_a(store)
    store.create(pod("f-a", POD_IP))
    manager.settle()
    assert "connection refused" in message_of(store, "f-b")
    assert store.names(VCJob, "default") == ["f-a"]


def test_only_running_pods_with_an_ip_are_probed() -> None:
    store = MemoryStore()
    store.create(pod("f-a", "10.0.0.7"))
    store.create(pod("f-x", "10.0.0.8"))
    pending = pod("f-a", None, "Pending")
    pending.metadata.name = "f-a-main-1"
    store.create(pending)
    hosts = PodHosts(store).hosts(Check(TCP, 80, task="main", namespace="default", job="f-a"))
    assert hosts == ["10.0.0.7"]
