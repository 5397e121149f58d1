"""The Lease election as client-go does it, on a memory store and a fake clock: who takes
the lease when, what the record holds, and that a write against a stale read loses."""

from __future__ import annotations

from vcflow.api.clock import FakeClock
from vcflow.api.lease import Lease
from vcflow.operator.election import Elector, Timing
from vcflow.store import MemoryStore

TIMING = Timing(lease_duration=15, renew_deadline=10, retry_period=2)


def candidate(store: MemoryStore, clock: FakeClock, name: str) -> Elector:
    return Elector(
        store, "default", "lease", name, TIMING, now=clock.now, monotonic=clock.monotonic
    )


def spec(store: MemoryStore) -> dict[str, object]:
    found = store.get(Lease, "default", "lease").to_dict()["spec"]
    assert isinstance(found, dict)
    return found


def test_the_first_candidate_creates_the_lease_with_client_gos_record() -> None:
    store, clock = MemoryStore(), FakeClock()
    one = candidate(store, clock, "one")
    assert one.try_acquire_or_renew() and one.leading
    assert spec(store) == {
        "holderIdentity": "one",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-01T00:00:00.000000Z",
        "renewTime": "2026-01-01T00:00:00.000000Z",
        "leaseTransitions": 0,
    }
    clock.advance(2)
    assert one.try_acquire_or_renew()
    assert spec(store)["renewTime"] == "2026-01-01T00:00:02.000000Z"
    assert spec(store)["acquireTime"] == "2026-01-01T00:00:00.000000Z"


def test_a_standby_waits_the_lease_duration_since_it_saw_the_record_change() -> None:
    store, clock = MemoryStore(), FakeClock()
    one, two = candidate(store, clock, "one"), candidate(store, clock, "two")
    assert one.try_acquire_or_renew()
    clock.advance(100)  # the holder's renewTime is old, but two has not watched it yet
    assert not two.try_acquire_or_renew()
    assert two.holder == "one" and not two.leading
    clock.advance(14.9)
    assert not two.try_acquire_or_renew()
    clock.advance(0.2)
    assert two.try_acquire_or_renew() and two.leading
    assert spec(store)["holderIdentity"] == "two"
    assert spec(store)["leaseTransitions"] == 1
    assert spec(store)["acquireTime"] == spec(store)["renewTime"]


def test_a_renewal_restarts_the_standbys_wait() -> None:
    store, clock = MemoryStore(), FakeClock()
    one, two = candidate(store, clock, "one"), candidate(store, clock, "two")
    assert one.try_acquire_or_renew()
    assert not two.try_acquire_or_renew()
    clock.advance(10)
    assert one.try_acquire_or_renew()
    clock.advance(10)
    assert not two.try_acquire_or_renew()  # changed 10s ago, as two saw it
    clock.advance(15)
    assert two.try_acquire_or_renew()


def test_of_two_writes_from_one_read_the_second_loses() -> None:
    store, clock = MemoryStore(), FakeClock()
    one, two = candidate(store, clock, "one"), candidate(store, clock, "two")
    assert one.try_acquire_or_renew()
    stale = store.get(Lease, "default", "lease")
    assert one.try_acquire_or_renew()  # moves the resourceVersion on
    two.store = _Returning(store, stale)  # two reads the old record, then writes it
    clock.advance(20)
    assert not two.try_acquire_or_renew()
    assert spec(store)["holderIdentity"] == "one"


def test_a_leader_that_cannot_renew_is_lost_after_the_renew_deadline() -> None:
    store, clock = MemoryStore(), FakeClock()
    one = candidate(store, clock, "one")
    assert one.try_acquire_or_renew()
    taken = store.get(Lease, "default", "lease")
    assert taken.spec is not None
    taken.spec.holder_identity = "thief"
    store.update(taken)
    clock.advance(2)
    assert not one.try_acquire_or_renew() and not one.lost()
    clock.advance(8.5)
    assert not one.try_acquire_or_renew() and one.lost()


def test_release_leaves_no_holder_and_a_successor_takes_it_at_once() -> None:
    store, clock = MemoryStore(), FakeClock()
    one, two = candidate(store, clock, "one"), candidate(store, clock, "two")
    assert one.try_acquire_or_renew()
    assert not two.try_acquire_or_renew()
    assert one.release()
    assert spec(store)["holderIdentity"] == "" and spec(store)["leaseDurationSeconds"] == 1
    assert two.try_acquire_or_renew()
    assert spec(store)["leaseTransitions"] == 1
    assert not one.release()  # no longer ours: left alone


def test_client_gos_checks_of_the_durations() -> None:
    assert Timing(15, 10, 2).problems() == []
    assert Timing(10, 10, 2).problems() == [
        "--lease-duration must be greater than --renew-deadline"
    ]
    assert Timing(15, 2, 2).problems() == [
        "--renew-deadline must be greater than --retry-period x 1.2"
    ]


class _Returning:
    """A store whose first get of the Lease answers `stale`."""

    def __init__(self, store: MemoryStore, stale: Lease) -> None:
        self.store, self.stale = store, stale

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def get(self, kind: object, namespace: str, name: str) -> Lease:
        stale, self.stale = self.stale, None
        return stale if stale is not None else self.store.get(Lease, namespace, name)
