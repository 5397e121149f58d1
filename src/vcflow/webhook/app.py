"""`create_app`: the webhook's ASGI application — POST `/validate-jobflow` and
`/validate-jobtemplate` (one path per kind, each refusing a review of the other), plain
`/healthz` and `/readyz`. A body over `MAX_BODY` is 413, one that is no AdmissionReview v1
400, a cluster that cannot be read 500, a body that finds no room in the process's body
budget (`telemetry.connections.BodyBudget`: the bytes of the reviews held at once, each
held until it is answered) within its wait 503 (each one line of text: the API server's
failurePolicy then decides); each review is logged in one line. Used by `webhook.serve`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from vcflow.api import bounds
from vcflow.store.admit import Reader
from vcflow.telemetry.connections import BodyBudget, BudgetExhausted
from vcflow.webhook import admissionreview, verdict
from vcflow.webhook.admissionreview import Malformed, Review, Verdict

log = logging.getLogger("vcflow.webhook")
#: an UPDATE's review holds two objects at the store's cap (`bounds.MAX_OBJECT_BYTES`, as
#: the vcflow server caps one), and room for the rest: 4 MiB
MAX_BODY = 2 * bounds.MAX_OBJECT_BYTES + 1024 * 1024
#: bytes of review bodies held at once (four at MAX_BODY; reviews of a few KiB by the
#: thousand): with the parsed reviews they make the webhook's peak (docs/webhook.md)
BODY_BUDGET = 4 * MAX_BODY
#: seconds a review waits for room in the budget before its 503: well inside the API
#: server's timeoutSeconds
BUDGET_WAIT = 2.0
PATHS = {"/validate-jobflow": "JobFlow", "/validate-jobtemplate": "JobTemplate"}


class TooLarge(Exception):
    pass


def create_app(cluster: Reader, budget: BodyBudget | None = None) -> Starlette:
    """The application; `cluster` is what reviews read (a KubeStore on the cluster),
    `budget` the bytes of bodies held at once (BODY_BUDGET, BUDGET_WAIT by default)."""
    budget = budget or BodyBudget(BODY_BUDGET, BUDGET_WAIT)
    routes = [
        Route(path, _reviewer(cluster, kind, budget), methods=["POST"])
        for path, kind in PATHS.items()
    ]
    routes += [Route(path, _ok) for path in ("/healthz", "/readyz")]
    return Starlette(routes=routes)


def _reviewer(
    cluster: Reader, kind: str, budget: BodyBudget
) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        started = time.monotonic()
        review: Review | None = None
        try:
            async with budget.account() as held:  # (held until the review is answered)
                await held.take(_announced(request))
                review = admissionreview.parse(await _body(request))
                found = await run_in_threadpool(verdict.decide, review, cluster, kind)
        except BudgetExhausted:
            message = (
                f"no room for this review in {bounds.mib(budget.total)} of reviews read at "
                f"once within {budget.wait:g}s: retry"
            )
            return _refused(503, message, kind, review)
        except ClientDisconnect:  # (the client left, or its body missed its deadline)
            return _refused(400, "the request body did not come in whole", kind, review)
        except TooLarge:
            message = f"the request is larger than {bounds.mib(MAX_BODY)}: too large"
            return _refused(413, message, kind, review)
        except Malformed as exc:
            return _refused(400, str(exc), kind, review)
        except verdict.ClusterUnreadable as exc:
            return _refused(500, str(exc), kind, review)
        _log(review, found, time.monotonic() - started)
        return JSONResponse(admissionreview.answer(review, found))

    return handle


def _announced(request: Request) -> int:
    """The bytes a review takes from the budget: its Content-Length (the API server's
    always has one), MAX_BODY for a body of unknown length. All at once: a share taken
    chunk by chunk lets many large bodies each hold part of the budget and none finish."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit():
        if int(declared) > MAX_BODY:
            raise TooLarge
        return int(declared)
    return MAX_BODY


async def _body(request: Request) -> bytes:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise TooLarge
    return bytes(data)


def _refused(code: int, message: str, kind: str, review: Review | None) -> Response:
    """No verdict: `code` and one line (logged too)."""
    text = " ".join(message.split())
    what = f"{review.kind} {review.operation} {_name(review)}" if review else f"{kind} review"
    (log.error if code >= 500 else log.warning)("%s not answered (%d): %s", what, code, text)
    return PlainTextResponse(text + "\n", status_code=code)


def _name(review: Review) -> str:
    return f"{review.namespace}/{review.name}" if review.namespace else review.name


def _log(review: Review, found: Verdict, seconds: float) -> None:
    log.info(
        "%s %s %s%s allowed=%s%s %dms",
        review.kind,
        review.operation,
        _name(review),
        " (dry run)" if review.dry_run else "",
        str(found.allowed).lower(),
        "" if found.allowed else f" ({found.code})",
        round(seconds * 1000),
    )


async def _ok(_request: Request) -> Response:
    return PlainTextResponse("ok")
