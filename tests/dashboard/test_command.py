"""`vcflow dashboard`: the local server's login link, or (`--kubeconfig`) the dashboard
served on a port of its own over a Kubernetes API — here the kubeconfig `vcflow server`
writes, as a cluster's would be — showing the same flows, stopping cleanly on SIGTERM;
and its refusals in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.server.conftest import DEADLINE, Start, flow_phase, jobflow, template, wait_until

from vcflow.dashboard import web

from .hosted import LINK, hosted_dashboard
from .test_routes import FLOWS, UI, create


def vcflow(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vcflow", *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


def test_without_a_kubeconfig_it_prints_the_local_server_s_link(
    start_server: Start, tmp_path: Path
) -> None:
    none = vcflow("--state-dir", str(tmp_path / "empty"), "dashboard")
    assert none.returncode == 1
    assert none.stderr.splitlines() == [
        f"vcflow dashboard: no vcflow server runs on {tmp_path / 'empty'}: start one (vcflow "
        "server), or give --kubeconfig FILE to serve the dashboard over a cluster"
    ]
    server = start_server("--runtime", "none")
    found = vcflow("--state-dir", str(server.state_dir), "dashboard")
    assert found.returncode == 0, found.stderr
    link = LINK.search(found.stdout)
    assert link is not None, found.stdout
    assert link.group(1) == server.url and link.group(2) == server.token
    wrong = vcflow("--state-dir", str(server.state_dir), "dashboard", "--port", "x")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr


def test_with_a_kubeconfig_it_serves_the_same_flows(start_server: Start, tmp_path: Path) -> None:
    server = start_server()
    with server.client() as client:
        create(client, jobflow("seen", "one"), template("one", "echo said-over-the-api"))
        wait_until(lambda: flow_phase(client, "seen") == "Succeed", "the flow to succeed")
    config = server.state_dir / "kubeconfig"
    with hosted_dashboard(config, tmp_path, "--read-only") as dash:
        assert dash.url.startswith("http://127.0.0.1:")
        with dash.client() as client:
            assert client.get(UI + "/session").json() == {
                "readOnly": True,
                "namespaces": None,
                "host": "cluster",
            }
            rows = client.get(UI + "/flows").json()["flows"]
            assert [(r["namespace"], r["name"]) for r in rows] == [("default", "seen")]
            graph = client.get(FLOWS + "/seen")
            assert graph.status_code == 200 and [n["id"] for n in graph.json()["nodes"]] == ["one"]
            assert graph.headers["content-security-policy"] == web.CSP
            refused = client.post(FLOWS + "/seen/stop", json={})
            assert refused.status_code == 403
            log = client.get(UI + "/namespaces/default/pods/seen-one-t-0/log")
            assert log.status_code == 200 and "said-over-the-api" in log.text
            assert client.get(UI + "/namespaces/default/pods/nope/log").status_code == 404
        with dash.client(token=False) as anyone:
            assert anyone.get(UI + "/flows").status_code == 401
            assert anyone.get("/").status_code == 200
        assert dash.stop() == 0, dash.output()
        assert "Traceback" not in dash.output()
        assert not dash.leftovers()


def test_a_non_loopback_address_needs_a_token_file_and_tls(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\n")
    refused = vcflow("dashboard", "--kubeconfig", str(config), "--address", "0.0.0.0")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        "refusing to serve the dashboard on 0.0.0.0: a non-loopback --address needs "
        "--token-file and --tls-cert/--tls-key (or listen on 127.0.0.1)"
    ]
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
    )
    away = vcflow("dashboard", "--kubeconfig", str(config), "--port", "0")
    assert away.returncode == 1
    (line,) = away.stderr.splitlines()
    assert line.startswith(f"cannot reach the Kubernetes API of {config}: ")
