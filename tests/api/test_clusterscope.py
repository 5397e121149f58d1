"""Cluster-scoped models: a Queue or PriorityClass has namespace `""` however it was made
(a manifest naming one, an API server sending none, a caller's ObjectMeta), dumps none,
and is named without one in error messages."""

from __future__ import annotations

from vcflow.api import errors, loading
from vcflow.api.clusterscope import ClusterResource, is_cluster_scoped, scoped
from vcflow.api.errors import FieldError
from vcflow.api.meta import ObjectMeta
from vcflow.api.scheduling import PriorityClass, Queue
from vcflow.api.vcjob import VCJob

QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue"}


def test_a_queue_has_no_namespace_however_made() -> None:
    named = Queue.from_dict({**QUEUE, "metadata": {"name": "a", "namespace": "team1"}})
    bare = Queue.from_dict({**QUEUE, "metadata": {"name": "a"}})
    built = Queue(metadata=ObjectMeta(name="a", labels={"k": "v"}))
    for queue in (named, bare, built, named.clone()):
        assert queue.namespace == ""
        assert "namespace" not in queue.to_dict()["metadata"]
    assert built.to_dict()["metadata"] == {"name": "a", "labels": {"k": "v"}}


def test_scope_of_models() -> None:
    assert is_cluster_scoped(Queue) and is_cluster_scoped(PriorityClass)
    assert not is_cluster_scoped(VCJob)
    assert (scoped(Queue, "team1"), scoped(VCJob, "team1")) == ("", "team1")


def test_every_cluster_scoped_kind_is_named_without_a_namespace() -> None:
    kinds = {m.model_fields["kind"].default for m in loading.MODELS.values()}
    cluster = {
        m.model_fields["kind"].default
        for m in loading.MODELS.values()
        if issubclass(m, ClusterResource)
    }
    assert cluster == errors.CLUSTER_KINDS and cluster < kinds
    error = FieldError("Invalid value", "spec.weight", "Queue", "", "q")
    assert str(error) == "Queue q: spec.weight: Invalid value"
    assert str(FieldError("x", "", "JobFlow", "", "f")) == "JobFlow default/f: x"
