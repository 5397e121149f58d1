"""Following applied flows that another process runs (`vcflow run -f` against a server):
the progress of their flows and vcjobs from the store's events, until every flow has ended
and none of their jobs runs, without running any controller or pod here.

The counterpart of `session.LocalRun` for remote mode: same `Progress`, same `RunResult`,
so the live view and the final table are those of a local run. A stop (Ctrl-C) or the
timeout ends the following only: the flows go on in the server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.local.progress import Progress
from vcflow.local.result import RunResult, build
from vcflow.runtime.run import Ending
from vcflow.store.base import Cursor, EventType, Expired, Store

#: seconds between two reads of why the flows' entries wait
WAITING_REFRESH = 1.0


def _never() -> bool:
    return False


class Follow:
    def __init__(
        self,
        store: Store,
        progress: Progress,
        state_dir: Path,
        *,
        timeout: float | None = None,
        poll: float = 0.2,
    ) -> None:
        self.store, self.progress, self.state_dir = store, progress, state_dir
        self.timeout, self.poll = timeout, poll
        self._waiting_read = 0.0

    def run(
        self, *, stop: Callable[[], bool] = _never, on_tick: Callable[[], None] | None = None
    ) -> RunResult:
        started = time.monotonic()
        cursor = self._relist()
        ending = Ending.DONE
        while not self._done():
            if stop():
                ending = Ending.INTERRUPTED
                break
            if self.timeout is not None and time.monotonic() - started >= self.timeout:
                ending = Ending.TIMEOUT
                break
            try:
                found, cursor = self.store.poll_events(cursor, (JobFlow, VCJob))
            except Expired:
                cursor = self._relist()
                continue
            phases: dict[names.ObjectKey, str] = {}
            for event in found:
                if event.model is VCJob:
                    job = event.object
                    assert isinstance(job, VCJob)
                    self.progress.observe(job, event.type is EventType.DELETED)
                elif event.key in self.progress.flows:
                    if event.type is EventType.DELETED:
                        self.progress.flow_deleted(event.key)
                    else:
                        phases[event.key] = event.object.phase  # type: ignore[attr-defined]
            if phases:
                self.progress.update_flows(phases)
            self._refresh_waiting()
            if on_tick is not None:
                on_tick()
            if not found:
                time.sleep(self.poll)
        self._refresh_waiting(force=True)
        if on_tick is not None:
            on_tick()
        return build(self.progress, self.store, self.state_dir, ending, 0)

    def _relist(self) -> Cursor:
        """Everything read again (at the start, and when the events expired)."""
        cursor = Cursor.now(self.store)
        for namespace in sorted({f.namespace for f in self.progress.flows.values()}):
            for job in self.store.list(VCJob, namespace):
                self.progress.observe(job, False)
        for job_row in list(self.progress.jobs.values()):
            try:
                self.progress.observe(self.store.get(VCJob, job_row.namespace, job_row.job), False)
            except NotFound:
                continue
        phases = {}
        for key, row in self.progress.flows.items():
            try:
                phases[key] = self.store.phase(JobFlow, row.namespace, row.name)
            except NotFound:
                self.progress.flow_deleted(key)
        self.progress.update_flows(phases)
        return cursor

    def _refresh_waiting(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._waiting_read < WAITING_REFRESH:
            return
        self._waiting_read = now
        rows = self.progress.flows.values()
        wanted = (r for r in rows if not r.deleted and (force or not r.ended))
        self.progress.read_waiting(self.store, wanted)

    def _done(self) -> bool:
        return self.progress.all_ended() and not any(j.active for j in self.progress.every_job())
