"""The server's Prometheus metrics, in a registry of each app's own (`Metrics`): flows, jobs
and running pods by phase (the store's changes since the last scrape), the controllers' sync
durations, work-queue depths and dependency-met → vcjob-created waits (`Metrics.observer`,
which the controller manager calls; `telemetry.controllers`, shared with the operator), and
the API's request durations by verb, resource and code (`Metrics.middleware`, ASGI). The
app factory mounts `route()` at `/metrics`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client import Counter as CounterMetric
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.controller.observer import Observer
from vcflow.kubeapi import resources
from vcflow.store.base import Cursor, EventType, Expired, Store
from vcflow.telemetry.controllers import ControllerMetrics

#: API latency buckets (seconds): kube-apiserver's, up to one minute
API_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 5, 10, 60)
#: the methods a `verb` label names as they are; any other is OTHER (a client chooses the
#: method before it is authenticated, so a label of it as sent would grow without bound)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT"})
OTHER = "OTHER"


class _StoreCollector(Collector):
    """Flows and vcjobs by phase, running pods: counted from `_Phases` at each scrape."""

    def __init__(self, store: Store) -> None:
        self.phases = _Phases(store)

    def collect(self) -> Iterable[Metric]:
        counts = self.phases.counts()
        flows = GaugeMetricFamily(
            "vcflow_jobflows", "JobFlows by phase (status.state.phase).", labels=["phase"]
        )
        for phase, count in sorted(counts[JobFlow].items()):
            flows.add_metric([phase], count)
        jobs = GaugeMetricFamily(
            "vcflow_vcjobs", "Volcano jobs by phase (status.state.phase).", labels=["phase"]
        )
        for phase, count in sorted(counts[VCJob].items()):
            jobs.add_metric([phase], count)
        running = counts[Pod]["Running"]
        pods = GaugeMetricFamily("vcflow_pods_running", "Pods in phase Running.", value=running)
        yield from (flows, jobs, pods)


_COUNTED: tuple[type[Resource], ...] = (JobFlow, VCJob, Pod)
_Key = tuple[type[Resource], str, str]
_REBUILD_MIN = 1_000  # changes a scrape reads rather than all objects, however few they are


class _Phases:
    """The phase of every flow, vcjob and pod, kept from the store's event log: a scrape
    reads only the changes since the last one (the last event of each object, its JSON
    without the model), and every object only at the first scrape, when the log no longer
    reaches back to the last (Expired), or when more writes than objects came since (then
    that is cheaper): a scrape costs at most about one read of each object. Scrapes take
    turns."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = threading.Lock()
        self.since: Cursor | None = None
        self.phases: dict[_Key, str] = {}

    def counts(self) -> dict[type[Resource], Counter[str]]:
        with self.lock:
            self._catch_up()
            found: dict[type[Resource], Counter[str]] = {kind: Counter() for kind in _COUNTED}
            for (kind, _, _), phase in self.phases.items():
                found[kind][phase] += 1
            return found

    def _catch_up(self) -> None:
        if self.since is not None and self._behind() > max(len(self.phases), _REBUILD_MIN):
            self.since = None  # (more changes to read than objects: reading them is cheaper)
        if self.since is not None:
            try:
                events, self.since = self.store.poll_events(self.since, _COUNTED)
            except Expired:
                self.since = None
            else:
                last = {(e.model, e.namespace, e.name): e for e in events}
                for key, event in last.items():
                    if event.type is EventType.DELETED:
                        self.phases.pop(key, None)
                    else:
                        self.phases[key] = _phase(key[0], json.loads(event.raw))
                return
        since = Cursor.now(self.store)  # (a change after it is read again: no loss)
        self.phases = {
            (kind, obj.namespace, obj.name): _model_phase(obj)
            for kind in _COUNTED
            for obj in self.store.list(kind)
        }
        self.since = since

    def _behind(self) -> int:
        return self.store.resource_version() - (self.since.rv if self.since else 0)


