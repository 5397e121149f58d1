"""How a running server tells clients where it is: `<state dir>/server.json` (`url`, `pid`,
`tokenFile`, `caFile`) for vcflow's CLI, and `<state dir>/kubeconfig` (cluster, user and
context `vcflow`, namespace default) for kubectl and the Kubernetes clients. Both are
owner-only, written atomically and never through a link (`podserver.podfs`), and removed when
the server stops cleanly. Used by `serve`; clients find the running server with
`running(state_dir)`.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from vcflow.local import statedir
from vcflow.podserver import podfs

SERVER_FILE = "server.json"
KUBECONFIG = "kubeconfig"
NAME = "vcflow"
LOCK = statedir.LOCK_FILE


@dataclass(frozen=True)
class Advert:
    url: str
    pid: int
    token_file: Path | None = None
    ca_file: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "pid": self.pid,
            "tokenFile": str(self.token_file) if self.token_file else None,
            "caFile": str(self.ca_file) if self.ca_file else None,
        }


def kubeconfig(advert: Advert, token: str | None) -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": advert.url}
    if advert.ca_file is not None:
        cluster["certificate-authority"] = str(advert.ca_file)
    user: dict[str, Any] = {"token": token} if token else {}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": cluster}],
        "users": [{"name": NAME, "user": user}],
        "contexts": [
            {"name": NAME, "context": {"cluster": NAME, "user": NAME, "namespace": "default"}}
        ],
        "current-context": NAME,
        "preferences": {},
    }


def publish(state_dir: Path, advert: Advert, token: str | None) -> Path:
    """Write server.json and the kubeconfig; the kubeconfig's path."""
    config = state_dir / KUBECONFIG
    text = yaml.safe_dump(kubeconfig(advert, token), sort_keys=False)
    podfs.write_bytes(str(config), text.encode())
    body = json.dumps(advert.to_dict(), indent=2) + "\n"
    podfs.write_bytes(str(state_dir / SERVER_FILE), body.encode())
    return config


def withdraw(state_dir: Path, pid: int) -> None:
    """Remove both files, if they are still this server's (`pid`)."""
    found = read_server_file(state_dir)
    if found is not None and found.get("pid") != pid:
        return
    for name in (SERVER_FILE, KUBECONFIG):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(state_dir / name)


def read_server_file(state_dir: Path) -> dict[str, Any] | None:
    """The server.json of `state_dir` (None if absent or unreadable)."""
    found = podfs.read_json(str(state_dir / SERVER_FILE))
    return found if isinstance(found, dict) else None


def running(state_dir: Path) -> Advert | None:
    """The advert of the server that runs on `state_dir` now, or None. A server killed
    with SIGKILL leaves its server.json behind: it counts only while its pid holds the
    state directory's controller lock with the role `server`."""
    found = read_server_file(state_dir)
    if found is None or not isinstance(found.get("url"), str) or not (state_dir / LOCK).exists():
        return None
    lock = statedir.ControllerLock(state_dir)
    try:
        if lock.try_acquire():  # (free: nobody runs there; released at once)
            return None
        pid, role = lock.holder()
    finally:
        lock.release()
    if pid is None or role != statedir.SERVER or pid != found.get("pid"):
        return None
    token, ca = found.get("tokenFile"), found.get("caFile")
    return Advert(
        url=found["url"],
        pid=pid,
        token_file=Path(token) if isinstance(token, str) else None,
        ca_file=Path(ca) if isinstance(ca, str) else None,
    )
