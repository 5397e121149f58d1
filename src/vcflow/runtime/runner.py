"""The interface the runtime shell (`node.Node`) runs pods through: a `Runner` and the
`Handle`s it gives back. `pods.PodRunner` runs them as local processes (its handles are
`status.PodHandle`s); the conformance harness's simulated kubelet runs none and moves them
only as a case says (`conformance.kubelet_sim`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from vcflow.runtime.launch import PodRequest
from vcflow.runtime.status import RunStatus


class Handle(Protocol):
    """One launched pod."""

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def last(self) -> RunStatus | None:
        """Its status as of its latest read (`launch`, `adopt`, `wait`)."""

    @property
    def uid(self) -> str:
        """The uid of the pod it was launched for ('' if unknown)."""


H = TypeVar("H", bound=Handle)


class Runner(Protocol[H]):
    def pod_dir(self, namespace: str, name: str) -> Path:
        """Where the pod's files are (what its processes are told, `kubelet_bridge`)."""

    def launch(self, request: PodRequest) -> H:
        """Start the pod unless it was launched before (then: a handle on that run);
        LaunchError when it cannot run here."""

    def adopt(self, namespace: str, name: str) -> H | None:
        """A handle on a launched pod (after a restart, say); None if it never was."""

    def wait(self, handles: Sequence[H], timeout: float | None) -> list[H]:
        """The handles whose status changed since their `last` (now updated), waiting up to
        `timeout` seconds for one."""

    def terminate(self, handle: H, grace_seconds: float) -> None:
        """Ask the pod to stop (SIGKILL after `grace_seconds`); returns at once, `wait`
        sees the end."""

    def remove(self, handle: H) -> bool:
        """Release an ended pod (its directory, logs included): True when done; False when
        the node is not done with it yet (ask again later); LaunchError if it has not
        ended."""
