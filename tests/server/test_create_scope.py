"""What a create through `vcflow server`'s API may say: a body that names no namespace
takes the URL's, one that names another is refused with kube's message; a bare Pod is
refused, with a 403 saying why, by a server whose runtime runs pods only for vcjobs (a
server without a runtime stores it, as any API server: tests/server/test_api.py)."""

from __future__ import annotations

import httpx

from .conftest import CORE, Start, jobflow, template

TEAM = "/apis/flow.volcano.sh/v1alpha1/namespaces/team1"
MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["true"]}]},
}


def test_a_create_without_a_namespace_takes_the_urls(start_server: Start) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")
    with server.client() as client:
        made = client.post(f"{TEAM}/jobtemplates", json=template("a", "true"))
        assert made.status_code == 201, made.text
        assert made.json()["metadata"]["namespace"] == "team1"
        flow = client.post(f"{TEAM}/jobflows", json=jobflow("f", "a"))
        assert flow.status_code == 201, flow.text
        assert client.get(f"{TEAM}/jobflows/f").json()["metadata"]["namespace"] == "team1"
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        assert client.post("/api/v1/namespaces/team1/configmaps", json=cm).status_code == 201
        replaced = client.put(f"{TEAM}/jobtemplates/a", json=template("a", "false"))
        assert replaced.status_code == 200, replaced.text

        other = template("b", "true")
        other["metadata"]["namespace"] = "team2"
        _refused(client.post(f"{TEAM}/jobtemplates", json=other), 400, MISMATCH)
        other["metadata"]["name"] = "a"
        _refused(client.put(f"{TEAM}/jobtemplates/a", json=other), 400, MISMATCH)
        assert (
            client.get("/apis/flow.volcano.sh/v1alpha1/jobtemplates").json()["items"][0][
                "metadata"
            ]["namespace"]
            == "team1"
        )


def test_a_bare_pod_is_refused_where_the_server_runs_pods(start_server: Start) -> None:
    server = start_server()
    with server.client() as client:
        answer = client.post(f"{CORE}/pods", json=POD)
        body = _refused(answer, 403, 'pods "p" is forbidden: vcflow server runs pods only for')
        assert "vcjob" in body["message"] and body["reason"] == "Forbidden"
        assert body["details"] == {"name": "p", "group": "", "kind": "pods"}
        assert client.post(f"{CORE}/pods?dryRun=All", json=POD).status_code == 403
        assert client.get(f"{CORE}/pods").json()["items"] == []
        assert client.get(f"{CORE}/pods/p").status_code == 404


def _refused(answer: httpx.Response, code: int, message: str) -> dict[str, object]:
    assert answer.status_code == code, answer.text
    body: dict[str, object] = answer.json()
    assert body["kind"] == "Status" and str(body["message"]).startswith(message), body
    return body
