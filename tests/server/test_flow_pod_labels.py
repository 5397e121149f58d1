"""Through a real `vcflow server`, a real kubectl finds a flow's pods by the flow's label:
`kubectl logs -l volcano.sh/createdByJobFlow=default.test --prefix` prints the log of
every pod of the flow, each line prefixed with its pod, and none of another flow's
(issue 25, defect 5)."""

from __future__ import annotations

from pathlib import Path

import yaml

from .conftest import Start, flow_phase, jobflow, template, wait_until
from .test_kubectl import Kubectl, kubectl_binary


def test_kubectl_logs_by_the_flow_label_shows_the_flows_logs(
    start_server: Start, tmp_path: Path
) -> None:
    manifest = tmp_path / "flows.yaml"
    objects = [
        template("a", "echo from-a"),
        template("b", "echo from-b"),
        jobflow("test", "a", "b<a"),
        jobflow("other", "a"),
    ]
    manifest.write_text(yaml.safe_dump_all(objects))
    server = start_server()
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "KUBECONFIG": str(server.state_dir / "kubeconfig")}
    kube = Kubectl(kubectl_binary(), env)
    kube.ok("apply", "-f", str(manifest))
    with server.client() as client:
        for name in ("test", "other"):
            wait_until(lambda n=name: flow_phase(client, n) == "Succeed", f"flow {name}")
    selector = "volcano.sh/createdByJobFlow=default.test"
    shown = kube.ok("get", "pods", "-l", selector, "-o", "name").split()
    assert sorted(shown) == ["pod/test-a-t-0", "pod/test-b-t-0"]
    logs = kube.ok("logs", "-l", selector, "--prefix")
    assert sorted(logs.splitlines()) == [
        "[pod/test-a-t-0/main] from-a",
        "[pod/test-b-t-0/main] from-b",
    ]
