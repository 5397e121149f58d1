"""The 20-job flow `server_bench.py` and `kube_bench.py` run: 5 layers of 4 entries, each
entry after every entry of the layer before (`t00` … `t43`)."""

from __future__ import annotations

from typing import Any

FLOW = "/apis/flow.volcano.sh/v1alpha1/namespaces/default"
LAYERS, WIDTH = 5, 4
ENTRIES = [f"t{layer}{i}" for layer in range(LAYERS) for i in range(WIDTH)]


def targets_of(entry: str) -> list[str]:
    layer = int(entry[1])
    return [] if layer == 0 else [f"t{layer - 1}{i}" for i in range(WIDTH)]


def flow(name: str) -> dict[str, Any]:
    flows: list[dict[str, Any]] = []
    for entry in ENTRIES:
        item: dict[str, Any] = {"name": entry}
        if targets_of(entry):
            item["dependsOn"] = {"targets": targets_of(entry)}
        flows.append(item)
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"jobRetainPolicy": "retain", "flows": flows},
    }
