"""A pod's log for the dashboard's log view, from wherever the host reads logs
(`LogSource`): `vcflow server` reads the pod's own files (`server.podlogs`, the route
kubectl's `logs` uses, with `runtime.podlog`'s rule that only the pod's files are read);
`vcflow dashboard` asks the cluster's API (`KubeStore.pod_log`, the user's credentials).
Both take kubectl's query (`container`, `tailLines`, `follow`) and stream a followed log
until the container's run ends, the server stops or the client leaves.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from vcflow.api.errors import StoreError, VcflowError
from vcflow.api.pod import Pod
from vcflow.kubeapi import logrefusal
from vcflow.runtime import podlog
from vcflow.server import podlogs
from vcflow.server.status import ApiError
from vcflow.store.base import Store

if TYPE_CHECKING:
    from vcflow.kubestore import KubeStore

TEXT = "text/plain; charset=utf-8"
#: followed logs at once over a cluster's API (each holds a worker thread while it waits)
MAX_FOLLOWED = 16


class LogSource(Protocol):
    """Where a host reads a pod's log; the names are checked (DNS-1123) before."""

    async def answer(self, request: Request, namespace: str, pod: str) -> Response:
        """The log as text/plain, streamed when `follow`."""


class FileLogs:
    """`vcflow server`'s: the pod's log files in the state directory."""

    def __init__(self, store: Store, state_dir: Path, stopping: threading.Event) -> None:
        self.store, self.state_dir, self.stopping = store, state_dir, stopping

    async def answer(self, request: Request, namespace: str, pod: str) -> Response:
        podlog.check_names(namespace, pod)
        return await podlogs.answer(
            request, self.store, self.state_dir, namespace, pod, self.stopping.is_set
        )


class ApiLogs:
    """`vcflow dashboard`'s: the cluster's `pods/NAME/log`."""

    def __init__(self, store: KubeStore, stopping: threading.Event) -> None:
        self.store, self.stopping = store, stopping
        self._followed = threading.BoundedSemaphore(MAX_FOLLOWED)

    async def answer(self, request: Request, namespace: str, pod: str) -> Response:
        wanted = podlogs.log_request(request, namespace, pod)  # (kubectl's parameters)
        follow = request.query_params.get("follow") in ("1", "true", "True")
        if not follow:
            data = await run_in_threadpool(self._read, wanted)
            return Response(data, media_type=TEXT)
        if not self._followed.acquire(blocking=False):
            raise ApiError(503, f"too many followed logs (cap {MAX_FOLLOWED}): try again later")
        try:
            chunks = await run_in_threadpool(self._open, wanted, follow=True)
        except BaseException:
            self._followed.release()
            raise
        return StreamingResponse(self._stream(chunks), media_type=TEXT)

    def _open(self, wanted: podlog.LogRequest, *, follow: bool) -> Generator[bytes, None, None]:
        chunks = self.store.pod_log(
            wanted.namespace,
            wanted.name,
            container=wanted.container,
            follow=follow,
            tail=wanted.tail,
            previous=wanted.previous,
        )
        try:
            first = next(chunks, None)  # (the request is made, and refused, here)
        except StoreError as exc:
            said = str(exc)
            if not logrefusal.SERVER_FAILED.match(said):
                raise
            pod = self._pod(wanted.namespace, wanted.name)
            raise StoreError(logrefusal.explained(said, pod)) from None
        return _again(first, chunks)

    def _pod(self, namespace: str, name: str) -> Pod | None:
        """The pod, for the node its refused log names; None when it cannot be read."""
        try:
            return self.store.get(Pod, namespace, name)
        except VcflowError:
            return None

    def _read(self, wanted: podlog.LogRequest) -> bytes:
        return b"".join(self._open(wanted, follow=False))

    async def _stream(self, chunks: Generator[bytes, None, None]) -> AsyncIterator[bytes]:
        try:
            async for chunk in podlogs.followed(chunks, self.stopping.is_set):
                yield chunk
        finally:
            self._followed.release()


def _again(first: bytes | None, rest: Iterator[bytes]) -> Generator[bytes, None, None]:
    if first is not None:
        yield first
    yield from rest
