"""`vcflow operator`'s process: bind the health and metrics ports (`endpoints`: the metrics
port's guard checked first), read the cluster's config (in-cluster in a pod, else the
kubeconfig), serve the ports, win the Lease (`election`), then turn the JobFlow and
JobTemplate controllers (`controller.manager.Manager`, as embedded) over `KubeStore` until
told to stop; Volcano's job controller runs the vcjobs they create. Beside them, unless
`label_pods` is off, the pod labeller (`podlabels`) puts the flows' labels on those
vcjobs' pods, and `podgroups` copies why vc-scheduler cannot place a waiting vcjob onto
it, for the flow's status.

While leading, a renewer thread renews the Lease every retry period; when it cannot within
the renew deadline it gives leadership up the way client-go's users do: the process exits
at once with code 1, before another write (the next replica resyncs from the API). A stop
(`stopping`, set on SIGTERM/SIGINT by `cli.operator`) lets the controllers finish their
burst, releases the Lease and returns 0. Called by `cli.operator`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vcflow.api.errors import StoreError
from vcflow.api.platform import Platform
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.controller.prober import SocketProber
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.kubestore.client import DEFAULT_TIMEOUT
from vcflow.operator import schedconf
from vcflow.operator.election import Elector, Timing
from vcflow.operator.endpoints import Health, Metrics, metrics_guard, parse_address, served
from vcflow.operator.limits import DEFAULT_BURST, DEFAULT_QPS, PHASE_INTERVAL, TEMPLATE_DELAY
from vcflow.operator.podgroups import PodGroupNotes
from vcflow.operator.podhosts import PodHosts
from vcflow.operator.podlabels import PodLabeler, jobs_of
from vcflow.reconcile import schedmode, slatime
from vcflow.reconcile.schedmode import Mode
from vcflow.serving.endpoints import Listener
from vcflow.serving.exposure import Exposure

PROCESS = "operator"
log = logging.getLogger(f"vcflow.{PROCESS}")
IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
#: seconds between two tries of the controllers after the API server failed them
RESTART_WAIT = 1.0
#: the process's exit code when it lost the Lease
LOST = 1
#: the vcjobs of the flows synced together are created, and a flush's statuses written,
#: this many at a time
CREATE_WORKERS = 8
#: ready flows synced together
SYNC_BATCH = 8


@dataclass(frozen=True)
class Settings:
    kubeconfig: str | None = None
    context: str | None = None
    namespaces: tuple[str, ...] = ()
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    health_addr: str = "127.0.0.1:8081"  # "" or "0": no health port
    metrics_addr: str = "127.0.0.1:8080"  # "" or "0": no metrics port
    metrics_token_file: Path | None = None
    metrics_tls_cert: Path | None = None
    metrics_tls_key: Path | None = None
    leader_elect: bool = True
    lease_name: str = "vcflow-operator"
    lease_namespace: str | None = None  # None: the pod's namespace in a cluster, else default
    timing: Timing = field(default_factory=Timing)
    poll: float = 0.5
    label_pods: bool = True  # the flows' labels onto their vcjobs' pods (`podlabels`)
    scheduling_mode: Mode = Mode.AUTO  # (`schedconf`; docs/scheduling.md, On a cluster)
    sla: slatime.Policy = field(default_factory=slatime.Policy)
    ladder: schedmode.Ladder | None = None  # --priority-ladder, --ladder-step


def in_cluster(settings: Settings) -> bool:
    """In a pod, and neither --kubeconfig nor --context given."""
    given = settings.kubeconfig is not None or settings.context is not None
    return not given and bool(os.environ.get(IN_CLUSTER_ENV))


def connect(
    settings: Settings, *, timeout: float | None = None, limited: bool = True
) -> KubeClient:
    """A client of the cluster: the pod's service account when run in a pod without
    --kubeconfig or --context, else the kubeconfig (default: $KUBECONFIG or ~/.kube/config);
    with the QPS/burst limit unless not `limited`."""
    qps, burst = (settings.qps, settings.burst) if limited else (0.0, 1)
    seconds = DEFAULT_TIMEOUT if timeout is None else timeout
    if in_cluster(settings):
        return KubeClient.in_cluster(timeout=seconds, qps=qps, burst=burst)
    return KubeClient.from_kubeconfig(
        settings.kubeconfig, context=settings.context, timeout=seconds, qps=qps, burst=burst
    )


def lease_namespace(settings: Settings) -> str:
    if settings.lease_namespace:
        return settings.lease_namespace
    if in_cluster(settings):
        try:
            with open(SERVICE_ACCOUNT_NAMESPACE) as text:
                return text.read().strip() or "default"
        except OSError:
            pass
    return "default"


def identity() -> str:
    """client-go's usual holder identity: `hostname_uuid`."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class _Renewer:
    """Renews the Lease every retry period on a thread of its own; calls `on_lost` once it
    could not within the renew deadline."""

    def __init__(self, elector: Elector, on_lost: Callable[[], object]) -> None:
        self.elector = elector
        self.on_lost = on_lost
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="vcflow-lease", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=self.elector.timing.renew_deadline)

    def _loop(self) -> None:
        timing = self.elector.timing
        while not self.done.wait(timing.retry_period):
            if self.elector.try_acquire_or_renew():
                continue
            if self.elector.lost() and not self.done.is_set():
                self.on_lost()
                return


def _exit_lost(elector: Elector) -> None:
    log.error(
        "leader election: lost lease %s/%s (not renewed within %gs): exiting",
        elector.namespace,
        elector.name,
        elector.timing.renew_deadline,
    )
    logging.shutdown()
    os._exit(LOST)  # (no write after losing the lease: the new leader resyncs)


