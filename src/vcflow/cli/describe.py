"""`vcflow describe KIND [NAME...]`: objects for people, as kubectl describe shows them.

Name, namespace, labels, annotations, kind and metadata; a `Spec:` summary and `Status:`
(`sections.py`: for flows the per-job table from `status.conditions`, Waiting entries with
their reason and message — a created vcjob's own scheduler reason, and a CriticalPath flow's
ranks, `reconcile.flowwaits` — and the job lists, every record of a compact status expanded; the
critical path and the ETA, `etatext`);
then `Events:` — the stored Events whose involvedObject is this object (same kind, name and
uid). A failed vcjob, alone or in a flow's per-job table, says why it failed: the container
that failed it, as `vcflow run`'s closing table says it (`local.result.failure_of`: its
pods' statuses, through a server too, else the attempts kept of its deleted pods). Reads
only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from vcflow.api import ages, clock, names
from vcflow.api.errors import NotFound
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.cli import configsections, kinds, options, podsections, remote, schedsections, sections
from vcflow.cli.sections import NONE, Text
from vcflow.local import result
from vcflow.store import Store


def describe(
    ctx: typer.Context,
    kind: options.KindArgument,
    names: Annotated[list[str] | None, typer.Argument(metavar="NAME")] = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Show objects in detail: spec summary, status (per-job table for flows) and events.

    Every object of the kind in the namespace when no NAME is given. Reads only.
    """
    resolved = kinds.resolve(kind)
    now = clock.SystemClock().now()
    state_dir = options.state_dir(ctx)
    with remote.reading(ctx) as store:
        objects, missing = (
            resolved.find(store, namespace, names)
            if names
            else (list(store.list(resolved.model, namespace)), [])
        )
        texts = [
            render(obj, _events(store, obj), now, _jobs(store, obj), _why(store, state_dir, obj))
            for obj in objects
        ]
    if texts:
        typer.echo("\n\n".join(text.rstrip("\n") for text in texts))
    if not objects and not names:
        where = f" in {namespace} namespace" if resolved.namespaced else ""
        typer.echo(f"No resources found{where}.", err=True)
    if missing:
        raise NotFound("\n".join(str(resolved.not_found(name)) for name in missing))


def _events(store: Store, obj: Resource) -> list[Event]:
    """Events about `obj` (not about an earlier object of the same name), oldest first."""
    uid = obj.metadata.uid
    found = [
        event
        for event in store.list(Event, obj.namespace)
        if event.involved_object.kind == obj.kind
        and event.involved_object.name == obj.name
        and (not uid or not event.involved_object.uid or event.involved_object.uid == uid)
    ]
    return sorted(found, key=_event_order)


def _jobs(store: Store, obj: Resource) -> list[VCJob]:
    """A flow's vcjobs (by its label), for why a waiting one waits; none for other kinds."""
    if not isinstance(obj, JobFlow):
        return []
    selector = {names.LABEL_CREATED_BY_FLOW: names.created_by_value(obj.namespace, obj.name)}
    return store.list(VCJob, obj.namespace, selector)


def _why(store: Store, state_dir: Path, obj: Resource) -> Callable[[str], str]:
    """Why a failed vcjob of `obj`'s namespace failed, as `vcflow run`'s table says it
    (`exit code 3 (Error): pod P, container C`), or the command that terminated it
    (`TerminateJob command`); "" when neither is known."""

    def why(job: str) -> str:
        found = result.failure_of(store, state_dir, obj.namespace, job, tail=0)
        return result.ended_by(store, obj.namespace, job) if found is None else str(found)

    return why


def _event_order(event: Event) -> tuple[str, int]:
    """By time, then by when it was stored (timestamps have whole seconds)."""
    rv = event.metadata.resource_version
    return (event.last_seen() or "", int(rv) if rv.isdigit() else 0)


def render(
    obj: Resource,
    events: Sequence[Event],
    now: datetime,
    jobs: Sequence[VCJob] = (),
    why: Callable[[str], str] = sections.unknown,
) -> str:
    """The whole description of one object (`jobs`: a flow's vcjobs; `why`: why the
    failed vcjob of a name failed)."""
    text = Text()
    _header(obj, text, now)
    if isinstance(obj, JobFlow):
        sections.flow_sections(obj, text, now, jobs, why)
    elif isinstance(obj, VCJob):
        sections.vcjob_sections(obj, text, why)
    elif isinstance(obj, JobTemplate):
        sections.template_sections(obj, text)
    elif isinstance(obj, Pod):
        podsections.pod_sections(obj, text)
    configsections.config_sections(obj, text)
    schedsections.scheduling_sections(obj, text)
    _event_table(events, text, now)
    return text.render()


def _header(obj: Resource, text: Text, now: datetime) -> None:
    meta = obj.metadata
    created = meta.creation_timestamp
    pairs: list[tuple[str, str | Sequence[str]]] = [
        ("Name", obj.name),
        *([("Namespace", obj.namespace)] if obj.namespace else []),  # (not a Queue's)
        ("Labels", sections.pairs_of(meta.labels)),
        ("Annotations", sections.pairs_of(meta.annotations)),
        ("API Version", obj.api_version),
        ("Kind", obj.kind),
        ("Created", f"{created} ({ages.age(created, now)} ago)" if created else NONE),
    ]
    owner = meta.controller_ref()
    if owner is not None:
        pairs.append(("Controlled By", f"{owner.kind}/{owner.name}"))
    if meta.deletion_timestamp:
        pairs.append(("Deleted", meta.deletion_timestamp))
    pairs += [("UID", meta.uid or NONE), ("Resource Version", meta.resource_version or NONE)]
    text.fields(pairs)


def _event_table(events: Sequence[Event], text: Text, now: datetime) -> None:
    if not events:
        text.fields([("Events", NONE)])
        return
    text.heading("Events")
    headers = ["Type", "Reason", "Age", "From", "Message"]
    rows = [["-" * len(h) for h in headers]]
    for event in events:
        source = event.source.component if event.source else None
        when = event.last_seen()
        count = f" (x{event.times()})" if event.times() > 1 else ""
        rows.append(
            [
                event.type,
                event.reason,
                ages.age(when, now) + count,
                source or "",
                " ".join(event.message.split()),
            ]
        )
    text.table(headers, rows, 1, gap=2)
