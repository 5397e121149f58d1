"""The machine's capacity for gang admission, and its GPUs: from the host, or as the user
declares it.

`host_capacity()`: `cpu` = the CPUs this process may run on (`os.sched_getaffinity`, else
`os.cpu_count()`), `memory` = physical memory (`MemTotal` of /proc/meminfo, else
`os.sysconf`); each lowered to the cgroup's limit when the process runs in one that sets
one (v2 `cpu.max` / `memory.max`, v1 `cpu.cfs_quota_us` / `memory.limit_in_bytes`), since
that is what the pods will really get. `pods` and extended resources are not listed: see
`reconcile.vcjob.resources.Capacity` for what an unlisted resource means.

`detect_gpus()`: the GPU indices `nvidia-smi -L` lists, when the command exists and answers
within `SMI_TIMEOUT` (else none).

`parse_capacity("cpu=8,memory=16Gi,nvidia.com/gpu=2")` reads the `--capacity` override, with
Kubernetes quantities (`500m`, `2`, `1Gi`, `1G`, `128974848`, `129e6`, `123Mi`); errors are
one line (`CapacityError`). A name without a domain must be one of Kubernetes' own resources
(`cpu`, `memory`, `ephemeral-storage`, `pods`, `hugepages-<size>`): an extended resource is
always prefixed (`nvidia.com/gpu`), so `gpu=1` — which no pod requests — is refused with the
name to use rather than accepted and never matched. `machine(override)` is the host's
capacity, `nvidia.com/gpu` the count of the GPUs found, with the override's entries replacing
or adding to it, and the GPU indices to hand out (`Machine`); `capacity(override)` its
capacity. Amounts are exact `Fraction`s, in cores and bytes.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from vcflow.api import quantity
from vcflow.api.errors import InputError
from vcflow.reconcile.vcjob.devices import GPU

EXAMPLE = "cpu=8,memory=16Gi,nvidia.com/gpu=2"
_NAME = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
)
#: resources Kubernetes names without a domain; every other resource is domain-prefixed
NATIVE = frozenset({"cpu", "memory", "ephemeral-storage", "pods", "storage"})
#: unprefixed names people write for a prefixed resource, and the name pods request
_MEANT = {"gpu": GPU, "gpus": GPU, "nvidia-gpu": GPU, "nvidia": GPU}
_CGROUP = Path("/sys/fs/cgroup")
NVIDIA_SMI = "nvidia-smi"
#: seconds `nvidia-smi -L` may take (it can be slow to wake a GPU without persistence mode)
SMI_TIMEOUT = 10.0
_SMI_GPU = re.compile(r"^GPU (\d+):", re.MULTILINE)


class CapacityError(InputError):
    """A `--capacity` value that cannot be read."""


def parse_capacity(text: str) -> dict[str, Fraction]:
    """`name=quantity` pairs, comma-separated, into exact amounts."""
    out: dict[str, Fraction] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise CapacityError(f"invalid capacity {text!r}: empty entry; expected e.g. {EXAMPLE}")
        name, eq, raw = (s.strip() for s in item.partition("="))
        if not eq:
            raise CapacityError(
                f"invalid capacity entry {item!r}: expected resource=quantity, e.g. cpu=8"
            )
        if not _NAME.fullmatch(name):
            raise CapacityError(f"invalid capacity entry {item!r}: bad resource name {name!r}")
        if "/" not in name and name not in NATIVE and not name.startswith("hugepages-"):
            raise CapacityError(_unknown(item, name))
        if name in out:
            raise CapacityError(f"invalid capacity {text!r}: {name} is given twice")
        amount = quantity.parse(raw) if raw else None
        if amount is None:
            raise CapacityError(
                f"invalid capacity entry {item!r}: {raw!r} is not a quantity "
                "(e.g. 500m, 2, 1.5, 1Gi, 1G, 128974848, 129e6)"
            )
        if amount < 0:
            raise CapacityError(f"invalid capacity entry {item!r}: must not be negative")
        if name == GPU and amount.denominator != 1:
            raise CapacityError(f"invalid capacity entry {item!r}: GPUs are whole devices")
        out[name] = amount
    return out


def _unknown(item: str, name: str) -> str:
    """Why `name` is no resource a pod requests, and the name to use."""
    meant = _MEANT.get(name.lower())
    if meant is not None:
        return (
            f"invalid capacity entry {item!r}: unknown resource {name!r}; "
            f"did you mean {meant!r}? (e.g. {meant}=1)"
        )
    return (
        f"invalid capacity entry {item!r}: unknown resource {name!r}; expected cpu, memory, "
        "ephemeral-storage, pods, hugepages-<size> or an extended resource with its domain "
        f"(e.g. {GPU})"
    )


@dataclass(frozen=True)
class Machine:
    """What the gang scheduler may place against, and the GPU indices the pods get."""

    capacity: dict[str, Fraction]
    gpus: tuple[str, ...] = ()


def machine(
    override: str | None = None, *, detect: Callable[[], tuple[str, ...]] | None = None
) -> Machine:
    """The host's capacity and GPUs (`detect`, default `detect_gpus`), with `override` (a
    `--capacity` value) applied on top: `nvidia.com/gpu=N` there means the first N GPUs
    found, or indices 0..N-1 beyond those found (none found: a machine declared so)."""
    found = (detect or detect_gpus)()
    amounts = host_capacity()
    if found:
        amounts[GPU] = Fraction(len(found))
    declared = parse_capacity(override) if override else {}
    amounts.update(declared)
    gpus = found
    if GPU in declared:
        count = int(declared[GPU])
        gpus = found[:count] if count <= len(found) else tuple(str(i) for i in range(count))
    return Machine(amounts, gpus)


def capacity(override: str | None = None) -> dict[str, Fraction]:
    """The host's capacity, with `override` (a `--capacity` value) applied on top."""
    return machine(override).capacity


