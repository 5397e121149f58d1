"""Start one run of one container as a process: `posix_spawn`, no shell, no image.

- argv is `command` + `args` (already `$(VAR)`-expanded by `launch`) and is exec'd directly;
  a shell runs only when the command is one (`["sh", "-c", "..."]`). argv[0] without a `/` is
  looked up in the container's own `PATH` (its process env), as a container runtime does; with
  a `/` it is relative to the working directory.
- The process gets its own process group (`setpgroup=0`, inside the pod's session), so a
  signal to the group reaches the children it starts. stdin is /dev/null; stdout and stderr
  are appended to `<pod dir>/<container>.<restart>.log`. Signals ignored by the supervisor
  (SIGPIPE, SIGXFSZ by Python, SIGHUP) are reset to their defaults, the signal mask cleared.
- A run that cannot start becomes an immediate termination, with the message in the status
  and the log (containerd's wording where it has one):

  | cause | exit code | reason |
  | --- | --- | --- |
  | no `command` (the image's entrypoint is unknown here) | 128 | NoCommand |
  | working directory missing or not a directory | 128 | ContainerCannotRun |
  | executable not found | 127 | ContainerCannotRun |
  | found but not executable (EACCES, ENOEXEC, ...) | 126 | ContainerCannotRun |
  | its termination message file cannot be made | 128 | ContainerCannotRun |

- Before it starts, the run's termination message file (`<pod dir>/<container>.termination-log`)
  is made new and empty (`podfs.reset_termination`): the supervisor copies it into the status
  when the run ends.

Exit codes follow the kubelet: the exit status, or 128+N when killed by signal N.

A container with an `isolation` plan (volumes mounted at their `mountPath`, a job's network)
is started by `isolation.spawn_isolated` instead: fork, namespaces, exec — same contract.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Any

from vcflow.podserver import ownership, podfs

NO_COMMAND, CANNOT_RUN = "NoCommand", "ContainerCannotRun"
_RESET = tuple(
    getattr(signal, name)
    for name in ("SIGPIPE", "SIGXFSZ", "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGCHLD")
    if hasattr(signal, name)
)


@dataclass(frozen=True)
class StartFailure:
    exit_code: int
    reason: str
    message: str


def exit_code(status: int) -> tuple[int, int | None]:
    """(exit code, signal) of a wait status: 128+N and N when killed by signal N."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        return 128 - code, -code
    return code, None


def open_log(log_dir: str, container: str, restart: int) -> int:
    path = os.path.join(log_dir, podfs.log_name(container, restart))
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | ownership.NOFOLLOW
    return os.open(path, flags, ownership.FILE_MODE)  # (a link there: ELOOP, never followed)


def spawn(
    argv: list[str] | None,
    env: dict[str, str],
    cwd: str,
    log_fd: int,
    home: str,
    isolation: dict[str, Any] | None = None,
    message_file: str | None = None,
) -> int | StartFailure:
    """Start the process, return its pid (= its process group), or why it could not start.
    `home` is where the supervisor returns after a chdir (it stays single-threaded).
    `message_file`: the run's termination message file, made new and empty first."""
    failure: int | StartFailure
    if message_file is not None and (made := _message_file(message_file)) is not None:
        failure = made
    elif isolation and argv:
        from vcflow.podserver import isolation as isolated  # only pods that need it import it

        started = isolated.spawn_isolated(argv, env, cwd, log_fd, isolation, _RESET)
        if isinstance(started, int):
            return started
        failure = StartFailure(started[0], CANNOT_RUN, started[1])
    else:
        failure = _spawn(argv, env, cwd, log_fd, home)
    if isinstance(failure, StartFailure):
        podfs.write_all(log_fd, f"vcflow: {failure.message}\n".encode())
    return failure


def _message_file(path: str) -> StartFailure | None:
    """Why the termination message file could not be made new and empty, if it could not
    (something the last run left in its place that is no file: the kubelet fails a
    container whose file it cannot make too)."""
    try:
        podfs.reset_termination(path)
    except OSError as exc:
        why = str(exc.strerror or exc).lower()
        return StartFailure(128, CANNOT_RUN, f"create the termination message file {path}: {why}")
    return None


def _spawn(
    argv: list[str] | None, env: dict[str, str], cwd: str, log_fd: int, home: str
) -> int | StartFailure:
    if not argv:
        return StartFailure(
            128,
            NO_COMMAND,
            "the container has no command: images are not pulled or run locally, so the "
            "image's entrypoint is unknown; set `command` (and `args`)",
        )
    exe = podfs.find_executable(argv[0], env.get("PATH"), cwd)
    if exe is None:
        return StartFailure(
            127, CANNOT_RUN, f'exec: "{argv[0]}": executable file not found in $PATH'
        )
    try:
        os.chdir(cwd)
    except OSError as exc:
        return StartFailure(
            128, CANNOT_RUN, f"chdir to working directory {cwd!r}: {str(exc.strerror).lower()}"
        )
    try:
        return os.posix_spawn(
            exe,
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, log_fd, 1),
                (os.POSIX_SPAWN_DUP2, log_fd, 2),
            ],
            setpgroup=0,
            setsigdef=_RESET,
            setsigmask=(),
        )
    except OSError as exc:
        code = 127 if exc.errno == 2 else 126
        reason = str(exc.strerror or exc).lower()
        return StartFailure(code, CANNOT_RUN, f'exec: "{argv[0]}": {reason}')
    finally:
        os.chdir(home)
