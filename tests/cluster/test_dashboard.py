"""`vcflow dashboard --kubeconfig F` over the real control plane (tests/cluster/deployed.py:
kube-apiserver, Volcano, kwok nodes, `vcflow operator` running the flow), as a user of a
cluster opens it: it listens on 127.0.0.1 and prints its login link; after `POST /ui/login`
(the cookie a browser keeps) its list shows a flow the operator ran in a fresh namespace and
its graph route that flow's entries; a kwok pod's log — the API server cannot read one: kwok
runs no containers and serves no kubelet API (tests/cluster/test_cli.py) — is refused at
once with the API server's reason as a JSON Status, followed or not; without the cookie the
list is refused 401; SIGTERM ends it with exit 0 and nothing of it left running."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.cluster.deployed import Scene, jobflow, template
from tests.dashboard.hosted import hosted_dashboard

UI = "/ui/api"
#: how long a log request may take: a refusal, not a hang (it comes in milliseconds)
PROMPT = 20.0


def test_the_dashboard_over_the_cluster_shows_a_flow_and_refuses_what_it_cannot(
    scene: Scene, tmp_path: Path
) -> None:
    scene.operator()
    ns = scene.namespace
    scene.apply(template("a", replicas=2), template("b"), jobflow("d", "a", "b<a"))
    graph_path = f"{UI}/namespaces/{ns}/jobflows/d"
    with hosted_dashboard(scene.cluster.kubeconfig, tmp_path) as dash:
        assert dash.url.startswith("http://127.0.0.1:"), dash.url
        with dash.client(token=False) as browser:
            refused = browser.get(UI + "/flows")
            assert refused.status_code == 401, refused.text
            assert refused.json()["kind"] == "Status"
            login = browser.post("/ui/login", json={"token": dash.token})
            assert login.status_code == 204, login.text
            assert browser.cookies.get("vcflow-dashboard")

            def row() -> dict[str, Any] | None:
                listed = browser.get(UI + "/flows")
                assert listed.status_code == 200, listed.text
                mine = [r for r in listed.json()["flows"] if r["namespace"] == ns]
                return mine[0] if mine and mine[0]["phase"] == "Succeed" else None

            found = scene.wait(row, f"the dashboard to list jobflow {ns}/d as Succeed")
            assert (found["name"], found["done"], found["total"]) == ("d", 2, 2)
            only = browser.get(UI + "/flows", params={"namespace": ns}).json()["flows"]
            assert [(r["namespace"], r["name"]) for r in only] == [(ns, "d")]

            graph = browser.get(graph_path)
            assert graph.status_code == 200, graph.text
            shown = graph.json()
            assert (shown["flow"]["name"], shown["flow"]["phase"]) == ("d", "Succeed")
            assert [(n["id"], n["phase"]) for n in shown["nodes"]] == [  # (their vcjobs')
                ("a", "Completed"),
                ("b", "Completed"),
            ]
            assert [(e["source"], e["target"]) for e in shown["edges"]] == [("a", "b")]

            pods = sorted(p["metadata"]["name"] for p in scene.pods("volcano.sh/job-name=d-a"))
            assert pods == ["d-a-work-0", "d-a-work-1"]
            [node] = {
                p["spec"]["nodeName"]
                for p in scene.pods("volcano.sh/job-name=d-a")
                if p["metadata"]["name"] == pods[0]
            }
            theirs = scene.kubectl.run("-n", ns, "logs", pods[0])
            assert theirs.returncode == 1, theirs.stdout
            said = theirs.stderr.strip().split(": ", 1)[1]  # no preferred addresses found; ...
            log_path = f"{UI}/namespaces/{ns}/pods/{pods[0]}/log"
            for query in ({}, {"follow": "1"}):
                log = browser.get(log_path, params=query, timeout=PROMPT)
                assert log.status_code == 500, (query, log.status_code, log.text)
                assert log.headers["content-type"] == "application/json"
                status = log.json()
                said_as = (status["kind"], status["code"], status["reason"])
                assert said_as == ("Status", 500, "InternalError"), status
                assert said in status["message"], (said, status)
                # (and says why: the kubelet of the pod's node, a kwok one, gives no log)
                assert status["message"].endswith(f"kubelet of node {node}, and could not)")
            missing = browser.get(f"{UI}/namespaces/{ns}/pods/nope/log", timeout=PROMPT)
            assert missing.status_code == 404 and missing.json()["kind"] == "Status"

        with dash.client(token=False) as anyone:  # (no cookie: a new browser)
            assert anyone.get(UI + "/flows").status_code == 401
            assert anyone.get(graph_path).status_code == 401
            assert anyone.get(log_path).status_code == 401
        assert dash.stop() == 0, dash.output()
        assert "Traceback" not in dash.output(), dash.output()
        assert not dash.leftovers()
        with pytest.raises(httpx.ConnectError):  # (its port closed)
            httpx.get(dash.url + "/", timeout=5)
