"""The launch key of a state directory and the seals made with it: the pod server runs only
the pods whose spec.json this state directory's control plane sealed, and the control plane
believes only the status files their supervisors (or reapers) sealed. Standard library only:
the pod server imports it. `pods.PodRunner` makes the key and seals each spec (`seal_spec`);
the supervisor and the reaper check it (`read_spec`); `statusfile` seals and checks records.

- `<state>/runtime/launch.key`: 32 random bytes, owner-only (`ownership`), made once by the
  first `PodRunner` of the state directory; a process loads it once (`key`).
- A sealed file is JSON whose first key is `seal`, the HMAC-SHA256 under the key of what it
  is (`spec`, `status`), the pod directory it belongs to (`<namespace>/<name>`) and the rest
  of the file, byte for byte: ``{"seal":"<64 hex digits>",<the rest>``. A reader that only
  shows the file parses it as JSON and ignores the key.
- spec.json holds `launch`, a random id of that launch, and every status record repeats it
  (`statusfile.launch`): a status belongs to the launch that wrote it.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
from typing import Any

from vcflow.podserver import ownership, podfs

KEY_FILE = "launch.key"
KEY_BYTES = 32
SPEC, STATUS = b"spec", b"status"
#: the spec's key holding the launch id (and the status record's, under `vcflow`)
LAUNCH = "launch"
_HEAD, _SEP = b'{"seal":"', b'",'
_MAC = 64  # hex digits of a SHA-256
_BODY = len(_HEAD) + _MAC + len(_SEP)

_keys: dict[str, tuple[bytes, tuple[int, int]]] = {}  # runtime dir → (key, (dev, inode))


def runtime_dir(pod_dir: str) -> str:
    """`<state>/runtime` of the pod directory `<state>/pods/<namespace>/<name>`."""
    return _place(pod_dir)[0]


def _place(pod_dir: str) -> tuple[str, bytes]:
    """(`runtime_dir`, `<namespace>/<name>`) of a pod directory."""
    head, _, name = pod_dir.rpartition(os.sep)
    pods, _, namespace = head.rpartition(os.sep)
    runtime = os.path.join(os.path.dirname(pods), podfs.RUNTIME)
    return runtime, os.fsencode(f"{namespace}/{name}")


def make_key(runtime: str) -> bytes:
    """The state directory's key, made if it has none (written aside, then linked into
    place: a process that makes one at the same time keeps the first). Unsafe if the file
    there is not this user's owner-only key."""
    path = os.path.join(runtime, KEY_FILE)
    if not os.path.lexists(path):
        aside = f"{path}.{os.urandom(8).hex()}.tmp"
        new = os.O_WRONLY | os.O_CREAT | os.O_EXCL | ownership.NOFOLLOW
        fd = os.open(aside, new, ownership.FILE_MODE)
        try:
            podfs.write_all(fd, os.urandom(KEY_BYTES))
        finally:
            os.close(fd)
        try:
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
        finally:
            os.unlink(aside)
    return load_key(runtime)


def load_key(runtime: str) -> bytes:
    """The key in `runtime` (read now, and kept for `key`): FileNotFoundError when there is
    none, Unsafe when it is not this user's owner-only key."""
    path = os.path.join(runtime, KEY_FILE)
    fd = ownership.open_checked(path, os.O_RDONLY, tighten=False)
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o077:
            raise ownership.Unsafe(
                f"bad permissions on {path}: others could read it; remove it (a new key is "
                "made, and the pods running now are no longer trusted)"
            )
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise ownership.Unsafe(f"bad file at {path}: not a launch key; remove it")
    _keys[runtime] = (data, (st.st_dev, st.st_ino))
    return data


def key(runtime: str) -> bytes | None:
    """The key of `runtime`, loaded once per process; None when there is none to be had
    (missing, or not safe: `PodRunner` and the pod server say why when they start)."""
    found = _keys.get(runtime)
    if found is not None:
        return found[0]
    try:
        return load_key(runtime)
    except (OSError, ownership.Unsafe):
        return None


def _reloaded(runtime: str) -> bytes | None:
    """The key again if its file is not the one loaded (a new one was made meanwhile)."""
    known = _keys.get(runtime)
    try:
        st = os.lstat(os.path.join(runtime, KEY_FILE))
    except OSError:
        return None
    if known is not None and known[1] == (st.st_dev, st.st_ino):
        return None
    _keys.pop(runtime, None)
    return key(runtime)


def _mac(secret: bytes, kind: bytes, where: bytes, body: bytes) -> bytes:
    message = b"%s\0%s\0%s" % (kind, where, body)
    return hmac.digest(secret, message, "sha256").hex().encode()


def seal(kind: bytes, pod_dir: str, body: bytes) -> bytes:
    """`body` (a JSON object's bytes) sealed as a `kind` file of `pod_dir`."""
    runtime, where = _place(pod_dir)
    secret = key(runtime)
    if secret is None:
        raise FileNotFoundError(f"no usable {KEY_FILE} in {runtime}")
    return _HEAD + _mac(secret, kind, where, body) + _SEP + body[1:]


def unseal(kind: bytes, pod_dir: str, data: bytes) -> bytes | None:
    """The JSON body of `data` if it is a `kind` file of `pod_dir` sealed with the state
    directory's key, else None."""
    if not data.startswith(_HEAD) or data[_BODY - len(_SEP) : _BODY] != _SEP:
        return None
    body = b"{" + data[_BODY:]
    given = data[len(_HEAD) : len(_HEAD) + _MAC]
    runtime, where = _place(pod_dir)
    secret = key(runtime)
    if secret is not None and hmac.compare_digest(given, _mac(secret, kind, where, body)):
        return body
    secret = _reloaded(runtime)  # (a new key was made since it was loaded?)
    if secret is not None and hmac.compare_digest(given, _mac(secret, kind, where, body)):
        return body
    return None


def seal_spec(pod_dir: str, spec: dict[str, Any]) -> bytes:
    """The bytes of spec.json for `spec`, given a new launch id (`spec[LAUNCH]`), sealed."""
    spec[LAUNCH] = os.urandom(16).hex()
    body = json.dumps(spec, separators=(",", ":"), ensure_ascii=False).encode()
    return seal(SPEC, pod_dir, body)


def read_spec(pod_dir: str) -> dict[str, Any] | None:
    """The pod's spec.json if this state directory's control plane sealed it for this pod
    directory; None when it is absent, cut short, or not sealed so (planted, copied)."""
    try:
        data = podfs.read_bytes(os.path.join(pod_dir, podfs.SPEC))
    except OSError:
        return None
    body = unseal(SPEC, pod_dir, data)
    if body is None:
        return None
    try:
        spec = json.loads(body)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) else None
