"""The official `kubernetes` Python client against a real `vcflow server`, configured from
the kubeconfig the server writes: CustomObjectsApi create, list, watch from a
resourceVersion (and the ApiException(410) of a too-old one), patch, delete; CoreV1Api's
pod log with follow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config, watch
from kubernetes.client.rest import ApiException

from vcflow.api.config import ConfigMap
from vcflow.api.meta import ObjectMeta
from vcflow.store import SqliteStore

from .conftest import Server, Start, jobflow, template, wait_until

GROUP, VERSION = "flow.volcano.sh", "v1alpha1"


def api_client(server: Server) -> k8s.ApiClient:
    return config.new_client_from_config(config_file=str(server.state_dir / "kubeconfig"))


@pytest.fixture
def custom(start_server: Start) -> Iterator[k8s.CustomObjectsApi]:
    server = start_server("--runtime", "none", "--controllers", "off")
    with api_client(server) as found:
        yield k8s.CustomObjectsApi(found)


def test_custom_objects_create_list_watch_patch_delete(custom: k8s.CustomObjectsApi) -> None:
    args = (GROUP, VERSION, "default", "jobtemplates")
    made = custom.create_namespaced_custom_object(*args, template("a", "true"))
    assert made["metadata"]["name"] == "a"
    listed = custom.list_namespaced_custom_object(*args)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    rv = listed["metadata"]["resourceVersion"]
    custom.patch_namespaced_custom_object(*args, "a", {"metadata": {"labels": {"k": "v"}}})
    custom.create_namespaced_custom_object(*args, template("b", "true"))
    custom.delete_namespaced_custom_object(*args, "a")
    seen = []
    stream = watch.Watch().stream(
        custom.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=2
    )
    for event in stream:
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if len(seen) == 3:
            break
    stream.close()  # (the response goes back to the pool)
    assert seen == [("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    with pytest.raises(ApiException) as missing:
        custom.get_namespaced_custom_object(*args, "a")
    assert missing.value.status == 404
    with pytest.raises(ApiException) as invalid:
        custom.create_namespaced_custom_object(
            GROUP, VERSION, "default", "jobflows", jobflow("f", "x<x")
        )
    assert invalid.value.status == 422 and "jobflow Flow is not DAG" in str(invalid.value.body)


def test_a_watch_from_a_compacted_version_raises_410(start_server: Start, tmp_path: Path) -> None:
    with SqliteStore.in_state_dir(tmp_path / "state", event_retention=5) as store:
        for i in range(40):
            store.create(ConfigMap(metadata=ObjectMeta(name=f"c{i}", namespace="default")))
    server = start_server("--runtime", "none", "--controllers", "off")
    with api_client(server) as found:
        core = k8s.CoreV1Api(found)
        with pytest.raises(ApiException) as gone:
            for _ in watch.Watch().stream(
                core.list_namespaced_config_map, "default", resource_version="2", timeout_seconds=5
            ):
                pass
    assert gone.value.status == 410


def test_pod_log_with_follow(start_server: Start, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    server = start_server()
    script = f"echo one; while [ ! -e {gate} ]; do sleep 0.05; done; echo two"
    with api_client(server) as found:
        custom = k8s.CustomObjectsApi(found)
        core = k8s.CoreV1Api(found)
        custom.create_namespaced_custom_object(
            GROUP, VERSION, "default", "jobtemplates", template("a", script)
        )
        custom.create_namespaced_custom_object(
            GROUP, VERSION, "default", "jobflows", jobflow("f", "a")
        )
        wait_until(lambda: _log(core) == "one\n", "the pod's first line")
        answer = core.read_namespaced_pod_log(
            "f-a-t-0", "default", follow=True, _preload_content=False
        )
        chunks = answer.stream(64)
        assert next(chunks) == b"one\n"
        gate.touch()
        assert b"".join(chunks) == b"two\n"
        answer.release_conn()


def _log(core: k8s.CoreV1Api) -> str:
    try:
        return str(core.read_namespaced_pod_log("f-a-t-0", "default"))
    except ApiException:
        return ""
