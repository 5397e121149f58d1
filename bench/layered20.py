"""The 20-job flow `server_bench.py` and `kube_bench.py` run: 5 layers of 4 entries, each
entry after every entry of the layer before (`t00` … `t43`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

FLOW = "/apis/flow.volcano.sh/v1alpha1/namespaces/default"
LAYERS, WIDTH = 5, 4
ENTRIES = [f"t{layer}{i}" for layer in range(LAYERS) for i in range(WIDTH)]


def targets_of(entry: str) -> list[str]:
    layer = int(entry[1])
    return [] if layer == 0 else [f"t{layer - 1}{i}" for i in range(WIDTH)]


def flow(
    name: str,
    entries: Sequence[str] = ENTRIES,
    targets: Callable[[str], list[str]] = targets_of,
) -> dict[str, Any]:
    """The JobFlow `name` of `entries`, each after its `targets` (by default this 20-job
    flow; kube_bench.py gives its other shapes)."""
    flows: list[dict[str, Any]] = []
    for entry in entries:
        item: dict[str, Any] = {"name": entry}
        if targets(entry):
            item["dependsOn"] = {"targets": targets(entry)}
        flows.append(item)
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"jobRetainPolicy": "retain", "flows": flows},
    }
