"""`isolation.spawn_isolated` with real processes: a bind mount at a mount point this
machine lacks (a shadow root: the host is left as it was), read-only mounts, a job's network
namespace shared by its containers and apart from another job's (the same port bound in
both), and all of it as an unprivileged user through a user namespace — that user runs a
copy of the package made in the test's own world-readable directory, so the test passes
wherever the checkout lives (a clone in a 0700 directory, as `mktemp -d` makes, included)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vcflow.podserver import isolation

SRC = str(Path(isolation.__file__).resolve().parents[2])

#: Runs in a child interpreter (as root, or as nobody): starts containers with plans given
#: as JSON on argv and prints each one's exit code.
DRIVER = textwrap.dedent(
    """
    import json, os, sys
    from vcflow.podserver import isolation
    runs = json.loads(sys.argv[1])
    log = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    pids = []
    for argv, plan in runs:
        plan["user"] = os.geteuid() != 0
        started = isolation.spawn_isolated(argv, dict(os.environ), "/", log, plan, ())
        pids.append(started)
    codes = []
    for started in pids:
        if isinstance(started, int):
            codes.append(os.waitstatus_to_exitcode(os.waitpid(started, 0)[1]))
        else:
            codes.append(list(started))
    print(json.dumps(codes))
    """
)

SERVER = (
    "import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
    " s.bind(('0.0.0.0', 29500)); s.listen(); c, _ = s.accept(); c.sendall(sys.argv[1].encode())"
)
CLIENT = (
    "import socket,sys,time\n"
    "for _ in range(500):\n"
    "    try: s = socket.create_connection((sys.argv[1], 29500)); break\n"
    "    except OSError: time.sleep(0.01)\n"
    "print(socket.gethostname(), s.recv(100).decode())"
)


def readable_package(tmp: Path) -> str:
    """A copy of the `vcflow` package in `tmp` that every user may read: the checkout's may
    be in a directory only its owner reads."""
    where = tmp / "package"
    shutil.copytree(
        Path(SRC) / "vcflow", where / "vcflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    for path in [where, *where.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return str(where)


def drive(
    runs: list[tuple[list[str], dict[str, object]]], tmp: Path, *, user: str = ""
) -> list[object]:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
    # as another user: only the copy, and no site-packages (where an editable install
    # would point back into the checkout); the driver needs nothing else
    python = [sys.executable, "-S"] if user else [sys.executable]
    done = subprocess.run(
        [*prefix, *python, "-c", DRIVER, json.dumps(runs), str(tmp / "log")],
        env={**os.environ, "PYTHONPATH": readable_package(tmp) if user else SRC},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def scenario(
    tmp: Path, py: str = sys.executable
) -> tuple[list[tuple[list[str], dict[str, object]]], Path]:
    data, out = tmp / "data", tmp / "out"
    for d in (data, out):
        d.mkdir()
        d.chmod(0o777)
    (data / "in.txt").write_text("input\n")
    hosts = tmp / "hosts"
    hosts.write_text("127.0.0.1 localhost\n127.0.0.2 j-w-0.j j-w-0\n")
    shadow = str(tmp / "root")
    mounts = [[str(data), "/no-such-dir/data", True], [str(out), "/no-such-out", False]]
    net = [[str(hosts), "/etc/hosts", True], [str(out), "/no-such-out", False]]
    script = (
        "cat /no-such-dir/data/in.txt > /no-such-out/copy.txt;"
        " touch /no-such-dir/data/x 2>/dev/null || echo ro >> /no-such-out/copy.txt"
    )
    runs: list[tuple[list[str], dict[str, object]]] = [
        (["sh", "-c", script], {"mounts": mounts, "shadow": shadow}),
        (
            [py, "-c", SERVER, "job-a"],
            {"network": "a", "hostname": "j-w-0", "mounts": net, "shadow": shadow},
        ),
        (
            [py, "-c", SERVER, "job-b"],
            {"network": "b", "hostname": "j-w-0", "mounts": net, "shadow": shadow},
        ),
        (
            ["sh", "-c", f"{py} -c '{CLIENT}' j-w-0.j > /no-such-out/a.txt"],
            {"network": "a", "hostname": "j-w-1", "mounts": net, "shadow": shadow},
        ),
        (
            ["sh", "-c", f"{py} -c '{CLIENT}' j-w-0.j > /no-such-out/b.txt"],
            {"network": "b", "hostname": "j-w-1", "mounts": net, "shadow": shadow},
        ),
        (["no-such-program"], {"mounts": mounts, "shadow": shadow}),
    ]
    return runs, out


def check(codes: list[object], out: Path) -> None:
    assert codes[:5] == [0, 0, 0, 0, 0], (out.parent / "log").read_text()
    assert codes[5] == [127, 'exec: "no-such-program": executable file not found in $PATH']
    assert (out / "copy.txt").read_text() == "input\nro\n"
    assert (out / "a.txt").read_text() == "j-w-1 job-a\n"  # the same port, two jobs apart
    assert (out / "b.txt").read_text() == "j-w-1 job-b\n"
    assert not os.path.exists("/no-such-dir") and not os.path.exists("/no-such-out")


needs_namespaces = pytest.mark.skipif(not isolation.usable(), reason="no private namespaces here")


@needs_namespaces
def test_mounts_and_job_networks(tmp_path: Path) -> None:
    runs, out = scenario(tmp_path)
    check(drive(runs, tmp_path), out)


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
    reason="needs root (to become an unprivileged user) and /usr/bin/python3",
)
def test_the_same_as_an_unprivileged_user_through_a_user_namespace(tmp_path: Path) -> None:
    tmp_path.chmod(0o777)
    for parent in tmp_path.parents:
        if str(parent).startswith("/tmp/"):
            parent.chmod(parent.stat().st_mode | 0o005)
    probe = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "unshare",
            "-U",
            "-r",
            "-m",
            "-n",
            "true",
        ],
        capture_output=True,
        timeout=10,
    )
    if probe.returncode != 0:
        pytest.skip("unprivileged user namespaces are not allowed on this machine")
    # the system's interpreter: an unprivileged user may not reach this one (under /root)
    runs, out = scenario(tmp_path, "/usr/bin/python3")
    check(drive(runs, tmp_path, user="65534"), out)
