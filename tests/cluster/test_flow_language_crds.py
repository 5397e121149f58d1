"""deploy/crds on a real kube-apiserver keep the flow language (docs/flow-features.md part
II): `kubectl apply` (strict field validation, kubectl's default) of examples/ml-sweep-lite's
JobFlow and JobTemplates is accepted, and `kubectl get jf -o yaml` gives back `arguments`,
`onExit`, every entry's `template`, `when`, `switch` and `patch` as written — nothing pruned
by the structural schema. The API server alone: no webhook, no operator (nothing runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from tests.cluster.deployed import kubectl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ml-sweep-lite" / "flow.yaml"


def test_the_crds_keep_the_examples_flow_language_fields(
    cluster: Any, vcflow_crds: list[str], kube_namespace: str, tmp_path: Path
) -> None:
    tool = kubectl(tmp_path / "home", cluster.kubeconfig)
    applied = tool.ok("apply", "-n", kube_namespace, "-f", str(EXAMPLE))
    objects = [o for o in yaml.safe_load_all(EXAMPLE.read_text()) if o]
    for obj in objects:
        kind = "jobflow" if obj["kind"] == "JobFlow" else "jobtemplate"
        assert f"{kind}.flow.volcano.sh/{obj['metadata']['name']} created" in applied, applied
    flow = next(o for o in objects if o["kind"] == "JobFlow")
    stored = yaml.safe_load(
        tool.ok("get", "jf", "ml-sweep-lite", "-n", kube_namespace, "-o", "yaml")
    )
    assert stored["spec"] == flow["spec"]
    entries = {e["name"]: e for e in stored["spec"]["flows"]}
    assert (
        entries["deploy"]["when"] == "double(outputs.evaluate.accuracy) >= double(args.threshold)"
    )
    assert [c.get("template") for c in entries["serve"]["switch"]] == ["serve-gpu", "serve-cpu"]
    assert stored["spec"]["onExit"] == ["notify"]
    assert [a["name"] for a in stored["spec"]["arguments"]] == ["threshold", "target"]
    for template in (o for o in objects if o["kind"] == "JobTemplate"):
        name = template["metadata"]["name"]
        got = yaml.safe_load(tool.ok("get", "jt", name, "-n", kube_namespace, "-o", "yaml"))
        container = got["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        want = template["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        assert container["command"] == want["command"], name
        assert container.get("env") == want.get("env"), name
