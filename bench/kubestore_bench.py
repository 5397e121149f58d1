"""The controllers over `KubeStore`: time for a 20-job flow to settle, and the API requests
it costs, against `vcflow server`'s application (a memory store behind it) on a loopback
socket in this process.

The flow is a chain of --jobs entries (each targets the one before), the worst case for
watch latency: every entry waits for its target's Completed event to reach the JobFlow
controller. `vcflow.controller.manager.Manager.run` works over a `KubeStore`; a driver
beside the server (on its store, not through the API) stands in for Volcano's job
controller and sets each vcjob it finds to Completed. The figure is the wall time from
the flow's create to its `Succeed` as the server stores it, and the requests the
KubeStore sent (watches counted once, when opened).

    .venv/bin/python bench/kubestore_bench.py                 # 20 jobs, 3 runs
    .venv/bin/python bench/kubestore_bench.py --jobs 50 --repeat 5
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time
from collections import Counter
from typing import Any

import uvicorn

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.server.app import create_app
from vcflow.store import MemoryStore

TASKS = [
    {
        "name": "t",
        "replicas": 1,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
            }
        },
    }
]


def _serve(app: Any) -> tuple[str, uvicorn.Server, threading.Thread]:
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return f"http://127.0.0.1:{sock.getsockname()[1]}", server, thread


def one_run(jobs: int) -> tuple[float, Counter[str]]:
    engine = MemoryStore()
    stopping = threading.Event()
    url, server, thread = _serve(create_app(engine, stopping=stopping))
    store = KubeStore(KubeClient.for_url(url))
    sent: Counter[str] = Counter()
    request, stream = store.client.request, store.client.stream

    def counted(method: str, path: str, **kwargs: Any) -> Any:
        sent[method + (" status" if path.endswith("/status") else "")] += 1
        return request(method, path, **kwargs)

    def counted_stream(path: str, **kwargs: Any) -> Any:
        sent["WATCH"] += 1
        return stream(path, **kwargs)

    store.client.request = counted  # type: ignore[method-assign]
    store.client.stream = counted_stream  # type: ignore[method-assign]
    for i in range(jobs):
        engine.create(
            JobTemplate.from_dict(
                {"metadata": {"name": f"t{i}", "namespace": "default"}, "spec": {"tasks": TASKS}}
            )
        )
    entries: list[dict[str, Any]] = [{"name": "t0"}]
    entries += [{"name": f"t{i}", "dependsOn": {"targets": [f"t{i - 1}"]}} for i in range(1, jobs)]
    manager = Manager(store)
    done = threading.Event()
    worker = threading.Thread(target=manager.run, args=(done.is_set,), kwargs={"poll": 0.5})
    worker.start()
    began = time.perf_counter()
    engine.create(
        JobFlow.from_dict(
            {"metadata": {"name": "chain", "namespace": "default"}, "spec": {"flows": entries}}
        )
    )
    while engine.phase(JobFlow, "default", "chain") != "Succeed":
        for job in engine.list(VCJob):
            if job.status is None or job.phase != "Completed":
                engine.update_status_data(
                    VCJob, job.namespace, job.name, {"state": {"phase": "Completed"}}
                )
        time.sleep(0.002)
        if time.perf_counter() - began > 600:
            raise SystemExit("the flow did not settle in 600 s")
    took = time.perf_counter() - began
    done.set()
    worker.join()
    store.close()
    stopping.set()
    server.should_exit = True
    thread.join(10)
    return took, sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    times, counts = [], []
    for _ in range(args.repeat):
        took, sent = one_run(args.jobs)
        times.append(took)
        counts.append(sum(sent.values()))
        print(f"{args.jobs}-job chain settled in {took:.2f} s; requests {dict(sent)}")
    print(
        f"median {statistics.median(times):.2f} s, {statistics.median(counts) / args.jobs:.1f} "
        f"requests per job ({args.repeat} runs)"
    )


if __name__ == "__main__":
    main()
