"""Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection`
does it (`tryAcquireOrRenew`), so vcflow's replicas and any client-go tool read one record:

- the Lease names its holder (`holderIdentity`), `leaseDurationSeconds`, `acquireTime`,
  `renewTime` (MicroTime) and `leaseTransitions`;
- another holder's lease is taken only once it has not changed for `leaseDurationSeconds`
  as observed on the local clock (the holder's renewTime is never compared with ours);
- every write carries the read's resourceVersion: of two candidates one wins, the other
  gets 409 Conflict and stays a candidate;
- `release` (client-go's ReleaseOnCancel) leaves an empty holder, so a successor need not
  wait out the lease.
Used by `process`; the store is any `Store` (the operator's KubeStore).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from vcflow.api import clock as clocks
from vcflow.api.errors import AlreadyExists, Conflict, NotFound, VcflowError
from vcflow.api.lease import Lease, LeaseSpec
from vcflow.api.meta import ObjectMeta
from vcflow.kubeapi.status import Forbidden
from vcflow.store.base import Store

log = logging.getLogger("vcflow.operator")
#: client-go's JitterFactor: the renew deadline must exceed retry-period times this
JITTER = 1.2


@dataclass(frozen=True)
class Timing:
    """Seconds, as client-go's LeaderElectionConfig names them."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def problems(self) -> list[str]:
        """client-go's checks of the three durations (empty when they hold)."""
        found = []
        if self.retry_period <= 0:
            found.append("--retry-period must be greater than zero")
        if self.lease_duration <= self.renew_deadline:
            found.append("--lease-duration must be greater than --renew-deadline")
        if self.renew_deadline <= JITTER * self.retry_period:
            found.append(f"--renew-deadline must be greater than --retry-period x {JITTER}")
        return found


#: what a refused lease means on a cluster (deploy/rbac grants leases in one namespace)
FORBIDDEN_HINT = (
    " (the operator's Role grants leases in its own namespace only, which it finds in a pod; "
    "outside one, give --lease-namespace: vcflow-system as deploy/ installs it)"
)


def _said(exc: VcflowError) -> str:
    """`exc`'s words; for a 403, with what to do about it (FORBIDDEN_HINT)."""
    return f"{exc}{FORBIDDEN_HINT}" if isinstance(exc, Forbidden) else str(exc)


def _record(spec: LeaseSpec | None) -> tuple[object, ...]:
    if spec is None:
        return ()
    return (
        spec.holder_identity,
        spec.lease_duration_seconds,
        spec.acquire_time,
        spec.renew_time,
        spec.lease_transitions,
    )


