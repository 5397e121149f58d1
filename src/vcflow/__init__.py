"""vcflow: Volcano's JobFlow — declarative DAGs of batch jobs — embedded or on Kubernetes.

    import vcflow
    result = vcflow.run("examples/jobflow/")   # apply, then run the flows on this machine
    print(result.succeeded, [(j.entry, j.phase) for j in result.all_jobs()])

The names below are loaded on first use: `import vcflow` alone stays light (the detached
pod server imports this package too).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name → the module that defines it
_LAZY = {
    "ArgumentError": "vcflow.api.errors",
    "Failure": "vcflow.local.result",
    "FlowResult": "vcflow.local.result",
    "JobResult": "vcflow.local.result",
    "LockHeld": "vcflow.local.statedir",
    "NothingToRun": "vcflow.local.running",
    "RunResult": "vcflow.local.result",
    "ValidationFailed": "vcflow.api.errors",
    "VcflowError": "vcflow.api.errors",
    "run": "vcflow.local.running",
}

__all__ = [
    "ArgumentError",
    "Failure",
    "FlowResult",
    "JobResult",
    "LockHeld",
    "NothingToRun",
    "RunResult",
    "ValidationFailed",
    "VcflowError",
    "__version__",
    "run",
]

if TYPE_CHECKING:
    from vcflow.api.errors import ArgumentError, ValidationFailed, VcflowError
    from vcflow.local.result import Failure, FlowResult, JobResult, RunResult
    from vcflow.local.running import NothingToRun, run
    from vcflow.local.statedir import LockHeld


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vcflow' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
