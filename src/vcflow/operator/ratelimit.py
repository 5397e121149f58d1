"""The operator's client QPS/burst (`--kube-api-qps`, `--kube-api-burst`): a token bucket as
client-go's (`flowcontrol.NewTokenBucketRateLimiter`: `burst` requests at once, then `qps`
a second), taken before each request and each watch a `KubeClient` opens.

A stopgap in this package: the limiter belongs in `kubestore.client.KubeClient` (its
`qps`/`burst` parameters are on their way there); once they land, `limited` passes the
flags to it and this bucket goes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from vcflow.kubestore.client import JSON, KubeClient, Response


class TokenBucket:
    """`burst` tokens, refilled at `qps` a second; `take` waits for one. qps <= 0: none."""

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.qps, self.burst = qps, max(1, burst)
        self.clock, self.sleep = clock, sleep
        self.tokens = float(self.burst)
        self.at = clock()
        self.lock = threading.Lock()

    def take(self) -> float:
        """Wait for a token; the seconds waited."""
        if self.qps <= 0:
            return 0.0
        with self.lock:  # (callers queue in order, as client-go's do)
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.qps)
            self.at = now
            self.tokens -= 1
            wait = -self.tokens / self.qps if self.tokens < 0 else 0.0
            if wait > 0:
                self.sleep(wait)
            return wait


#: connections kept to the API server: the controllers' requests and a watch per kind
POOL = 32


class LimitedClient(KubeClient):
    """A KubeClient whose requests and streams each take a token of `bucket` first."""

    bucket: TokenBucket | None = None

    def __init__(self, configuration: Any, **options: Any) -> None:
        configuration.connection_pool_maxsize = max(
            POOL, configuration.connection_pool_maxsize or 0
        )
        super().__init__(configuration, **options)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = JSON,
        timeout: float | None = None,
    ) -> Response:
        if self.bucket is not None:
            self.bucket.take()
        return super().request(
            method, path, query=query, body=body, content_type=content_type, timeout=timeout
        )

    @contextmanager
    def stream(
        self,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        timeout: float | None = None,
        lines: bool = True,
    ) -> Iterator[tuple[Response, Iterator[bytes]]]:
        if self.bucket is not None:
            self.bucket.take()
        with super().stream(path, query=query, timeout=timeout, lines=lines) as opened:
            yield opened


def limited(client: LimitedClient, qps: float, burst: int) -> LimitedClient:
    """`client` with the QPS/burst limit (qps <= 0: unlimited)."""
    client.bucket = TokenBucket(qps, burst) if qps > 0 else None
    return client