class Elector:
    """One candidate for the Lease `namespace/name`, identified by `identity`."""

    def __init__(
        self,
        store: Store,
        namespace: str,
        name: str,
        identity: str,
        timing: Timing = Timing(),
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.namespace, self.name, self.identity = namespace, name, identity
        self.timing = timing
        self.now, self.monotonic = now, monotonic
        self.observed: tuple[object, ...] | None = None
        self.observed_at = 0.0  # (monotonic) when the record last changed, as seen here
        self.renewed_at: float | None = None  # (monotonic) our last successful write
        self.holder = ""  # the holder as last read ("" for none)
        self.answered_at: float | None = None  # (monotonic) the API's last answer

    @property
    def leading(self) -> bool:
        return self.holder == self.identity

    def try_acquire_or_renew(self) -> bool:
        """One round of client-go's tryAcquireOrRenew: True when this candidate holds the
        lease after it (acquired or renewed)."""
        now = self.now()
        try:
            lease = self.store.get(Lease, self.namespace, self.name)
        except NotFound:
            return self._create(now)
        except VcflowError as exc:
            log.warning("leader election: reading lease %s: %s", self._where(), _said(exc))
            return False
        self.answered_at = self.monotonic()
        spec = lease.spec or LeaseSpec()
        record = _record(spec)
        if record != self.observed:
            self.observed, self.observed_at = record, self.monotonic()
        self.holder = spec.holder_identity or ""
        duration = spec.lease_duration_seconds or 0
        if (
            self.holder
            and self.holder != self.identity
            and self.observed_at + duration > self.monotonic()
        ):
            return False  # held by another, and not expired as seen here
        wanted = lease.clone()
        wanted.spec = self._spec(now, spec)
        try:
            written = self.store.update(wanted)
        except (Conflict, NotFound) as exc:
            log.info("leader election: lease %s changed under us: %s", self._where(), exc)
            return False
        except VcflowError as exc:
            log.warning("leader election: writing lease %s: %s", self._where(), _said(exc))
            return False
        return self._won(written)

    def _spec(self, now: datetime, old: LeaseSpec) -> LeaseSpec:
        leading = (old.holder_identity or "") == self.identity
        transitions = old.lease_transitions or 0
        return LeaseSpec(
            holder_identity=self.identity,
            lease_duration_seconds=max(1, round(self.timing.lease_duration)),
            acquire_time=old.acquire_time
            if leading and old.acquire_time
            else clocks.micro_time(now),
            renew_time=clocks.micro_time(now),
            lease_transitions=transitions if leading else transitions + 1,
        )

    def _create(self, now: datetime) -> bool:
        self.answered_at = self.monotonic()
        lease = Lease(
            metadata=ObjectMeta(name=self.name, namespace=self.namespace),
            spec=LeaseSpec(
                holder_identity=self.identity,
                lease_duration_seconds=max(1, round(self.timing.lease_duration)),
                acquire_time=clocks.micro_time(now),
                renew_time=clocks.micro_time(now),
                lease_transitions=0,
            ),
        )
        try:
            written = self.store.create(lease)
        except (AlreadyExists, Conflict):
            return False
        except VcflowError as exc:
            log.warning("leader election: creating lease %s: %s", self._where(), _said(exc))
            return False
        return self._won(written)

    def _won(self, written: Lease) -> bool:
        self.observed, self.observed_at = _record(written.spec), self.monotonic()
        self.renewed_at = self.observed_at
        self.answered_at = self.observed_at
        self.holder = self.identity
        return True

    def acquire(self, stop: Callable[[], bool], wait: Callable[[float], object]) -> bool:
        """Try every retry period until the lease is ours (True) or `stop()` (False)."""
        logged = False
        while not stop():
            if self.try_acquire_or_renew():
                log.info("leader election: %s acquired lease %s", self.identity, self._where())
                return True
            if not logged and self.holder:
                log.info(
                    "leader election: lease %s held by %s; waiting", self._where(), self.holder
                )
                logged = True
            wait(self.timing.retry_period)
        return False

    def lost(self) -> bool:
        """Whether the renew deadline passed since the last successful renewal: leadership
        is given up (client-go's OnStoppedLeading)."""
        return self.renewed_at is None or (
            self.monotonic() - self.renewed_at > self.timing.renew_deadline
        )

    def release(self) -> bool:
        """ReleaseOnCancel: the lease left with no holder (duration 1s, times now), when it
        is still ours; True if written."""
        try:
            lease = self.store.get(Lease, self.namespace, self.name)
        except VcflowError as exc:
            log.warning("leader election: releasing lease %s: %s", self._where(), exc)
            return False
        spec = lease.spec or LeaseSpec()
        if (spec.holder_identity or "") != self.identity:
            return False
        stamp = clocks.micro_time(self.now())
        wanted = lease.clone()
        wanted.spec = LeaseSpec(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=stamp,
            renew_time=stamp,
            lease_transitions=spec.lease_transitions or 0,
        )
        try:
            self.store.update(wanted)
        except VcflowError as exc:
            log.warning("leader election: releasing lease %s: %s", self._where(), exc)
            return False
        self.holder = ""
        self.renewed_at = None
        log.info("leader election: %s released lease %s", self.identity, self._where())
        return True

    def _where(self) -> str:
        return f"{self.namespace}/{self.name}"
