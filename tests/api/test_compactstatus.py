"""`status.compactJobStatus` reads back exactly what was written (every record, every list,
nulls and absent keys apart), the same records always encode the same, the data is a gzip
member any tool reads, and a field this version cannot read is refused with why — a corrupt
or hostile one included, without inflating it."""

from __future__ import annotations

import base64
import gzip
import json
import re
import zlib
from typing import Any

import pytest

from vcflow.api import compactstatus
from vcflow.api.compactstatus import Unreadable
from vcflow.api.errors import StoreError

ITEMS: list[dict[str, Any]] = [
    {
        "name": "f-a",
        "state": "Completed",
        "startTimestamp": "2026-12-01T10:00:00Z",
        "endTimestamp": "2026-12-01T10:00:42Z",
        "restartCount": 1,
        "runningHistories": [
            {"startTimestamp": "2026-12-01T10:00:01Z", "endTimestamp": "2026-12-01T10:00:09Z",
             "state": "Running"},
            {"startTimestamp": "2026-12-01T10:00:09Z", "endTimestamp": None, "state": "Completed"},
        ],
        "attempt": 2,
        "firstAttempt": 1,
    },
    {"name": "f-b", "state": ""},
    {"name": "f-c", "state": "Failed", "nextAttemptTime": "2026-12-01T09:59:00Z",
     "startTimestamp": "2026-12-01 10:00:00"},  # (not canonical: kept as text)
]  # fmt: skip
CONDITIONS: dict[str, dict[str, Any]] = {
    "f-a": {"phase": "Completed", "createTime": "2026-12-01T10:00:00Z", "runningDuration": "42s",
            "taskStatusCount": {"main": {"phase": {"Succeeded": 2}}, "ps": {"phase": {}}}},
    "f-b": {"phase": "", "reason": "", "message": "ünïcode ✓", "flag": True, "weights": [1, 2.5]},
    "f-c": {"phase": "Waiting", "reason": "Backoff", "message": "attempt 2 of 3 at …",
            "taskStatusCount": None},
    "f-d": {"phase": "Waiting", "reason": "Dependencies", "message": "waiting for all of: a"},
}  # fmt: skip
LISTS = {"completedJobs": ["f-a"], "failedJobs": ["f-c"], "unKnowJobs": ["f-b"]}


def test_what_is_encoded_decodes_exactly() -> None:
    field = compactstatus.encode(ITEMS, CONDITIONS, LISTS)
    items, conditions, lists = compactstatus.decode(field)
    assert items == ITEMS
    assert conditions == CONDITIONS
    assert list(conditions) == list(CONDITIONS)  # in the order written
    assert lists == LISTS
    assert field["counts"] == {
        "jobStatusList": 3, "conditions": 4, "completedJobs": 1, "failedJobs": 1, "unKnowJobs": 1
    }  # fmt: skip


def test_explicit_nulls_and_absent_keys_stay_apart() -> None:
    items, conditions, _ = compactstatus.decode(compactstatus.encode(ITEMS, CONDITIONS, {}))
    assert items[0]["runningHistories"][1]["endTimestamp"] is None
    assert "endTimestamp" not in items[1]
    assert conditions["f-c"]["taskStatusCount"] is None
    assert "taskStatusCount" not in conditions["f-d"]


def test_equal_records_encode_to_the_same_bytes_whatever_their_key_order() -> None:
    shuffled = [dict(reversed(list(item.items()))) for item in ITEMS]
    one = compactstatus.encode(ITEMS, CONDITIONS, LISTS)
    assert compactstatus.encode(shuffled, CONDITIONS, LISTS) == one
    assert compactstatus.encode(ITEMS, CONDITIONS, LISTS) == one


def test_the_data_is_a_gzip_member_of_json() -> None:
    field = compactstatus.encode(ITEMS, CONDITIONS, LISTS)
    assert field["version"] == 1 and field["encoding"] == "gzip+base64"
    doc = json.loads(gzip.decompress(base64.b64decode(field["data"])))
    assert set(doc) == {"base", "strings", "jobStatusList", "conditions", "lists"}


def test_expand_gives_volcanos_layout_back() -> None:
    full = {**LISTS, "jobStatusList": ITEMS, "conditions": CONDITIONS,
            "state": {"phase": "Running"}, "lastRetry": "{}"}  # fmt: skip
    stored = {
        "runningJobs": [],
        "conditions": {"f-c": CONDITIONS["f-c"]},
        "state": {"phase": "Running"},
        "lastRetry": "{}",
        "compactJobStatus": compactstatus.encode(ITEMS, CONDITIONS, LISTS),
    }
    expanded = compactstatus.expand(stored)
    assert expanded == full
    assert list(expanded) == list(full)  # the model's field order
    assert compactstatus.expand(full) == full  # (nothing to expand)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"version": 2}, "this vcflow reads version 1"),
        ({"encoding": "zstd"}, "this vcflow reads version 1, gzip+base64"),
        ({"data": "not base64!"}, "not gzip+base64 of JSON"),
        ({"data": base64.b64encode(b"plain text").decode()}, "not gzip+base64 of JSON"),
        ({"data": base64.b64encode(gzip.compress(b"[1, 2]")).decode()}, "not a version 1"),
        ({"data": base64.b64encode(gzip.compress(b"{nope")).decode()}, "not gzip+base64"),
        ({"counts": {"jobStatusList": 9}}, "not the counts given"),
    ],
)
def test_a_field_this_version_cannot_read_is_refused_with_why(
    change: dict[str, Any], why: str
) -> None:
    field = {**compactstatus.encode(ITEMS, CONDITIONS, LISTS), **change}
    with pytest.raises(Unreadable, match=re.escape(why)):
        compactstatus.decode(field)


def test_a_corrupt_column_is_refused() -> None:
    field = compactstatus.encode(ITEMS, CONDITIONS, LISTS)
    doc = json.loads(gzip.decompress(base64.b64decode(field["data"])))
    doc["jobStatusList"]["columns"]["name"]["values"].pop()
    packed = gzip.compress(json.dumps(doc).encode())
    with pytest.raises(Unreadable, match="not a version 1 document"):
        compactstatus.decode({**field, "data": base64.b64encode(packed).decode()})


def test_data_inflating_past_the_bound_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = packer.compress(b" " * (8 * 1024 * 1024)) + packer.flush()  # 8 MiB of spaces
    monkeypatch.setattr(compactstatus, "MAX_INFLATED", 1024 * 1024)
    field = {"version": 1, "encoding": "gzip+base64", "counts": {},
             "data": base64.b64encode(bomb).decode()}  # fmt: skip
    with pytest.raises(Unreadable, match="inflates past 1,048,576 bytes"):
        compactstatus.decode(field)


def test_unreadable_is_a_store_error_so_a_sync_is_retried() -> None:
    assert issubclass(Unreadable, StoreError)
