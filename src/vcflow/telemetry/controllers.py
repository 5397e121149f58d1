"""The controllers' Prometheus metrics in a registry the caller owns: each sync's duration
by controller, the wait from a flow entry's dependencies being met to its vcjob's creation,
and the work queues' depths — fed by the controller manager through the `Observer` hooks
(`ControllerMetrics.observer`). Used by server/metrics.py and operator/endpoints.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from vcflow.controller.observer import Observer

#: controller and dependency-met wait buckets (seconds)
CONTROL_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

Depths = Callable[[], Mapping[str, int]]


class _QueueDepths(Collector):
    """`vcflow_workqueue_depth` by controller, read at each scrape (none before a manager
    attached)."""

    def __init__(self) -> None:
        self.depths: Depths | None = None

    def collect(self) -> Iterable[Metric]:
        if self.depths is None:
            return
        depth = GaugeMetricFamily(
            "vcflow_workqueue_depth",
            "Keys waiting in a controller's work queue (ready or delayed).",
            labels=["name"],
        )
        for name, value in sorted(self.depths().items()):
            depth.add_metric([name], value)
        yield depth


class _ControllerObserver(Observer):
    def __init__(self, metrics: ControllerMetrics) -> None:
        self.metrics = metrics

    def attach(self, queue_depths: Depths) -> None:
        self.metrics.queues.depths = queue_depths

    def synced(self, controller: str, seconds: float) -> None:
        self.metrics.syncs.labels(controller).observe(seconds)

    def vcjob_created(self, seconds_since_met: float) -> None:
        self.metrics.waits.observe(seconds_since_met)


class ControllerMetrics:
    """The controllers' series in `registry`; give `observer` to the `Manager`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.syncs = Histogram(
            "vcflow_reconcile_duration_seconds",
            "Durations of one controller sync (one key), by controller.",
            ["controller"],
            buckets=CONTROL_BUCKETS,
            registry=registry,
        )
        self.waits = Histogram(
            "vcflow_dependency_met_to_vcjob_created_seconds",
            "Wait from a flow entry's dependencies being met (its flow first seen, for an "
            "entry without any) to its vcjob's creation.",
            buckets=CONTROL_BUCKETS,
            registry=registry,
        )
        self.queues = _QueueDepths()
        registry.register(self.queues)
        #: the manager reports its syncs, dependency waits and queue depths here
        self.observer: Observer = _ControllerObserver(self)
