"""Where a probe of a flow's target connects on a cluster: the IPs (`status.podIP`) of the
running pods of the target's vcjob task, found by the labels Volcano's job controller puts
on them (`volcano.sh/job-name`, `volcano.sh/task-spec`). The operator gives this to the
controller's `SocketProber`; embedded, probes keep connecting to the host."""

from __future__ import annotations

from vcflow.api.errors import VcflowError
from vcflow.api.phases import PodPhase
from vcflow.api.pod import Pod
from vcflow.reconcile.probes import Check
from vcflow.reconcile.vcjob.pods import JOB_NAME, TASK_SPEC
from vcflow.store.base import Store


class PodHosts:
    """`HostResolver` over the store's pods."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def hosts(self, check: Check) -> list[str]:
        selector = {JOB_NAME: check.job, **({TASK_SPEC: check.task} if check.task else {})}
        try:
            pods = self.store.list(Pod, check.namespace, selector)
        except VcflowError:
            return []
        found = []
        for pod in pods:
            status = pod.to_dict().get("status") or {}
            ip = status.get("podIP")
            if status.get("phase") == PodPhase.RUNNING and isinstance(ip, str) and ip:
                found.append(ip)
        return found
