"""The route tests start a real `vcflow server` (tests/server's fixture)."""

from tests.server.conftest import start_server

__all__ = ["start_server"]
