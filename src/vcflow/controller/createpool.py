"""The JobFlow controller's API requests that may run at once — the vcjob creates of the
flows synced together, the status writes of one flush — one after another or `workers` at a
time: on a real API server each is a round trip of tens of milliseconds, and the operator's
store (KubeStore) takes calls from several threads; the embedded stores take them one by
one (`workers` 1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from vcflow.api.errors import AlreadyExists, InputError

T = TypeVar("T")
R = TypeVar("R")

#: what refused a vcjob's create (an outcome of the sync, not its failure)
Refusal = AlreadyExists | InputError


class CreatePool:
    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None

    def each(self, call: Callable[[T], R], items: Sequence[T]) -> list[R | Exception]:
        """`call` of every item, in order: its answer, or the error it raised. Every item
        is answered before any is taken: the caller decides, in order, what an error means
        (a sync stops at its first store error, as one after another)."""
        if self._workers <= 1 or len(items) <= 1:
            return [_answer(call, item) for item in items]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, "vcflow-requests")
        futures = [self._pool.submit(_answer, call, item) for item in items]
        return [future.result() for future in futures]

    def close(self) -> None:
        """Stop the workers (if any were started)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _answer(call: Callable[[T], R], item: T) -> R | Exception:
    try:
        return call(item)
    except Exception as exc:  # (handed to the caller, which raises what it does not expect)
        return exc
