"""What the controllers report as they work, for whoever measures them: each sync's
duration and the wait from a flow entry's dependencies being met to its vcjob's creation.
The default `Observer` tells no one; the server's /metrics subclasses it
(server/metrics.py), so this tier knows nothing of Prometheus.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


class Observer:
    """No-op hooks the manager and the flow controller call; override what you measure.
    Called on the controllers' thread: keep them cheap and never raise."""

    def attach(self, queue_depths: Callable[[], Mapping[str, int]]) -> None:
        """The manager reporting here, by the reader of its work queues' depths (by
        controller name; safe to call from another thread). Called once, as it is built."""

    def synced(self, controller: str, seconds: float) -> None:
        """`controller` ("jobflow", "jobtemplate") synced one key in `seconds`."""

    def vcjob_created(self, seconds_since_met: float) -> None:
        """A flow entry's vcjob was created `seconds_since_met` after its dependencies were
        met, as the flow controller saw them met (the upstream vcjob's change handled; for
        an entry without dependencies, the flow first seen)."""
