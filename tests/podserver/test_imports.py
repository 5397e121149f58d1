"""The detached pod server loads only its own modules and the standard library: it starts at
every first launch, and a pod server that imported the control plane (pydantic, the store)
would start slower and could break with it. The import-linter contract checks the imports
the modules make; this checks what a fresh interpreter loads, package `__init__`s included."""

from __future__ import annotations

import json
import subprocess
import sys

POD_SERVER_SIDE = {
    "vcflow",
    "vcflow.podserver",
    "vcflow.podserver.server",
    "vcflow.podserver.supervisor",
    "vcflow.podserver.reaper",
    "vcflow.podserver.spawn",
    "vcflow.podserver.podfs",
    "vcflow.podserver.statusfile",
    "vcflow.podserver.descendants",
    "vcflow.podserver.logrotate",
    "vcflow.podserver.logtimes",
    "vcflow.podserver.oserrors",
    "vcflow.podserver.ownership",
    "vcflow.podserver.seals",
}


def test_the_pod_server_loads_only_itself_and_the_standard_library() -> None:
    script = (
        "import json, sys; before = set(sys.modules); import vcflow.podserver.server; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    ours = {m for m in loaded if m == "vcflow" or m.startswith("vcflow.")}
    assert ours == POD_SERVER_SIDE
    foreign = {m.split(".")[0] for m in loaded} - {"vcflow"} - set(sys.stdlib_module_names)
    assert not foreign
