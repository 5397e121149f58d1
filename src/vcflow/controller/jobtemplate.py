"""The JobTemplate controller: keeps `status.jobDependsOnList` exactly the vcjobs created
from each template that exist now (compatibility rows 14, 15).

A template's vcjobs are listed once (its first sync after a start or resync), then kept
from the vcjob events: a template that 10,000 items of a `for` use is not listed again at
every sync (docs/flow-features.md section 19). With a `delay` (the operator's) a
template's write waits that long after the first vcjob event that called for it and
carries every change that came meanwhile: a burst of flows made from one template costs a
write per `delay`, not one per vcjob."""

from __future__ import annotations

from vcflow.api import clock as clocks
from vcflow.api.errors import NotFound, StoreError
from vcflow.api.jobtemplate import JobTemplate, JobTemplateStatus
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob
from vcflow.controller.queue import WorkQueue
from vcflow.reconcile import template as reconcile
from vcflow.store.base import EventType, Store, WatchEvent


class TemplateController:
    def __init__(self, store: Store, clock: clocks.Clock, *, delay: float = 0.0) -> None:
        self.store = store
        self.queue: WorkQueue[tuple[str, str]] = WorkQueue(clock)
        self.delay = delay
        #: each template's vcjobs (by name) since it was listed: what its next sync writes
        self.known: dict[tuple[str, str], set[str]] = {}

    name = "jobtemplate"

    def queue_depth(self) -> int:
        return len(self.queue)

    def resync(self) -> None:
        self.known.clear()  # (events may have been missed: each template is listed again)
        for template in self.store.list(JobTemplate):
            self.queue.add((template.namespace, template.name))

    #: the kinds whose events `handle` takes
    watches: tuple[type[Resource], ...] = (JobTemplate, VCJob)

    def handle(self, event: WatchEvent) -> None:
        # decided before the object is parsed: most events here are status writes (ours to
        # the templates, the runtime's to the vcjobs), which change nothing for this sync
        if event.model is JobTemplate and event.type != EventType.MODIFIED:
            self.known.pop((event.namespace, event.name), None)
            if event.type == EventType.ADDED:
                self.queue.add((event.namespace, event.name))
        elif event.model is VCJob and event.type != EventType.MODIFIED:
            job = event.object
            assert isinstance(job, VCJob)
            owner = reconcile.template_of(job)
            if owner is not None:
                names = self.known.get(owner)
                if names is not None and event.type == EventType.ADDED:
                    names.add(job.name)
                elif names is not None:
                    names.discard(job.name)
                if self.delay > 0:
                    self.queue.add_after(owner, self.delay)
                else:
                    self.queue.add(owner)

    def process_one(self) -> bool:
        key = self.queue.get()
        if key is None:
            return False
        try:
            self.sync(*key)
        except StoreError:
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)
        return True

    def sync(self, namespace: str, name: str) -> None:
        try:
            template = self.store.get(JobTemplate, namespace, name)
        except NotFound:
            return
        found = self.known.get((namespace, name))
        if found is None:
            found = set(self.store.names(VCJob, namespace, reconcile.selector(template)))
            self.known[(namespace, name)] = found
        status = reconcile.template_status(found)
        old = template.status.job_depends_on_list if template.status else None
        if old == (status.job_depends_on_list if status else None):
            return
        meta = template.metadata
        self.store.update_status_data(
            JobTemplate,
            namespace,
            name,
            (status or JobTemplateStatus()).to_dict(),
            resource_version=meta.resource_version,
            uid=meta.uid,
            base=template,
        )
