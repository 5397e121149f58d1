"""The table of API resources: every kind the store holds is served at Kubernetes' path."""

from __future__ import annotations

from vcflow.kubeapi import resources
from vcflow.store.base import default_kinds


def test_every_stored_kind_is_a_served_resource() -> None:
    for info in default_kinds().all():
        resource = resources.of_model(info.model)
        assert (resource.api_version, resource.kind) == (info.api_version, info.kind)


def test_paths_follow_the_kubernetes_api() -> None:
    assert resources.JOBFLOWS.path("default", "test", "status") == (
        "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows/test/status"
    )
    assert resources.PODS.path(None) == "/api/v1/pods"
    assert resources.find("batch.volcano.sh", "v1alpha1", "jobs") is resources.VCJOBS
    assert resources.find("", "v1", "jobs") is None
    assert [r.kind for r in resources.group_versions()["flow.volcano.sh/v1alpha1"]] == [
        "JobFlow",
        "JobTemplate",
    ]