def _model_phase(obj: Resource) -> str:
    if isinstance(obj, Pod):
        return (obj.status.phase or "") if obj.status is not None else ""
    return (obj.phase if isinstance(obj, JobFlow | VCJob) else "") or "Pending"


def _phase(kind: type[Resource], data: dict[str, Any]) -> str:
    """A flow's or vcjob's `status.state.phase` ("Pending" when none), a pod's `status.phase`."""
    status = data.get("status")
    status = status if isinstance(status, dict) else {}
    if kind is Pod:
        phase = status.get("phase")
        return phase if isinstance(phase, str) else ""
    state = status.get("state")
    phase = state.get("phase") if isinstance(state, dict) else None
    return phase if isinstance(phase, str) and phase else "Pending"


def request_labels(method: str, path: str, query: str) -> tuple[str, str, bool]:
    """(verb, resource, long-running) of a request, as kube-apiserver labels it: verb
    GET, LIST, WATCH, POST, PUT, PATCH, DELETE, DELETECOLLECTION; resource the plural
    (`jobflows`, `pods/log` for a subresource) of a served resource, "" for every other
    path (discovery, /openapi, /metrics), so a label takes a bounded set of values; a
    method outside the HTTP standard's is OTHER."""
    if method not in _METHODS:
        return OTHER, "", False
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return method, "", False
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    resource = resources.find(group, version, rest[0]) if rest else None
    if resource is None:
        return method, "", False
    named = len(rest) >= 2
    sub = rest[2] if len(rest) >= 3 and rest[2] in resource.subresources else ""
    label = f"{resource.plural}/{sub}" if sub else resource.plural
    params = {k: v for k, _, v in (p.partition("=") for p in query.split("&"))}
    watching = params.get("watch") in ("true", "1")
    if method == "GET":
        verb = "WATCH" if watching else "GET" if named else "LIST"
        return verb, label, watching or (sub == "log" and params.get("follow") == "true")
    if method == "DELETE":
        return ("DELETE" if named else "DELETECOLLECTION"), label, False
    return method, label, False


class Metrics:
    """One app's metrics and their registry; several apps (tests) never share one."""

    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._store = _StoreCollector(store)
        self.registry.register(self._store)
        self.requests = Histogram(
            "vcflow_api_request_duration_seconds",
            "API request durations by verb, resource and HTTP code; watches and followed "
            "logs, which last as long as the client stays, are only counted "
            "(vcflow_api_requests_total).",
            ["verb", "resource", "code"],
            buckets=API_BUCKETS,
            registry=self.registry,
        )
        self.request_count = CounterMetric(
            "vcflow_api_requests",
            "API requests by verb, resource and HTTP code.",
            ["verb", "resource", "code"],
            registry=self.registry,
        )
        self.controllers = ControllerMetrics(self.registry)
        #: give this to the controller manager (`ControllerOptions.observer`): it reports its
        #: syncs, dependency waits and queue depths here (no manager: no depths shown)
        self.observer: Observer = self.controllers.observer

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def route(self) -> Route:
        async def metrics(request: Request) -> Response:
            body = await run_in_threadpool(self.exposition)  # (reads the store)
            return Response(body, media_type=CONTENT_TYPE_LATEST)

        return Route("/metrics", metrics, methods=["GET"])

    def middleware(self) -> Middleware:
        """The middleware that times each HTTP request (outermost, so it sees every
        answer, a 401 included)."""
        return Middleware(_Timing, metrics=self)


class _Timing:
    """Pure ASGI (a streamed watch or log passes through untouched)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        code: dict[str, Any] = {"status": 500}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                code["status"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            query = scope.get("query_string", b"").decode("latin-1")
            verb, resource, long_running = request_labels(scope["method"], scope["path"], query)
            labels = (verb, resource, str(code["status"]))
            self.metrics.request_count.labels(*labels).inc()
            if not long_running:
                self.metrics.requests.labels(*labels).observe(time.perf_counter() - began)
