"""Where a flow's pods run: on this machine, by vcflow's own runtime (`LOCAL`), or on a
Kubernetes cluster (`CLUSTER`). One value instead of mode flags: admission, the reconcile's
probes and the controllers ask it what they need to know. Pure.
"""

from __future__ import annotations

from enum import StrEnum


class Platform(StrEnum):
    #: vcflow runs the pods here (`vcflow run`, the local server): each pod shares the
    #: host's network unless the runtime isolates it
    LOCAL = "local"
    #: Kubernetes runs the pods (the operator, a cluster's webhook): each has its own IP
    CLUSTER = "cluster"

    @property
    def runs_pods_here(self) -> bool:
        """Does vcflow's local runtime run the pods? Admission then says what only it cannot
        give, and how to give an argument's value (`-p`)."""
        return self is Platform.LOCAL

    @property
    def reaches_pod_ips(self) -> bool:
        """Does a probe reach each pod at its own IP? Then a job with its own network (svc
        plugin) is probed like any other; locally 127.0.0.1 is the host's."""
        return self is Platform.CLUSTER
