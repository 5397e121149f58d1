"""kubectl 1.33+ sends the built-in objects its typed clients write as Kubernetes protobuf:
`kubectl create configmap` and `create secret` against `vcflow server` were refused
(`the body of the request was in an unknown format`); they are read as the JSON they
mean, data, binary data, labels and secret types included."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from .test_kubectl import Make, kubectl

__all__ = ["kubectl"]  # (the fixture, used by name)


def test_create_configmap_and_secret(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    blob = tmp_path / "bin.dat"
    blob.write_bytes(b"x\x00\xff")
    made = kube.ok(
        "create",
        "configmap",
        "hp",
        "--from-literal=lr=0.5",
        "--from-literal=empty=",
        f"--from-file={blob}",
    )
    assert made == "configmap/hp created\n"
    cm = json.loads(kube.ok("get", "cm", "hp", "-o", "json"))
    assert cm["data"] == {"lr": "0.5", "empty": ""}
    assert base64.b64decode(cm["binaryData"]["bin.dat"]) == b"x\x00\xff"
    assert "generateName" not in cm["metadata"]
    assert kube.ok("create", "secret", "generic", "s", "--from-literal=p=q") == "secret/s created\n"
    secret = json.loads(kube.ok("get", "secret", "s", "-o", "json"))
    assert (secret["type"], base64.b64decode(secret["data"]["p"])) == ("Opaque", b"q")
    kube.ok(
        "create",
        "secret",
        "docker-registry",
        "reg",
        "--docker-server=r.io",
        "--docker-username=u",
        "--docker-password=p",
    )
    assert kube.ok("get", "secret", "reg", "-o", "jsonpath={.type}") == (
        "kubernetes.io/dockerconfigjson"
    )


def test_create_priorityclass_and_namespace(kubectl: Make) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    kube.ok(
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=hi",
        "--preemption-policy=Never",
    )
    kube.ok("create", "priorityclass", "low", "--value=-5")
    classes = {
        c["metadata"]["name"]: (c["value"], c.get("description"), c["preemptionPolicy"])
        for c in json.loads(kube.ok("get", "pc", "-o", "json"))["items"]
    }
    assert classes == {
        "high": (1000, "hi", "Never"),
        "low": (-5, None, "PreemptLowerPriority"),
    }
    # (namespaces need no creating: it says so, where it was a 404 that read as broken)
    refused = kube.run("create", "namespace", "team-a")
    assert (refused.returncode, refused.stderr) == (
        1,
        "Error from server (BadRequest): vcflow server keeps no Namespace objects: a "
        "namespace exists once an object is created in it (kubectl apply -n NAMESPACE -f "
        "...)\n",
    )
