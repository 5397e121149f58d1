"""Tier 5, I/O: the Store over the Kubernetes API (`store.KubeStore`), for the CLI's remote
mode against `vcflow server` and for the Kubernetes mode against a real cluster."""

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["Forbidden", "KubeClient", "KubeStore", "Unauthorized", "Unreachable"]

#: where each name lives: imported when first used, so that a command that never talks to a
#: cluster (`vcflow run`) does not load the Kubernetes client (its modules are tens of MB)
_HOMES = {
    "KubeClient": "vcflow.kubestore.client",
    "Unreachable": "vcflow.kubestore.client",
    "Forbidden": "vcflow.kubeapi.status",
    "Unauthorized": "vcflow.kubeapi.status",
    "KubeStore": "vcflow.kubestore.store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


if TYPE_CHECKING:
    from vcflow.kubeapi.status import Forbidden, Unauthorized
    from vcflow.kubestore.client import KubeClient, Unreachable
    from vcflow.kubestore.store import KubeStore
    from vcflow.store import Store

    def _implements_store(kube: KubeStore) -> Store:
        """mypy proves KubeStore satisfies the Store protocol."""
        return kube
