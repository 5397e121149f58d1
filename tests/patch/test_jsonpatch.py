"""RFC 6902 JSON patch (`kubectl patch --type json`): each operation, pointers with escapes
and list indexes, and the refusals (a path not there, a failed test) naming the operation."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.patch.jsonpatch import PatchError, json_patch

DOC: dict[str, Any] = {
    "metadata": {"name": "f", "labels": {"a/b": "1"}, "finalizers": ["x", "y"]},
    "spec": {"flows": [{"name": "a"}, {"name": "b"}]},
}


@pytest.mark.parametrize(
    ("ops", "path", "expected"),
    [
        (
            [{"op": "add", "path": "/metadata/labels/team", "value": "ml"}],
            "labels",
            {"a/b": "1", "team": "ml"},
        ),
        ([{"op": "remove", "path": "/metadata/labels/a~1b"}], "labels", {}),
        (
            [{"op": "replace", "path": "/metadata/finalizers/0", "value": "z"}],
            "finalizers",
            ["z", "y"],
        ),
        (
            [{"op": "add", "path": "/metadata/finalizers/-", "value": "z"}],
            "finalizers",
            ["x", "y", "z"],
        ),
        (
            [{"op": "add", "path": "/metadata/finalizers/0", "value": "z"}],
            "finalizers",
            ["z", "x", "y"],
        ),
        ([{"op": "remove", "path": "/metadata/finalizers"}], "finalizers", None),
        (
            [{"op": "copy", "from": "/metadata/name", "path": "/metadata/labels/n"}],
            "labels",
            {"a/b": "1", "n": "f"},
        ),
        (
            [{"op": "move", "from": "/metadata/finalizers/1", "path": "/metadata/finalizers/0"}],
            "finalizers",
            ["y", "x"],
        ),
        ([{"op": "test", "path": "/metadata/name", "value": "f"}], "finalizers", ["x", "y"]),
    ],
    ids=[
        "add",
        "remove-escaped",
        "replace-index",
        "append",
        "insert",
        "remove-list",
        "copy",
        "move",
        "test",
    ],
)
def test_operations(ops: list[dict[str, Any]], path: str, expected: Any) -> None:
    assert json_patch(DOC, ops)["metadata"].get(path) == expected
    assert DOC["metadata"]["finalizers"] == ["x", "y"]  # (not modified)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        (
            [{"op": "remove", "path": "/metadata/labels/nope"}],
            "operation 0: path segment 'nope' does not exist",
        ),
        (
            [{"op": "replace", "path": "/spec/flows/5", "value": 1}],
            "operation 0: index 5 is out of range",
        ),
        (
            [{"op": "test", "path": "/metadata/name", "value": "g"}],
            "operation 0: test failed: /metadata/name is not 'g'",
        ),
        (
            [{"op": "add", "path": "/metadata/x", "value": 1}, {"op": "jump", "path": "/"}],
            "operation 1: not an operation",
        ),
        ([{"op": "add", "path": "metadata"}], "operation 0: path 'metadata' is not a JSON pointer"),
        ({"op": "add"}, "a JSON patch must be a list of operations"),
    ],
)
def test_refusals(ops: Any, message: str) -> None:
    with pytest.raises(PatchError) as caught:
        json_patch(DOC, ops)
    assert str(caught.value).startswith(message)
