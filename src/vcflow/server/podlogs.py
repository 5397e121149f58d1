"""`GET /api/v1/namespaces/NS/pods/NAME/log`: a pod's container log as text/plain, with
kubectl's `container`, `follow`, `tailLines`, `previous`, `timestamps`, `sinceSeconds`,
`sinceTime` and vcflow's `attempt`. What is read, and the rule that only the pod's own
files are, is `runtime.podlog`'s (which `vcflow logs` shares; the lines' times are the
log's time index's, `podserver.logtimes`: accurate to the pod server's look, 0.2 s); a
followed log ends when its container's run does or the server stops. Used by `routes`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from vcflow.api.errors import NotFound
from vcflow.api.pod import Pod
from vcflow.podserver import logtimes
from vcflow.runtime import podlog
from vcflow.server.status import ApiError
from vcflow.store.base import Store

TEXT = "text/plain; charset=utf-8"
POLL = 0.1  # seconds between two looks at a quiet followed log


def log_request(request: Request, namespace: str, name: str) -> podlog.LogRequest:
    query = request.query_params
    return podlog.LogRequest(
        namespace=namespace,
        name=name,
        container=query.get("container") or None,
        previous=_flag(query.get("previous")),
        tail=_number(query.get("tailLines"), "tailLines", signed=False),
        attempt=_number(query.get("attempt"), "attempt", signed=True),
        times=_times(query.get("timestamps"), query.get("sinceSeconds"), query.get("sinceTime")),
    )


def _times(timestamps: str | None, seconds: str | None, moment: str | None) -> podlog.Times:
    """kube's `timestamps`, `sinceSeconds` and `sinceTime`, refused as kube refuses them."""
    since_seconds = _number(seconds, "sinceSeconds", signed=True)
    if since_seconds is not None and moment:
        raise ApiError(400, "only one of sinceTime or sinceSeconds can be provided")
    if since_seconds is not None and since_seconds < 1:
        raise ApiError(400, "sinceSeconds must be a positive integer")
    since_time = None
    if moment:
        try:
            since_time = logtimes.parse_rfc3339(moment)
        except ValueError as exc:
            raise ApiError(400, f"sinceTime: {exc}") from None
    return podlog.Times(
        _flag(timestamps),
        None if since_seconds is None else float(since_seconds),
        since_time,
    )


async def answer(
    request: Request,
    store: Store,
    state_dir: Path | None,
    namespace: str,
    name: str,
    stopping: Callable[[], bool],
) -> Response:
    if state_dir is None:
        raise ApiError(400, "this server runs no pods: it keeps no logs")
    wanted = log_request(request, namespace, name)
    follow = _flag(request.query_params.get("follow"))
    stored = await run_in_threadpool(_stored, store, namespace, name)
    chosen = await run_in_threadpool(podlog.choose, state_dir, wanted, stored)
    if follow and not wanted.previous and chosen.live:
        chunks = podlog.stream(state_dir, chosen, wanted.tail, idle=True, times=wanted.times)
        return StreamingResponse(followed(chunks, stopping), media_type=TEXT)
    data = await run_in_threadpool(podlog.read, state_dir, wanted, chosen)
    return Response(data, media_type=TEXT)


async def followed(
    chunks: Generator[bytes, None, None], stopping: Callable[[], bool]
) -> AsyncIterator[bytes]:
    """The chunks, each read in a worker thread; a quiet log is waited for here, with no
    thread held, until the run ends, the client leaves or the server stops."""
    try:
        while not stopping():
            chunk = await run_in_threadpool(next, chunks, None)
            if chunk is None:
                return
            if chunk:
                yield chunk
            else:
                await asyncio.sleep(POLL)
    finally:
        chunks.close()  # (its log file)


def _stored(store: Store, namespace: str, name: str) -> Pod | None:
    try:
        return store.get(Pod, namespace, name)
    except NotFound:
        return None


def _flag(text: str | None) -> bool:
    if text in (None, "", "false", "0", "False"):
        return False
    if text in ("true", "1", "True"):
        return True
    raise ApiError(400, f"{text!r} is not a boolean")


def _number(text: str | None, key: str, *, signed: bool) -> int | None:
    if text is None or text == "":
        return None
    digits = text[1:] if signed and text.startswith("-") else text
    if not digits.isdigit() or len(digits) > 12:
        raise ApiError(400, f"{key}: {text!r} is not an integer")
    return int(text)
