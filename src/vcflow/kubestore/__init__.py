"""Tier 3, I/O: the Store over the Kubernetes API (`store.KubeStore`), for the CLI's remote
mode against `vcflow server` and for the Kubernetes mode against a real cluster."""

from typing import TYPE_CHECKING

from vcflow.kubestore.client import KubeClient, Unreachable
from vcflow.kubestore.status import Forbidden, Unauthorized
from vcflow.kubestore.store import KubeStore

__all__ = ["Forbidden", "KubeClient", "KubeStore", "Unauthorized", "Unreachable"]

if TYPE_CHECKING:
    from vcflow.store import Store

    def _implements_store(kube: KubeStore) -> Store:
        """mypy proves KubeStore satisfies the Store protocol."""
        return kube