def detect_gpus(timeout: float = SMI_TIMEOUT) -> tuple[str, ...]:
    """The indices of the GPUs `nvidia-smi -L` lists (`GPU 0: ...` lines; MIG devices under
    a GPU are not counted apart); none when it is not installed, fails or times out."""
    exe = shutil.which(NVIDIA_SMI)
    if exe is None:
        return ()
    try:
        done = subprocess.run(
            [exe, "-L"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    if done.returncode != 0:
        return ()
    return tuple(_SMI_GPU.findall(done.stdout))


def host_capacity() -> dict[str, Fraction]:
    return {"cpu": Fraction(host_cpus()), "memory": Fraction(host_memory())}


def host_cpus() -> int | Fraction:
    try:
        cpus: int | Fraction = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    limit = _cgroup_cpu_limit()
    return min(cpus, limit) if limit is not None else cpus


def host_memory() -> int:
    total = _meminfo_total()
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = 0
    limit = _cgroup_memory_limit()
    return min(total, limit) if limit is not None and total else (limit or total)


def _meminfo_total() -> int | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _cgroups() -> dict[str, str]:
    """controller (`""` for v2) → this process's cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                out[controller] = parts[2]
    return out


def _read_cgroup(controller: str, file: str) -> str | None:
    """`file` of this process's cgroup (v2 when `controller` is `""`), trying the path from
    /proc/self/cgroup and then the mount's root (a cgroup namespace shows only its own)."""
    groups = _cgroups()
    if controller not in groups:
        return None
    base = _CGROUP if not controller else _CGROUP / controller
    for folder in (base / groups[controller].lstrip("/"), base):
        try:
            return (folder / file).read_text().strip()
        except OSError:
            continue
    return None


def _cgroup_cpu_limit() -> Fraction | None:
    v2 = _read_cgroup("", "cpu.max")
    if v2:
        quota, _, period = v2.partition(" ")
        if quota != "max" and period:
            return Fraction(int(quota), int(period))
        return None
    quota_text = _read_cgroup("cpu", "cpu.cfs_quota_us")
    period_text = _read_cgroup("cpu", "cpu.cfs_period_us")
    if quota_text and period_text and int(quota_text) > 0:
        return Fraction(int(quota_text), int(period_text))
    return None


def _cgroup_memory_limit() -> int | None:
    text = _read_cgroup("", "memory.max") or _read_cgroup("memory", "memory.limit_in_bytes")
    if not text or text == "max":
        return None
    value = int(text)
    return value if value < 2**60 else None  # v1 says "no limit" with a huge number


def show_capacity(amounts: dict[str, Fraction]) -> str:
    """`cpu=2,memory=23Gi`-style text of a capacity (cpu in millicores when fractional)."""
    parts = []
    for name, amount in sorted(amounts.items()):
        if name == "cpu" and amount.denominator != 1:
            parts.append(f"cpu={math.ceil(amount * 1000)}m")
        elif name == "memory" and amount % 2**20 == 0 and amount >= 2**20:
            parts.append(f"memory={int(amount) // 2**20}Mi")
        else:
            parts.append(f"{name}={int(amount) if amount.denominator == 1 else float(amount)}")
    return ",".join(parts)
