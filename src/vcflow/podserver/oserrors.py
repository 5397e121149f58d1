"""An OSError as one line naming the path, as users read it (`no space left on device:
<path>`): for a pod that cannot be launched (`node`) and a status its supervisor cannot
write (`supervisor`). Standard library only: the pod server imports it.
"""

from __future__ import annotations

import errno
import os

#: The errors of a full disk (or quota): what is written again once there is room.
FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def describe(exc: OSError, where: str | os.PathLike[str]) -> str:
    """`<the error, lower case>: <its path, else where>`."""
    text = os.strerror(exc.errno) if exc.errno else str(exc)
    path = exc.filename if exc.filename is not None else where
    return f"{text[:1].lower()}{text[1:]}: {os.fsdecode(path)}"


def is_full(exc: OSError) -> bool:
    return exc.errno in FULL
