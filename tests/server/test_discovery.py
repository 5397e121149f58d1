"""Discovery as kubectl and the Kubernetes clients read it: `/api`, `/apis` (legacy and the
aggregated apidiscovery.k8s.io/v2 form), `/api/v1`, `/apis/G/V` with kinds, verbs, short
names, categories and subresources, and `/version`."""

from __future__ import annotations

import re
from typing import Any

import pytest
from kubernetes import config as k8s_config
from kubernetes import dynamic
from starlette.applications import Starlette
from tests.server.asgi import Client

from vcflow.server import discovery

from .conftest import Start

KUBECTL_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


@pytest.fixture
def client() -> Client:
    return Client(Starlette(routes=discovery.routes()))


def by_name(listed: list[dict[str, Any]], key: str = "name") -> dict[str, dict[str, Any]]:
    return {entry[key]: entry for entry in listed}


def test_api_lists_the_core_version(client: Client) -> None:
    body = client.get("/api").json()
    assert body["kind"] == "APIVersions"
    assert body["versions"] == ["v1"]


def test_apis_lists_each_group_with_its_preferred_version(client: Client) -> None:
    body = client.get("/apis", headers={"accept": "application/json"}).json()
    assert body["kind"] == "APIGroupList"
    groups = by_name(body["groups"])
    assert {"flow.volcano.sh", "batch.volcano.sh", "bus.volcano.sh"} <= set(groups)
    assert "events.k8s.io" in groups  # (the events API: core Events' storage)
    assert "coordination.k8s.io" in groups  # (the Lease, for the operator)
    assert groups["flow.volcano.sh"]["preferredVersion"] == {
        "groupVersion": "flow.volcano.sh/v1alpha1",
        "version": "v1alpha1",
    }
    assert client.get("/apis/flow.volcano.sh").json()["kind"] == "APIGroup"


def test_a_group_version_lists_kinds_short_names_verbs_and_subresources(
    client: Client,
) -> None:
    body = client.get("/apis/flow.volcano.sh/v1alpha1").json()
    assert body["kind"] == "APIResourceList"
    assert body["groupVersion"] == "flow.volcano.sh/v1alpha1"
    listed = by_name(body["resources"])
    assert set(listed) == {"jobflows", "jobflows/status", "jobtemplates", "jobtemplates/status"}
    jf = listed["jobflows"]
    assert (jf["kind"], jf["singularName"], jf["namespaced"]) == ("JobFlow", "jobflow", True)
    assert jf["shortNames"] == ["jf"]
    assert {"create", "delete", "get", "list", "patch", "update", "watch"} <= set(jf["verbs"])
    assert "categories" not in jf  # Volcano's CRDs declare none
    assert listed["jobflows/status"]["verbs"] == ["get", "patch", "update"]
    jobs = by_name(client.get("/apis/batch.volcano.sh/v1alpha1").json()["resources"])
    assert jobs["jobs"]["shortNames"] == ["vcjob", "vj"]


def test_the_core_version_has_pods_with_log_and_category_all(client: Client) -> None:
    listed = by_name(client.get("/api/v1").json()["resources"])
    assert listed["pods"]["categories"] == ["all"]
    assert listed["pods"]["shortNames"] == ["po"]
    assert listed["pods/log"] == {
        "name": "pods/log",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get"],
    }
    assert listed["pods/binding"]["kind"] == "Binding"
    assert {"configmaps", "secrets", "events"} <= set(listed)


def test_kubectl_gets_the_aggregated_form_when_it_asks(client: Client) -> None:
    answer = client.get("/apis", headers={"accept": KUBECTL_ACCEPT})
    assert answer.headers["content-type"] == discovery.AGGREGATED
    body = answer.json()
    assert (body["kind"], body["apiVersion"]) == (
        "APIGroupDiscoveryList",
        "apidiscovery.k8s.io/v2",
    )
    groups = {item["metadata"]["name"]: item for item in body["items"]}
    (version,) = groups["flow.volcano.sh"]["versions"]
    jf = by_name(version["resources"], "resource")["jobflows"]
    assert jf["responseKind"] == {
        "group": "flow.volcano.sh",
        "version": "v1alpha1",
        "kind": "JobFlow",
    }
    assert (jf["scope"], jf["singularResource"], jf["shortNames"]) == (
        "Namespaced",
        "jobflow",
        ["jf"],
    )
    assert jf["subresources"][0]["subresource"] == "status"
    core = client.get("/api", headers={"accept": KUBECTL_ACCEPT}).json()
    (item,) = core["items"]
    assert item["metadata"] == {}
    pods = by_name(item["versions"][0]["resources"], "resource")["pods"]
    assert [s["subresource"] for s in pods["subresources"]] == ["status", "log", "binding"]


def test_only_v2beta1_offered_gets_the_legacy_form(client: Client) -> None:
    accept = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    answer = client.get("/apis", headers={"accept": accept})
    assert answer.json()["kind"] == "APIGroupList"


@pytest.mark.parametrize(
    "path", ["/apis/nope.io/v1", "/apis/flow.volcano.sh/v9", "/api/v2", "/apis/nope.io"]
)
def test_an_unserved_group_version_is_a_not_found_status(client: Client, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    assert answer.json()["reason"] == "NotFound"


def test_version_is_a_kubernetes_version_with_vcflow_as_build_metadata(client: Client) -> None:
    info = client.get("/version").json()
    assert (info["major"], info["minor"]) == ("1", "30")
    semver = r"v(\d+)\.(\d+)\.(\d+)\+vcflow\.[0-9A-Za-z.-]+"
    match = re.fullmatch(semver, info["gitVersion"])
    assert match is not None and match.groups() == ("1", "30", "0")
    assert info["gitVersion"].endswith(discovery.vcflow_version())


def test_the_official_clients_dynamic_client_discovers_the_kinds(start_server: Start) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")
    api = k8s_config.new_client_from_config(str(server.state_dir / "kubeconfig"))
    try:
        found = dynamic.DynamicClient(api)
        flows = found.resources.get(api_version="flow.volcano.sh/v1alpha1", kind="JobFlow")
        assert (flows.name, flows.short_names, flows.namespaced) == ("jobflows", ["jf"], True)
        assert list(flows.subresources) == ["status"]
        assert flows.get(namespace="default").kind == "JobFlowList"
        pods = found.resources.get(api_version="v1", kind="Pod")
        assert list(pods.subresources) == ["status", "log", "binding"]
    finally:
        api.close()
