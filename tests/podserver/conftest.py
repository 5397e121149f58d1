"""The pod server is driven as the runtime drives it, through a `PodRunner`: its fixture and
helpers are the runtime tests' (tests/runtime/conftest.py)."""

from tests.runtime.conftest import runner  # noqa: F401
