"""Tier 6: the HTTP shell of the processes that serve (`vcflow server`, `vcflow webhook`,
`vcflow operator`'s ports), written once: who may reach them (`exposure`: the loopback rule,
the token file), their TLS files (`tls`), the listening socket (`listening`), log levels
(`logs`), uvicorn run until SIGTERM/SIGINT (`shell`) and the small GET endpoints on threads
(`endpoints`). A start any of them refuses is a `Refused`: its one line on stderr, exit 1.

Submodules are imported one by one: `logs` (the CLI's, at every start) loads no web stack.
"""

from __future__ import annotations

from vcflow.api.errors import InputError


class Refused(InputError):
    """A start the exposure rule does not allow, or that cannot listen or load its TLS
    files (exit 1, the message alone on stderr)."""
