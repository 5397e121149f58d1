"""A flow entry's retry policy, resolved, and when its next attempt is due
(docs/flow-features.md §1). `FlowIndex` asks `delay`, `due` and `retries_left`; admission
has checked every value, so what cannot be read falls back to the default. Pure: no I/O,
no clock; the jitter is a hash, not a random draw, so a restarted controller draws the same.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from vcflow.api import clock
from vcflow.api.jobflow import Flow, JobFlow, RetryPolicy
from vcflow.api.phases import BackoffType, RetryStrategy
from vcflow.reconcile import jobs

BASE_DELAY = 30.0  # seconds (Volcano's design)
MAX_DELAY = 300.0
#: the annotation on an attempt's vcjob after the first: its attempt number
ATTEMPT_ANNOTATION = jobs.ATTEMPT_ANNOTATION


@dataclass(frozen=True)
class Plan:
    """What one entry's `retryPolicy` (or the spec's) says."""

    max_retries: int = 0
    policy: RetryStrategy = RetryStrategy.ON_FAILURE
    exponential: bool = True
    base: float = BASE_DELAY
    cap: float = MAX_DELAY
    jitter: float = 0.0

    @property
    def retries(self) -> int:
        """Retries this plan allows (`Never` allows none)."""
        return 0 if self.policy == RetryStrategy.NEVER else max(self.max_retries, 0)


NONE = Plan()


def of(flow: JobFlow, entry: Flow) -> Plan:
    """The entry's own `retryPolicy`, else the spec's (it replaces it as a whole)."""
    policy = entry.retry_policy
    if policy is None and flow.spec is not None:
        policy = flow.spec.retry_policy
    return NONE if policy is None else _plan(policy)


def _plan(policy: RetryPolicy) -> Plan:
    backoff = policy.backoff
    base = _seconds(backoff.base_delay if backoff else None, BASE_DELAY)
    cap = _seconds(backoff.max_delay if backoff else None, MAX_DELAY)
    jitter = float(backoff.jitter) if backoff and backoff.jitter is not None else 0.0
    return Plan(
        max_retries=policy.max_retries or 0,
        policy=policy.policy or RetryStrategy.ON_FAILURE,
        exponential=not (backoff and backoff.type == BackoffType.CONSTANT),
        base=base,
        cap=cap,
        jitter=min(max(jitter, 0.0), 1.0),
    )


def _seconds(value: object, default: float) -> float:
    if not isinstance(value, str):
        return default
    seconds = clock.parse_go_duration(value)
    return default if seconds is None or seconds < 0 else seconds


def delay(plan: Plan, retry: int, *, seed: str) -> float:
    """Seconds before retry number `retry` (1 = the first): `base` (Constant) or
    `base × 2^(retry−1)` (Exponential), capped at `cap`, times `1 + jitter × u` with `u` in
    [−1, 1] drawn from `seed` (flow uid, entry, attempt)."""
    steps = min(max(retry - 1, 0), 60) if plan.exponential else 0
    wait = min(plan.base * 2.0**steps, plan.cap)
    if plan.jitter:
        digest = hashlib.sha256(seed.encode()).digest()
        u = int.from_bytes(digest[:8], "big") / float(2**64 - 1) * 2.0 - 1.0
        wait *= 1.0 + plan.jitter * u
    return max(wait, 0.0)


def due(ended: datetime, seconds: float) -> datetime:
    """When the next attempt is due: `seconds` after `ended`, rounded up to the whole second
    (the status holds whole seconds), so the wait is never shorter than asked."""
    moment = ended + timedelta(seconds=seconds)
    whole = moment.replace(microsecond=0)
    return whole if whole == moment else whole + timedelta(seconds=1)


def attempt_of(annotations: dict[str, str]) -> int:
    """The attempt number a vcjob carries (1 without the annotation, or a bad one)."""
    text = annotations.get(ATTEMPT_ANNOTATION)
    if text is None or not text.isdigit():
        return 1
    return max(int(text), 1)
