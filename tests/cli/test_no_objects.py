"""Input that holds no object — an empty file, only comments, only `---`, an empty `List`,
a directory without manifests — is kubectl's `error: no objects passed to <verb>`, exit 1,
for every verb that reads manifests; nothing is written (not even the state directory)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Vc = Callable[..., Result]

EMPTY = {
    "empty": "",
    "comments": "# nothing here\n# at all\n",
    "separators": "---\n---\n...\n",
    "empty-list": "apiVersion: v1\nkind: List\nitems: []\n",
}


@pytest.mark.parametrize("verb", ["validate", "apply", "run", "delete"])
@pytest.mark.parametrize("content", [*EMPTY, "directory"])
def test_no_objects_is_an_error(
    vc: Vc, state_dir: Path, tmp_path: Path, verb: str, content: str
) -> None:
    if content == "directory":
        path = tmp_path / "manifests"
        path.mkdir()
        (path / "README.txt").write_text("not a manifest\n")
    else:
        path = tmp_path / "m.yaml"
        path.write_text(EMPTY[content])
    result = vc(verb, "-f", path)
    assert result.exit_code == 1
    assert result.stderr == f"error: no objects passed to {verb}\n"
    assert result.stdout == ""
    assert not state_dir.exists()


def test_stdin_without_objects(vc: Vc) -> None:
    result = vc("apply", "-f", "-", input="# only a comment\n")
    assert result.exit_code == 1
    assert result.stderr == "error: no objects passed to apply\n"


def test_an_unreadable_file_is_reported_rather_than_no_objects(vc: Vc, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: [\n")
    result = vc("apply", "-f", broken)
    assert result.exit_code == 1
    assert "no objects" not in result.stderr
    assert result.stderr.startswith(f"{broken}:")
