"""Cluster-scoped kinds (Queue, PriorityClass): objects of no namespace, as Kubernetes has
them. They are stored with namespace `""` — every key, row and URL path is still
`(namespace, name)`, so the stores need no second layout — and their models make that
so at parse: a manifest's namespace is dropped (kube-apiserver clears it too) and an
object read from a real API server, which sends none, does not take `default`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from vcflow.api.meta import ObjectMeta, Resource

#: the namespace a cluster-scoped object is stored under
CLUSTER = ""


class ClusterObjectMeta(ObjectMeta):
    """ObjectMeta whose namespace is always `""` (and so never dumped unless given)."""

    namespace: str = CLUSTER

    @model_validator(mode="after")
    def _no_namespace(self) -> ClusterObjectMeta:
        self.__dict__["namespace"] = CLUSTER
        self.__pydantic_fields_set__.discard("namespace")
        return self


class ClusterResource(Resource):
    metadata: ClusterObjectMeta = Field(default_factory=ClusterObjectMeta)

    @model_validator(mode="before")
    @classmethod
    def _plain_meta(cls, data: Any) -> Any:
        """Take an `ObjectMeta` as given (a caller building `Queue(metadata=ObjectMeta())`)."""
        if isinstance(data, dict):
            meta = data.get("metadata")
            if isinstance(meta, ObjectMeta) and not isinstance(meta, ClusterObjectMeta):
                data = {**data, "metadata": ClusterObjectMeta.model_validate(meta.to_dict())}
        return data


def is_cluster_scoped(model: type[Resource]) -> bool:
    """Whether objects of `model` have no namespace."""
    return issubclass(model, ClusterResource)


def scoped(model: type[Resource], namespace: str) -> str:
    """The namespace an object of `model` is stored under when a caller says `namespace`:
    `""` for a cluster-scoped kind, whatever was said (kubectl ignores `-n` for one)."""
    return CLUSTER if is_cluster_scoped(model) else namespace
