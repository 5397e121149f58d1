"""The host environment a container process starts from: the environment of the process
that launches the pod (`vcflow run`, `vcflow controller`), less what would mislead it.
`launch.build_spec` puts the container's own `env` on top.

Passed: everything else — `PATH`, `HOME`, `VIRTUAL_ENV`, `CONDA_*`, `CUDA_*`, `LD_LIBRARY_PATH`,
proxies, locale — so a virtualenv's `python3` and the machine's toolchains work as in a shell.

Not passed:
- `VCFLOW_*`: vcflow's own settings (a state directory, say) are not the job's; a job that
  runs vcflow itself sets what it needs in its `env`;
- `PWD`, `OLDPWD`, `SHLVL`, `_`: the shell's view of itself, wrong in the container (which
  starts in its own working directory);
- `LISTEN_PID`, `LISTEN_FDS`, `LISTEN_FDNAMES`, `NOTIFY_SOCKET`: systemd's socket activation
  and notification, addressed to the launching process, not to its pods.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

EXCLUDED = frozenset(
    {"PWD", "OLDPWD", "SHLVL", "_", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET"}
)
EXCLUDED_PREFIX = "VCFLOW_"


def passed(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` a container inherits (see the module docstring)."""
    return {
        k: v for k, v in environ.items() if k not in EXCLUDED and not k.startswith(EXCLUDED_PREFIX)
    }


_cached: tuple[tuple[tuple[str, str], ...], dict[str, str]] | None = None


def of_process() -> dict[str, str]:
    """`passed(os.environ)`, worked out again only when this process's environment changed
    (a pod is launched per job: reading `os.environ` decodes every variable each time). A
    copy: the caller may add to it."""
    global _cached
    current = tuple(os.environ._data.items()) if hasattr(os.environ, "_data") else None
    if _cached is None or current is None or _cached[0] != current:
        found = passed(os.environ)
        if current is None:
            return found
        _cached = (current, found)
    return dict(_cached[1])
