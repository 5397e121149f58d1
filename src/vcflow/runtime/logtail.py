"""The last lines of a log, read from its end: `vcflow logs --tail N`, `-f --tail N` and the
run report's lines of a failed container cost the lines asked for, not the file (`logs`).
"""

from __future__ import annotations

import os
from typing import BinaryIO

BLOCK = 65536


def last_lines(source: BinaryIO, lines: int) -> bytes:
    """The last `lines` lines of `source` (an open file; lines end at `\\n`, `\\r\\n` or `\\r`,
    as `bytes.splitlines` has them; a last line without one counts), read from its end in
    doubling blocks; `source` is left at its end."""
    size = os.fstat(source.fileno()).st_size
    if lines <= 0:
        source.seek(size)
        return b""
    span = BLOCK
    while True:
        start = max(0, size - span)
        source.seek(start)
        data = source.read(size - start)
        parts = data.splitlines(keepends=True)
        # (the first part may be cut: enough only with one more part than asked for)
        if len(parts) > lines or start == 0:
            return b"".join(parts[-lines:])
        span *= 2
