"""Kubernetes mode with real pods, for an example's flow: the example copied to a temp dir
(the directory its pods start in), `vcflow server --runtime local --controllers off` on it —
the API server and, with real pods, Volcano's job controller and the kubelet — for `vcflow
operator` to run the JobFlow controller; and the flow read back over the API."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.server.conftest import Server, Start

EXAMPLES = Path(__file__).parents[2] / "examples"
FLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"


def copy_example(tmp_path: Path, name: str) -> Path:
    found = tmp_path / name
    shutil.copytree(EXAMPLES / name, found)
    return found


def local_runtime_server(start_server: Start, project: Path) -> Server:
    """The API server with the local runtime (real pods) and no JobFlow controller: the
    operator's part."""
    return start_server(
        "--runtime", "local", "--controllers", "off", "--working-dir", str(project)
    )  # fmt: skip


def read_flow(api: Server, name: str) -> dict[str, Any]:
    with api.client() as client:
        found = client.get(f"{FLOWS}/{name}")
    assert found.status_code == 200, found.text
    return dict(found.json())
