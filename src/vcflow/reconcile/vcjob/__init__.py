"""The local vcjob runtime as pure decisions: Volcano's job controller (reference
`volcano-vcjob.md` §4–§7, §11), its gang scheduler on one machine (§10) and the kubelet's
part of a pod's life (§9), with the choices of docs/compatibility.md "The local vcjob runtime".

Nothing here does I/O or reads a clock. The runtime shell (`vcflow.runtime.executor`, which
the conformance runner drives too, with a simulated kubelet) calls these functions; this is
the contract between them:

State a shell keeps per job, besides the stored vcjob and its pods: the PodGroup state
(`model.Group`), the pending delayed actions (`model.DelayedAction` by pod name), and the
scheduler's latest `unschedulable` verdict. Per job, one request at a time, in arrival
order:

1. Turn each observation into a `Request` with `events` (job created/updated, pod
   created/updated/deleted, a Command, a delayed action due, the PodGroup admitted or its
   verdict changed) and queue it for its job.
2. `lifecycle.handle(JobContext(job, pods, group, delayed, unschedulable), request, now)`
   returns a `Decision`. Apply it: mark each `delete`d pod with `pods.marked_out_of_sync`
   and delete it; create the `create`d pods; write `status` when it changed (a phase change
   is a job update: queue `events.job_updated`); keep `group` and `delayed`; record
   `events`. Each pod change is observed again through step 1.
3. When no request is queued: fire due timers — a `DelayedAction.due` (queue
   `events.delayed_due`), `kubelet.deadline(pod)` (the pod becomes
   `kubelet.exceed_deadline`), `ttl.expires_at(job)` (delete the job and its pods); remove
   pods whose deletion has finished; then run `gang.schedule(...)`: set the admitted jobs'
   group to ADMITTED and queue `events.group_changed()`, bind each placed pod with
   `kubelet.place`, and keep each job's `unschedulable` verdict (queue a plain sync when
   it changed).
4. Processes report through `kubelet.start` and `kubelet.exit_container`.

A vcjob is stored with `spec.with_defaults` applied (Volcano's mutating webhook). The
controller's own restarts are delete-then-create with the same pod name; in-place container
restarts are the kubelet's (`kubelet.exit_container`) and never reach the controller as
restarts.
"""

from vcflow.reconcile.vcjob.gang import GangJob, Placement, min_resources, schedule
from vcflow.reconcile.vcjob.lifecycle import dispatch, handle
from vcflow.reconcile.vcjob.model import (
    Decision,
    DelayedAction,
    Group,
    JobContext,
    JobEvent,
    Request,
)
from vcflow.reconcile.vcjob.spec import Shape, shape, with_defaults

__all__ = [
    "Decision",
    "DelayedAction",
    "GangJob",
    "Group",
    "JobContext",
    "JobEvent",
    "Placement",
    "Request",
    "Shape",
    "dispatch",
    "handle",
    "min_resources",
    "schedule",
    "shape",
    "with_defaults",
]
