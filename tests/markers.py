"""The suite's cost markers, put on each test by rule at collection (tests/conftest.py), not
by hand in each file, so that a new test is marked as the tests like it are:

- `lint`: tests/test_lint.py (ruff, mypy --strict, import-linter over the whole tree).
- `apiserver`: the test starts an HTTP API server (`vcflow server`, the webhook, the
  operator's API, the store suite's served backends) or a Kubernetes control plane.
- `process`: the test starts a process — a `vcflow` child, a pod server and its pods — or
  an API server (they start processes, or cost as much). `-m "not process"` is the fast loop.

A test is marked by its directory, the names of its fixtures, its store backend, and what
its source names (`SERVES`, `STARTS`): its own, its fixtures', and that of the suite's
helpers it calls, followed a few calls deep. The rules were checked by running
`-m "not process"` with process starts (Popen, posix_spawn, fork) and `socket.listen`
patched to name the tests that still did one; what remains listens only for a probe's
target (tests/controller/test_prober.py), not an API server.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

import pytest

TESTS = Path(__file__).resolve().parent

#: fixtures that start an HTTP API server or a Kubernetes control plane
APISERVER_FIXTURES = frozenset(
    {
        "start_server",  # tests/server/conftest.py: `vcflow server` as a child process
        "running_server",  # tests/cli/test_remote.py
        "cluster",  # tests/cluster/fixtures.py (a real control plane); tests/webhook's own
        "kube",
        "kube_namespace",
        "vcflow_crds",
        "vcflow_on_cluster",  # tests/store: vcflow installed in the cluster
    }
)
#: test directories (under tests/) whose every test serves or reaches an API server
APISERVER_DIRS = frozenset({"cluster", "kubestore", "operator", "webhook"})
#: tests/store's contract-suite backends that are an API server (in a thread, or a cluster)
APISERVER_BACKENDS = frozenset({"kube", "kmock", "cluster"})
#: test directories whose every test runs pods (the pod server, the runtime)
PROCESS_DIRS = frozenset({"runtime", "podserver"})

#: what, in a test's source or a helper's, serves an HTTP API: `vcflow server` as a child
#: (tests/server's `server_command`, tests/cli/test_remote's `_cli`), the store suite's
#: served backends and `Served` (tests/store), a uvicorn server in a thread
SERVES = re.compile(
    r'\bserver_command\b|"server", "--|\b_cli\("server"'
    r"|\bServed\b|\bKubeBackend\b|\bKmockBackend\b|\buvicorn\b"
)
#: what, in a test's source or a helper's, starts a process: `vcflow run` through the CLI
#: (an argument "run"), the library's `vcflow.run`, a `PodRunner`, a child process
STARTS = re.compile(
    r'"run"|\bvcflow\.run\(|\bPodRunner\b|\bsubprocess\b|\bPopen\b|\bos\.fork\b'
    r"|\bposix_spawn|\bmultiprocessing\b|\bpty\.spawn\b"
)
#: how many helper calls deep a test's source is followed
DEPTH = 4


def mark(items: list[pytest.Item]) -> None:
    """Put the markers on the collected tests (an `apiserver` one is a `process` one too)."""
    for item in items:
        if _directory(item) == "test_lint.py":
            item.add_marker(pytest.mark.lint)
        if _serves_an_api(item):
            item.add_marker(pytest.mark.apiserver)
            item.add_marker(pytest.mark.process)
        elif _starts_a_process(item):
            item.add_marker(pytest.mark.process)


def _directory(item: pytest.Item) -> str:
    """The first part of the test's path under tests/ (a directory, or a top-level file)."""
    try:
        return item.path.resolve().relative_to(TESTS).parts[0]
    except ValueError:
        return ""


def _serves_an_api(item: pytest.Item) -> bool:
    if _directory(item) in APISERVER_DIRS:
        return True
    if APISERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "backend" in callspec.params:  # (what its backend is)
        return callspec.params["backend"] in APISERVER_BACKENDS
    return _says(item, SERVES)


def _starts_a_process(item: pytest.Item) -> bool:
    return _directory(item) in PROCESS_DIRS or _says(item, STARTS)


def _says(item: pytest.Item, pattern: re.Pattern[str]) -> bool:
    """Whether the test's function, one of the suite's fixtures it uses, or a helper it is
    given as a parameter names `pattern`."""
    function = getattr(item, "function", None)
    if function is not None and _names(function, pattern, DEPTH):
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    helpers = [p for p in params if _in_the_suite(p)] + _fixture_functions(item)
    return any(_names(helper, pattern, DEPTH) for helper in helpers)


def _fixture_functions(item: pytest.Item) -> list[Callable[..., Any]]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    used = [defs[-1].func for defs in info.name2fixturedefs.values() if defs]  # (not overridden)
    return [f for f in used if _in_the_suite(f)]


@functools.cache
def _names(function: Callable[..., Any], pattern: re.Pattern[str], depth: int) -> bool:
    """Whether `function` (a test, a fixture, a helper of the suite) names `pattern`, itself
    or through the suite's helpers and classes it calls: `helper(...)`, `module.helper(...)`."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return False
    if pattern.search(source):
        return True
    if depth == 0:
        return False
    module = inspect.getmodule(inspect.unwrap(function))
    names = vars(module) if module is not None else {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            helper = _helper(node.func, names)
            if helper is not None and _names(helper, pattern, depth - 1):
                return True
    return False


def _helper(called: ast.expr, names: dict[str, Any]) -> Callable[..., Any] | None:
    """The suite's function or class a call names, if it is one (decorators such as
    `contextmanager` and `cache` looked through)."""
    found: object = None
    if isinstance(called, ast.Name):
        found = names.get(called.id)
    elif isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name):
        module = names.get(called.value.id)
        if inspect.ismodule(module):
            found = getattr(module, called.attr, None)
    return found if _in_the_suite(found) else None


def _in_the_suite(found: object) -> TypeGuard[Callable[..., Any]]:
    if not callable(found):
        return False
    function = inspect.unwrap(found)
    if not (inspect.isfunction(function) or inspect.isclass(function)):
        return False
    try:
        return Path(inspect.getfile(function)).resolve().is_relative_to(TESTS)
    except TypeError:  # (a class of no file)
        return False
