"""Volcano's `scheduling.volcano.sh/v1beta1 Queue` and Kubernetes'
`scheduling.k8s.io/v1 PriorityClass`: cluster-scoped objects (stored with namespace `""`)
that the local gang scheduler honours and the operator reads (docs/scheduling.md).

Also the annotations by which a flow tells the scheduler about a vcjob it creates — the
only channel between the flow controller and a scheduler, locally or on a cluster:
`FLOW_CREATED` (its flow's age, `ageFrom: Flow`), `RANK` (its critical-path rank in
seconds, `jobOrder: CriticalPath`) and `HANDOVER` (JSON `{"holdSeconds": N, "need":
{resource: quantity}}`: what its successors need when it ends).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from vcflow.api.clusterscope import ClusterResource
from vcflow.api.meta import WireModel

SCHEDULING_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"
PRIORITY_API_VERSION: Final = "scheduling.k8s.io/v1"

#: the queue every vcjob without one is in; it exists whether or not it is stored
DEFAULT_QUEUE = "default"
#: Volcano's Queue states; only an `Open` queue takes jobs
OPEN, CLOSED, CLOSING, UNKNOWN = "Open", "Closed", "Closing", "Unknown"
WEIGHT_MIN, WEIGHT_MAX = 1, 65535
#: a PriorityClass's value bound (Kubernetes: user classes at most one billion)
PRIORITY_MAX = 1_000_000_000

FLOW_CREATED = "vcflow.io/flow-created"
RANK = "vcflow.io/rank"
HANDOVER = "vcflow.io/handover"


class Guarantee(WireModel):
    resource: dict[str, Any] | None = None


class QueueSpec(WireModel):
    weight: int | None = None
    capability: dict[str, Any] | None = None
    deserved: dict[str, Any] | None = None
    guarantee: Guarantee | None = None
    reclaimable: bool | None = None
    priority: int | None = None
    parent: str | None = None
    dequeue_strategy: str | None = None


class QueueStatus(WireModel):
    state: str | None = None
    #: what the queue's jobs hold (Volcano's queue controller keeps it; its CRD requires it)
    allocated: dict[str, Any] | None = None


class Queue(ClusterResource):
    api_version: Literal["scheduling.volcano.sh/v1beta1"] = SCHEDULING_API_VERSION
    kind: Literal["Queue"] = "Queue"
    spec: QueueSpec | None = None
    status: QueueStatus | None = None

    @property
    def weight(self) -> int:
        """Volcano's default weight is 1."""
        spec = self.spec
        return spec.weight if spec is not None and spec.weight is not None else 1

    @property
    def state(self) -> str:
        """`Open` unless the status says otherwise (Volcano opens a new queue)."""
        status = self.status
        return status.state if status is not None and status.state else OPEN


class PriorityClass(ClusterResource):
    api_version: Literal["scheduling.k8s.io/v1"] = PRIORITY_API_VERSION
    kind: Literal["PriorityClass"] = "PriorityClass"
    value: int = 0
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None


def defaults(obj: object) -> bool:
    """What the API server fills in (the store's defaulter; False: nothing changed): a
    Queue's weight 1 and reclaimable (Volcano's CRD and mutating webhook), a
    PriorityClass's preemptionPolicy PreemptLowerPriority (Kubernetes)."""
    if isinstance(obj, PriorityClass):
        if obj.preemption_policy is not None:
            return False
        obj.preemption_policy = "PreemptLowerPriority"
        return True
    if not isinstance(obj, Queue):
        return False
    spec = obj.spec
    if spec is not None and spec.weight is not None and spec.reclaimable is not None:
        return False
    spec = spec if spec is not None else QueueSpec()
    spec.weight = 1 if spec.weight is None else spec.weight
    spec.reclaimable = True if spec.reclaimable is None else spec.reclaimable
    obj.spec = spec
    return True


#: `spec.schedulingPolicy` values (api.jobflow.SchedulingPolicy)
AGE_FROM_FLOW, AGE_FROM_JOB = "Flow", "Job"
ORDER_CRITICAL_PATH, ORDER_FLOW = "CriticalPath", "FlowOrder"
ADMISSION_HOLD, ADMISSION_IGNORE = "Hold", "Ignore"
