"""The pure tiers stay pure: no processes, databases, sockets, OS calls, threads, file reads or
clock reads in api/, dag/, patch/, admission/ and reconcile/ (the layers of pyproject.toml's
import-linter contracts; time arrives as an argument). Checked on the source's AST, so a lazy
import inside a function counts too.

Allowed on purpose, and only there:
- `api/clock.py` reads the clock: it *is* the Clock that shells inject (SystemClock).
- `api/loading.py` reads files and stdin: it turns `-f` paths into documents for every caller.
- `admission/crd.py` reads, once, the package's own copy of Volcano's Job CRD through
  `importlib.resources` (constant data, like a module; not the user's input).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "vcflow"
PURE_PACKAGES = ("api", "dag", "patch", "admission", "reconcile")

FORBIDDEN_MODULES = frozenset({"subprocess", "sqlite3", "socket", "os", "threading"})
FILE_MODULES = frozenset({"pathlib", "shutil", "tempfile", "glob", "sys"})
CLOCK_MODULES = frozenset({"time"})
CLOCK_CALLS = frozenset({"now", "utcnow", "today"})  # datetime.now(), date.today(), …
CLOCK_OWNERS = frozenset({"datetime", "date"})

ALLOWED = {
    "api/clock.py": CLOCK_MODULES,
    "api/loading.py": FILE_MODULES,
}


def pure_modules() -> list[Path]:
    found: list[Path] = []
    for package in PURE_PACKAGES:
        folder = SRC / package
        if folder.is_dir():  # reconcile/ and others may not exist yet
            found.extend(sorted(folder.rglob("*.py")))
    return found


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level module) of every import statement."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def clock_calls(tree: ast.AST) -> list[int]:
    """Lines calling `datetime.now()`, `datetime.datetime.utcnow()`, `date.today()` and alike."""
    lines: list[int] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if node.func.attr in CLOCK_CALLS and owner_name in CLOCK_OWNERS:
            lines.append(node.lineno)
    return lines


def open_calls(tree: ast.AST) -> list[int]:
    """Lines calling the builtin `open()`."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
    ]


def violations(path: Path) -> list[str]:
    rel = path.relative_to(SRC).as_posix()
    allowed = ALLOWED.get(rel, frozenset())
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    banned = FORBIDDEN_MODULES | ((FILE_MODULES | CLOCK_MODULES) - allowed)
    imports = imported_modules(tree)
    found = [f"{rel}:{line}: imports {mod}" for line, mod in imports if mod in banned]
    if "time" not in allowed:
        found += [f"{rel}:{line}: reads the clock" for line in clock_calls(tree)]
    if "pathlib" not in allowed:
        found += [f"{rel}:{line}: opens a file" for line in open_calls(tree)]
    return found


@pytest.mark.parametrize("path", pure_modules(), ids=lambda p: p.relative_to(SRC).as_posix())
def test_pure_module(path: Path) -> None:
    assert violations(path) == []


def test_the_checks_catch_what_they_should(tmp_path: Path) -> None:
    tree = ast.parse(
        "import os.path\nfrom subprocess import run\nimport datetime\n"
        "def f():\n    import time\n    datetime.datetime.now()\n    open('x')\n"
    )
    assert [m for _, m in imported_modules(tree)] == ["os", "subprocess", "datetime", "time"]
    assert clock_calls(tree) == [6]
    assert open_calls(tree) == [7]


def test_there_are_pure_modules_to_check() -> None:
    assert len(pure_modules()) >= 10
