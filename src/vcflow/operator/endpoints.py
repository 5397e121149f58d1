"""The operator's HTTP endpoints, each a `serving.endpoints.Listener` (a stdlib HTTP server
on a thread of its own), which `process` opens and closes: the health port
(`--health-addr`: `/healthz`, `/livez`, `/readyz`, plain HTTP on any address, as kubelet
probes on the pod IP need) and the metrics port (`--metrics-addr`: `/metrics`, on loopback
unless a bearer token and TLS guard it, the rule of `serving.exposure` that `vcflow server`
keeps too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from vcflow.api.errors import InputError
from vcflow.serving import exposure
from vcflow.serving.endpoints import TEXT, Answer, Guard, guard
from vcflow.telemetry.controllers import ControllerMetrics

#: the address flags and their defaults
DEFAULTS = {"--health-addr": "127.0.0.1:8081", "--metrics-addr": "127.0.0.1:8080"}


class Health:
    """What /readyz and the leader gauge read; `process` sets it as it goes.

    Ready means this replica can do its part now: the leader once its controllers made
    their first full resync (every flow and template queued, the watch begun); a standby
    while the API server answered its last lease read within one lease duration (it can take
    over); without leader election, once the controllers resynced."""

    def __init__(self, lease: str) -> None:
        self.lease = lease
        self.leading = False
        self.synced = False
        self.standby_ok: Callable[[], bool] = lambda: False

    def ready(self) -> tuple[bool, str]:
        if self.leading:
            return (True, "leader, synced") if self.synced else (False, "leader, syncing")
        if self.synced:
            return True, "synced"
        if self.standby_ok():
            return True, "standby"
        return False, "not synced"

    def routes(self) -> dict[str, Callable[[], Answer]]:
        """The health port's: nothing but whether the process answers and is ready."""

        def alive() -> Answer:
            return 200, b"ok", TEXT

        def readyz() -> Answer:
            ok, why = self.ready()
            return 200 if ok else 503, why.encode(), TEXT

        return {"/healthz": alive, "/livez": alive, "/readyz": readyz}


class _Leader(Collector):
    def __init__(self, health: Health) -> None:
        self.health = health

    def collect(self) -> Iterable[Metric]:
        gauge = GaugeMetricFamily(
            "leader_election_master_status",
            "1 while this replica holds the lease, else 0 (client-go's).",
            labels=["name"],
        )
        gauge.add_metric([self.health.lease], 1 if self.health.leading else 0)
        yield gauge


class Metrics:
    """`/metrics` (Prometheus): the controllers' series of `telemetry.controllers`, as
    `vcflow server` shows them, and client-go's `leader_election_master_status`."""

    def __init__(self, health: Health) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.controllers = ControllerMetrics(self.registry)
        self.registry.register(_Leader(health))

    def routes(self) -> dict[str, Callable[[], Answer]]:
        return {"/metrics": lambda: (200, generate_latest(self.registry), CONTENT_TYPE_LATEST)}


def served(text: str) -> bool:
    """An address flag's value other than `0` (or empty): off."""
    return text not in ("", "0")


def parse_address(text: str, flag: str = "--metrics-addr") -> tuple[str, int]:
    """`HOST:PORT` (port 0: any free one); InputError naming the flag otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InputError(f"{flag} {text!r}: expected HOST:PORT, e.g. {DEFAULTS[flag]}")
    return host.strip("[]") or "0.0.0.0", int(port)


#: how the metrics port's refusals name its flags
METRICS_FLAGS = exposure.Flags(
    token="--metrics-token-file",
    cert="--metrics-tls-cert",
    key="--metrics-tls-key",
    address="--metrics-addr",
    does="serve /metrics",
)


def metrics_guard(exposed: exposure.Exposure) -> Guard:
    """The metrics port's guard; Refused (one line) unless the host is loopback or the
    token file and the TLS pair are all given and load."""
    return guard(exposed, METRICS_FLAGS)
