"""What `describe` and `get` print of what users wrote has its control characters escaped:
a NUL, an ESC sequence or an OSC title sequence in an annotation, a message or a status is
shown (`\\x1b]0;...`), never sent to the terminal raw."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from .flows import template

Vc = Callable[..., Result]
OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"

TRUE = {"container": "c", "image": "", "command": '["true"]'}


def noted(note: str) -> str:
    """JobTemplate `t` annotated `note: "NOTE and a NUL \\0 here"` (YAML escapes)."""
    return template("t", meta=f', annotations: {{note: "{note} and a NUL \\0 here"}}', **TRUE)


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F]


def test_describe_escapes_control_characters(vc: Vc, tmp_path: Path) -> None:
    manifest = tmp_path / "t.yaml"
    manifest.write_text(noted("\\e]0;pwned\\a"))  # YAML escapes: ESC, BEL
    assert vc("apply", "-f", manifest).exit_code == 0
    result = vc("describe", "jt", "t")
    assert result.exit_code == 0, result.output
    assert raw_controls(result.stdout) == []
    assert "note=\\x1b]0;pwned\\x07 and a NUL \\x00 here" in result.stdout


def test_get_escapes_control_characters(vc: Vc, tmp_path: Path) -> None:
    vcjob = tmp_path / "j.yaml"
    vcjob.write_text(template("j", kind="Job", **TRUE))
    assert vc("apply", "-f", vcjob).exit_code == 0
    body = json.dumps({"status": {"state": {"phase": CLEAR + OSC_TITLE}}})
    assert vc("patch", "vcjob", "j", "--subresource", "status", "-p", body).exit_code == 0
    result = vc("get", "vcjob", "j")
    assert result.exit_code == 0, result.output
    assert raw_controls(result.stdout) == []
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in result.stdout
