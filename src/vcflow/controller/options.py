"""How the controllers work: the tuning options a caller picks (`vcflow run`, the server,
the operator) and where the pods run. One value taken by `Manager` and handed to
`FlowController` whole, rather than each option threaded through one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcflow.api.platform import Platform
from vcflow.controller.observer import Observer
from vcflow.controller.prober import Prober
from vcflow.reconcile.schedmode import Ladder
from vcflow.reconcile.slatime import Policy as SlaPolicy
from vcflow.reconcile.vcjob.resources import UNLIMITED, Capacity

#: Seconds of wall time a dirty status waits at most during a burst (unless the last flush
#: took more than a fiftieth of that: then 50x its cost). A new phase does not wait.
STATUS_INTERVAL = 0.2


@dataclass(frozen=True)
class ControllerOptions:
    #: a flow sync creates at most that many vcjobs, and the flow's next sync — at the next
    #: `settle` — goes on (None: all that are ready). `vcflow run` settles its runtime in
    #: between, so the pods of a wide flow's first vcjobs run while the rest are created
    create_batch: int | None = None
    #: runs the flows' probe checks (None: real sockets, `SocketProber`)
    prober: Prober | None = None
    #: told each sync's duration and each vcjob's wait since its dependencies were met
    #: (the server's metrics); None: a new `Observer`, which keeps nothing
    observer: Observer | None = None
    #: the vcjobs of one flow sync are created that many at a time (a store whose calls may
    #: run on several threads: the operator's KubeStore)
    create_workers: int = 1
    #: up to that many ready flows are synced together, their vcjob creates posted at
    #: once (`create_workers` at a time): a burst of one-job flows is not one round trip
    #: after another. Both apply to a store without transactions only (the operator's
    #: KubeStore): an embedded store syncs one flow at a time, its calls one by one
    sync_batch: int = 1
    #: where the pods run: on `Platform.CLUSTER` (the operator) the prober reaches each pod
    #: at its own IP, so jobs with their own network (svc plugin) are probed too
    platform: Platform = Platform.LOCAL
    #: the least seconds a flow's status waits to be written during a burst
    #: (`FlowController`)
    status_interval: float = STATUS_INTERVAL
    #: seconds a flow's new phase waits to be written, so that its next changes ride
    #: along (`statusdue`; 0: at once, as `vcflow run` and the server write it)
    phase_interval: float = 0.0
    #: seconds a template's `jobDependsOnList` waits to be written after one of its vcjobs
    #: was created or deleted, so that one write carries many (`TemplateController`; 0: at
    #: once)
    template_delay: float = 0.0
    #: what this machine has, for `admission: Hold` (`vcflow run --capacity`, the server's
    #: host): a flow an entry of which can never fit it is held; UNLIMITED (the operator):
    #: no machine to check, only the Queues
    capacity: Capacity = UNLIMITED
    #: the operator's `sla` scheduling mode: each vcjob gets `volcano.sh/sla-waiting-time`
    #: at its create (`controller.deadlines`; None: no annotation, as every other mode)
    sla: SlaPolicy | None = None
    #: the operator's `priority` mode: vcjobs climb this ladder as their flow ages
    #: (`controller.ladder`; None: their class is the flow's, as built)
    ladder: Ladder | None = None
