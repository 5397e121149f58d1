"""The vcjob creates of one flow sync, one after another or `workers` at a time: on a real
API server a create is a round trip of tens of milliseconds, and the operator's store
(KubeStore) takes calls from several threads; the embedded stores take them one by one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from vcflow.api.errors import AlreadyExists, InputError
from vcflow.api.vcjob import VCJob
from vcflow.store.base import Store

#: what refused a vcjob's create (an outcome of the sync, not its failure)
Refusal = AlreadyExists | InputError


class CreatePool:
    def __init__(self, store: Store, workers: int) -> None:
        self._store = store
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None

    def post(self, jobs: Sequence[VCJob]) -> Iterator[tuple[VCJob, Refusal | None]]:
        """Each vcjob created, in plan order, with the AlreadyExists or InputError that
        refused it (None: created). With several workers the creates run at once and every
        one is answered before any is taken (a store error is raised at its place, as one
        after another)."""
        if self._workers <= 1 or len(jobs) <= 1:
            for job in jobs:
                yield job, try_create(self._store, job)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, "vcflow-create")
        futures = [self._pool.submit(try_create, self._store, job) for job in jobs]
        outcomes: list[Refusal | None] = []
        error: BaseException | None = None
        for future in futures:
            try:
                outcomes.append(future.result())
            except BaseException as exc:
                error = error or exc
                break
        if error is not None:
            for future in futures:  # (none left running when the sync gives up)
                with contextlib.suppress(BaseException):
                    future.result()
        yield from zip(jobs, outcomes, strict=False)
        if error is not None:
            raise error

    def close(self) -> None:
        """Stop the workers (if any were started)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def try_create(store: Store, job: VCJob) -> Refusal | None:
    """Create `job`; the AlreadyExists or InputError that refused it, else None."""
    try:
        store.create(job)
    except (AlreadyExists, InputError) as exc:
        return exc
    return None
