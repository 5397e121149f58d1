"""The client-side rate limit of requests to one API server, as client-go's token bucket
(`flowcontrol.NewTokenBucketRateLimiter(qps, burst)`): `burst` requests may go at once,
then `qps` a second on average; a request waits for its token. Used by `client` before
each request and each stream's opening (a watch is not limited once it is open).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: Requests a second and the burst KubeClient allows by default. client-go's are 5 and 10,
#: which the JobFlow controller outgrows at once: one flow sync costs a few requests (the
#: vcjobs it creates, one status patch) and a 100-flow x 20-job start is thousands of
#: them, minutes at 5/s. 50/100 is what busy controllers configure (kube-controller-manager
#: runs with --kube-api-qps=50 --kube-api-burst=100 on large clusters); API Priority and
#: Fairness on the server shares it out among clients beyond that. (`vcflow operator` sets its
#: own: operator/limits.py.)
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100


class TokenBucket:
    """`burst` tokens, refilled at `qps` a second; `take()` waits for one. `qps <= 0`
    means no limit (client-go's negative qps)."""

    def __init__(
        self,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if qps > 0 and burst < 1:
            raise ValueError(f"burst must be at least 1 with a qps limit (got {burst})")
        self.qps, self.burst = qps, burst
        self._clock, self._sleep = clock, sleep
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Wait for a token; the seconds waited."""
        if self.qps <= 0:
            return 0.0
        with self._lock:  # (tokens are reserved in order: waiters queue up fairly)
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
            self._at = now
            self._tokens -= 1.0
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            self._sleep(wait)
        return wait
