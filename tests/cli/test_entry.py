"""The `vcflow` entry point (`cli.entry`): Ctrl-C while the CLI is still loading ends the
command with exit 130 and no traceback, as Ctrl-C does once it runs."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import subprocess
import sys
from collections.abc import Sequence
from types import ModuleType

import pytest

from vcflow.cli import entry


class _CtrlC(importlib.abc.MetaPathFinder):
    """A Ctrl-C that arrives while `vcflow.cli.app` is being imported."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "vcflow.cli.app":
            raise KeyboardInterrupt
        return None


def test_ctrl_c_while_loading_is_exit_130_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delitem(sys.modules, "vcflow.cli.app", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_CtrlC(), *sys.meta_path])
    with pytest.raises(SystemExit) as ended:
        entry.main()
    assert ended.value.code == entry.INTERRUPTED
    assert capsys.readouterr() == ("", "")


def test_the_entry_point_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vcflow", "version"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.strip()
