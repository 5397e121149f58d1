"""`kubeapi.watchframes`: what the server encodes, a client decodes as the same event."""

from __future__ import annotations

import pytest

from vcflow.api.errors import Expired
from vcflow.kubeapi import status, watchframes
from vcflow.kubeapi.watchframes import Frame

OBJECT = {
    "apiVersion": "flow.volcano.sh/v1alpha1",
    "kind": "JobFlow",
    "metadata": {"name": "f", "namespace": "ns", "resourceVersion": "7"},
    "spec": {"flows": [{"name": "a"}]},
}


def test_each_frame_round_trips() -> None:
    """ADDED, MODIFIED, DELETED, BOOKMARK (the initial events' end too) come back as sent;
    an ERROR's Status comes back as the error it stands for."""
    for type_ in ("ADDED", "MODIFIED", "DELETED"):
        line = watchframes.encode(type_, OBJECT)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert watchframes.decode(line) == Frame(type_, OBJECT)
        assert watchframes.decode(line.decode()) == Frame(type_, OBJECT)
    for initial_end in (False, True):
        line = watchframes.bookmark("v1", "Pod", 42, initial_end=initial_end)
        frame = watchframes.decode(line)
        assert frame is not None and (frame.type, frame.resource_version) == ("BOOKMARK", 42)
        annotations = frame.object["metadata"].get("annotations", {})
        assert (watchframes.INITIAL_EVENTS_END in annotations) is initial_end
    expired = status.failure(410, "too old resource version: 3 (9)", reason="Expired")
    with pytest.raises(Expired, match=r"^Error from server \(Expired\): too old resource"):
        watchframes.decode(watchframes.error(expired))


def test_what_a_reader_passes_over() -> None:
    assert watchframes.decode(b"\n") is None
    assert watchframes.decode(b'{"type": "NEW", "object": {}}') is None
    assert watchframes.decode(b'{"type": "ADDED", "object": 3}') is None
    assert Frame("ADDED", {}).resource_version == 0
    with pytest.raises(ValueError):
        watchframes.decode(b"{not json")