def listen(settings: Settings, health: Health, metrics: Metrics) -> list[Listener]:
    """The health and metrics ports, bound but not serving yet (`serve`); Refused (nothing
    left open) if the metrics port's guard refuses the address, its files do not load, or a
    port is taken."""
    guard = None
    if served(settings.metrics_addr):
        host = parse_address(settings.metrics_addr)[0]
        guard = metrics_guard(
            Exposure(
                host,
                settings.metrics_token_file,
                settings.metrics_tls_cert,
                settings.metrics_tls_key,
            )
        )
    opened: list[Listener] = []
    try:
        if served(settings.health_addr):
            address = parse_address(settings.health_addr, "--health-addr")
            opened.append(Listener("--health-addr", address, health.routes(), process=PROCESS))
        if guard is not None:
            address = parse_address(settings.metrics_addr)
            routes = metrics.routes()
            opened.append(Listener("--metrics-addr", address, routes, guard, PROCESS))
    except BaseException:
        _unbind(opened)
        raise
    return opened


def _unbind(bound: list[Listener]) -> None:
    for listener in bound:
        listener.server.server_close()


def serve(listeners: list[Listener]) -> None:
    """Start the bound ports, each saying where it serves."""
    for listener in listeners:
        listener.start()
        log.info("serving %s on %s", listener.paths, listener.url)


def run(settings: Settings, stopping: threading.Event) -> int:
    """Run the operator until `stopping` is set (see the module docstring); the exit code."""
    health = Health(settings.lease_name)
    metrics = Metrics(health)
    listeners = listen(settings, health, metrics)  # (its flags' refusals come first)
    try:
        client = connect(settings)  # (a kubeconfig that does not load: its one line alone)
    except BaseException:
        _unbind(listeners)
        raise
    serve(listeners)
    try:
        served_metrics = metrics if served(settings.metrics_addr) else None
        return _run(settings, stopping, client, health, served_metrics)
    finally:
        for listener in listeners:
            listener.close()


def _run(
    settings: Settings,
    stopping: threading.Event,
    client: KubeClient,
    health: Health,
    metrics: Metrics | None,
) -> int:
    # reads of the watched kinds from the informer's cache, Events sent in the background;
    # the controllers see only the namespaces given (none: all)
    store = KubeStore(
        client,
        cached_reads=True,
        async_events=True,
        namespaces=settings.namespaces,
    )
    lease_store: KubeStore | None = None
    elector: Elector | None = None
    renewer: _Renewer | None = None
    try:
        if settings.leader_elect:
            # (a client of its own, unlimited: renewals never queue behind the controllers)
            timeout = max(1.0, settings.timing.renew_deadline / 2)
            lease_store = KubeStore(connect(settings, timeout=timeout, limited=False))
            elector = Elector(
                lease_store,
                lease_namespace(settings),
                settings.lease_name,
                identity(),
                settings.timing,
            )
            health.standby_ok = _answering(elector)
            log.info(
                "leader election: %s is a candidate for lease %s/%s",
                elector.identity,
                elector.namespace,
                elector.name,
            )
            if not elector.acquire(stopping.is_set, stopping.wait):
                return 0
            health.leading = True
            lost_with = elector
            renewer = _Renewer(elector, lambda: _exit_lost(lost_with))
            renewer.start()
        mode = schedconf.mode(
            store.client, settings.scheduling_mode, ladder=settings.ladder is not None
        )
        options = ControllerOptions(
            prober=SocketProber(hosts=PodHosts(store)),
            observer=metrics.controllers.observer if metrics is not None else None,
            create_workers=CREATE_WORKERS,
            sync_batch=SYNC_BATCH,
            platform=Platform.CLUSTER,  # PodHosts: each check goes to the pods' own IPs
            phase_interval=PHASE_INTERVAL,
            template_delay=TEMPLATE_DELAY,
            sla=settings.sla if mode is Mode.SLA else None,
            ladder=settings.ladder if mode is Mode.PRIORITY else None,
        )
        manager = Manager(store, options=options)
        labeler = None
        if settings.label_pods:
            # (the store's client: its QPS limit; its cache: the vcjobs)
            labeler = PodLabeler(store.client, jobs_of(store), settings.namespaces)
            labeler.start()
        # why vc-scheduler cannot place a waiting vcjob, from its PodGroup into the flow
        notes = PodGroupNotes(store.client, settings.namespaces)
        notes.start()
        try:
            _turn(manager, stopping, health)
        finally:
            notes.stop()
            if labeler is not None:
                labeler.stop()  # (before the Lease is released: no write after it)
            manager.flows.close()
        return 0
    finally:
        if renewer is not None:
            renewer.stop()
        if elector is not None and elector.leading:
            elector.release()
        health.leading = False
        store.close()
        if lease_store is not None:
            lease_store.close()


def _answering(elector: Elector) -> Callable[[], bool]:
    def check() -> bool:
        at = elector.answered_at
        return at is not None and time.monotonic() - at <= elector.timing.lease_duration

    return check


def _turn(manager: Manager, stopping: threading.Event, health: Health) -> None:
    """The controllers until `stopping`; an API server failing them (unreachable, 5xx) is
    waited out and the controllers resync, as a restart would."""
    while not stopping.is_set():
        try:
            manager.start()
            health.synced = True
            manager.run(stopping.is_set)
            return
        except StoreError as exc:
            health.synced = False
            log.warning("controllers: %s; resyncing in %gs", exc, RESTART_WAIT)
            stopping.wait(RESTART_WAIT)
