"""Pausing CPython's cyclic garbage collector around bursts of model work."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Pause the cyclic GC for the block.

    Parsing or building thousands of models allocates millions of containers; CPython 3.11's
    collections then run again and again over the growing heap and cost several times the
    work itself. The models are acyclic, so nothing is left for the GC; it is re-enabled
    afterwards (only if it was on: a caller that disabled it keeps it off).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
