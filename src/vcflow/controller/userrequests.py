"""What a user asks of a flow — stop it, retry it, resubmit it (docs/flow-features.md §5) —
as the store writes the JobFlow controller carries out: the one implementation behind the
CLI verbs `vcflow stop|retry|resubmit jobflow` and the dashboard's buttons, so both refuse
the same flows with the same words and write the same requests.

- stop sets the annotation `vcflow.io/stop` (when it was asked, RFC 3339), once: the
  controller deletes the flow's vcjobs and ends it Failed;
- retry sets `vcflow.io/retry` (a JSON request with a unique id) and lifts `vcflow.io/stop`
  in one update of a Failed flow;
- resubmit creates a new JobFlow with the same spec, annotated `vcflow.io/resubmitted-from`.

Each write is one update or create through the `Store` (embedded or the Kubernetes API's);
an update another writer beat is read and made again (ATTEMPTS times). Errors are
`VcflowError`s whose text is what the CLI prints (kubectl's words where it has them).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from vcflow.api import arguments as flowargs
from vcflow.api import clock, names
from vcflow.api.errors import AlreadyExists, Conflict, NotFound, VcflowError
from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import ObjectMeta
from vcflow.api.phases import FINISHED_JOB_PHASES, FlowPhase
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi.resources import JOBFLOWS
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile.flow import RETRY_ANNOTATION, STOP_ANNOTATION, RetryRequest
from vcflow.store.base import Store

RESUBMITTED_FROM = "vcflow.io/resubmitted-from"
#: vcflow's requests to the controller, not copied to a resubmitted flow
REQUESTS = (STOP_ANNOTATION, RETRY_ANNOTATION)
#: re-reads after a concurrent write (Conflict) before giving up
ATTEMPTS = 5


class Refused(VcflowError):
    """A request that would change nothing or that the flow's phase does not allow (the
    dashboard answers 409)."""


def ref(name: str) -> str:
    """`jobflow.flow.volcano.sh/NAME`, as kubectl prints a flow it acted on."""
    return f"{JOBFLOWS.singular}.{JOBFLOWS.group}/{name}"


def not_found(name: str) -> NotFound:
    return NotFound(
        f'Error from server (NotFound): {JOBFLOWS.plural}.{JOBFLOWS.group} "{name}" not found'
    )


def get(store: Store, namespace: str, name: str) -> JobFlow:
    """The flow; NotFound in kubectl's words."""
    try:
        return store.get(JobFlow, namespace, name)
    except NotFound:
        raise not_found(name) from None


# --- stop --------------------------------------------------------------------------------


def nothing_to_stop(store: Store, flow: JobFlow) -> str:
    """Why stopping `flow` would change nothing, or `""`: a flow that Succeed, or one that
    Failed with none of its vcjobs left unfinished (a Failed flow's running jobs are what a
    stop is for: it deletes them)."""
    said = ref(flow.name)
    if flow.phase == FlowPhase.SUCCEED:
        return f"{said} has already finished (Succeed): there is nothing to stop"
    if flow.phase == FlowPhase.FAILED and not _unfinished_jobs(store, flow):
        return (
            f"{said} has already finished (Failed) and none of its vcjobs is unfinished: "
            "there is nothing to stop"
        )
    return ""


def stop(store: Store, flow: JobFlow, now: datetime) -> str:
    """Ask the controller to stop `flow` (once: a stop asked before keeps its time); the
    line saying so. Refused (its line) when stopping it would change nothing."""
    why = nothing_to_stop(store, flow)
    if why:
        raise Refused(why)
    if STOP_ANNOTATION not in flow.metadata.annotations:
        annotate(store, flow.namespace, flow.name, {STOP_ANNOTATION: clock.rfc3339(now)})
    return f"{ref(flow.name)} stopping"


def _unfinished_jobs(store: Store, flow: JobFlow) -> list[str]:
    selector = {names.LABEL_CREATED_BY_FLOW: names.created_by_value(flow.namespace, flow.name)}
    jobs = store.list(VCJob, flow.namespace, label_selector=selector)
    return [
        job.name
        for job in jobs
        if jobbuild.is_owned_by(job, flow) and job.phase not in FINISHED_JOB_PHASES
    ]


# --- retry -------------------------------------------------------------------------------


def retry(
    store: Store,
    namespace: str,
    name: str,
    now: datetime,
    *,
    restart_successful: bool = False,
    entries: Sequence[str] | None = None,
) -> str:
    """Run a Failed flow again from where it failed (with `restart_successful`, also its
    Completed entries: `entries`, else all); the line saying so. Refused for a flow that
    is not Failed or names no such entry."""
    flow = get(store, namespace, name)
    said = ref(name)
    if flow.phase != FlowPhase.FAILED:
        raise Refused(
            f"{said} is {flow.phase or 'new'}: only a Failed flow is retried "
            f"(vcflow resubmit jobflow {name} runs it again as a new flow)"
        )
    have = [e.name for e in flow.flows]
    for entry in entries or ():
        if entry not in have:
            raise Refused(f'{said} has no entry "{entry}" (its entries: {", ".join(have)})')
    request = RetryRequest(
        uuid.uuid4().hex[:12], now, tuple(entries) if entries else None, restart_successful
    )
    annotate(
        store,
        namespace,
        name,
        {RETRY_ANNOTATION: request.to_annotation(), STOP_ANNOTATION: None},
    )
    return f"{said} retried"


# --- resubmit ----------------------------------------------------------------------------


def resubmit(
    store: Store,
    namespace: str,
    name: str,
    *,
    new_name: str | None = None,
    arguments: Mapping[str, str] | None = None,
) -> JobFlow:
    """A new flow with `name`'s spec (`new_name`, else `<name>-` and five random
    characters; `arguments` change values in the copy), created; `name` is left as it is."""
    flow = get(store, namespace, name)
    meta = flow.metadata
    annotations = {k: v for k, v in meta.annotations.items() if k not in REQUESTS}
    annotations[RESUBMITTED_FROM] = name
    copy = JobFlow(
        metadata=ObjectMeta(
            name=new_name or "",
            generate_name=None if new_name else f"{name}-",
            namespace=namespace,
            labels=dict(meta.labels),
            annotations=annotations,
        ),
        spec=flow.spec.clone() if flow.spec is not None else None,
    )
    if arguments:
        flowargs.give([copy], dict(arguments))
    try:
        return store.create(copy)
    except AlreadyExists:
        raise AlreadyExists(
            f"Error from server (AlreadyExists): {JOBFLOWS.singular}.{JOBFLOWS.group} "
            f'"{new_name or ""}" already exists'
        ) from None


# --- the write ---------------------------------------------------------------------------


def annotate(store: Store, namespace: str, name: str, changes: Mapping[str, str | None]) -> None:
    """Set the annotations `changes` names (None: remove it) with one update of the flow,
    read again and made again when another writer got there first."""
    for attempt in range(ATTEMPTS):
        flow = get(store, namespace, name)
        annotations = dict(flow.metadata.annotations)
        for key, value in changes.items():
            if value is None:
                annotations.pop(key, None)
            else:
                annotations[key] = value
        flow.metadata.annotations = annotations
        try:
            store.update(flow)
        except Conflict:
            if attempt == ATTEMPTS - 1:
                raise
            continue
        return
