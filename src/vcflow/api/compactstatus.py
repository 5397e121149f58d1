"""The codec of `status.compactJobStatus`: a flow's every status list, `jobStatusList` item
and `conditions` entry, as gzip+base64 of a columnar JSON document (docs/status-size.md).
`reconcile.statusfit` encodes when a status outgrows Volcano's layout; `expand` gives the
Volcano layout back to `reconcile.restore`, `vcflow describe` and `vcflow run`'s view.
Pure; decoding is bounded (a corrupt or hostile field is refused, not inflated without end).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from vcflow.api import clock
from vcflow.api.errors import UnreadableStatus

#: `compactJobStatus.version` this code writes and reads
VERSION = 1
#: `compactJobStatus.encoding`: what `data` is (a gzip member, `base64 -d | gunzip` reads it)
ENCODING = "gzip+base64"
#: the wire name of the field
FIELD = "compactJobStatus"
#: The most bytes `data` may inflate to (a 10,000-entry flow's records are a few MB).
MAX_INFLATED = 64 * 1024 * 1024

Record = dict[str, Any]
_GZIP = 31  # zlib's wbits for a gzip container (header with mtime 0: same input, same bytes)


class Unreadable(UnreadableStatus):
    """A `compactJobStatus` this version cannot read; the message says why."""


def _unreadable(why: str) -> Unreadable:
    return Unreadable(f"status.{FIELD}: {why}")


def encode(
    items: list[Record], conditions: Mapping[str, Record], lists: Mapping[str, list[str]]
) -> dict[str, Any]:
    """The `compactJobStatus` field holding `items` (jobStatusList), `conditions` and the
    status `lists` (`completedJobs`, ...: job names)."""
    strings, times = _Strings(), _Times()
    doc: dict[str, Any] = {
        "jobStatusList": _table(items, strings, times),
        "conditions": _table(
            [{"@key": key, **value} for key, value in conditions.items()], strings, times
        ),
        "lists": {
            name: _deltas([strings.add(job) for job in jobs]) for name, jobs in lists.items()
        },
    }
    doc["base"] = times.base
    doc["strings"] = strings.values
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    packer = zlib.compressobj(6, zlib.DEFLATED, _GZIP)
    packed = packer.compress(text.encode("utf-8", "surrogatepass")) + packer.flush()
    counts = {"jobStatusList": len(items), "conditions": len(conditions)}
    counts.update((name, len(jobs)) for name, jobs in lists.items())
    return {
        "version": VERSION,
        "encoding": ENCODING,
        "counts": counts,
        "data": base64.b64encode(packed).decode("ascii"),
    }


Decoded = tuple[list[Record], dict[str, Record], dict[str, list[str]]]


def decode(field: Mapping[str, Any]) -> Decoded:
    """(jobStatusList items, conditions, status lists) held by a `compactJobStatus`;
    Unreadable if this version cannot read it."""
    if field.get("version") != VERSION or field.get("encoding") != ENCODING:
        raise _unreadable(
            f"version {field.get('version')!r}, encoding {field.get('encoding')!r}: "
            f"this vcflow reads version {VERSION}, {ENCODING}"
        )
    try:
        packed = base64.b64decode(str(field.get("data") or ""), validate=True)
        inflater = zlib.decompressobj(_GZIP)
        raw = inflater.decompress(packed, MAX_INFLATED)
        if inflater.unconsumed_tail:
            raise _unreadable(f"data inflates past {MAX_INFLATED:,} bytes")
        doc = json.loads(raw.decode("utf-8"))
        strings, base = doc["strings"], doc["base"]
        items = _rows(doc["jobStatusList"], strings, base)
        conditions = {row.pop("@key"): row for row in _rows(doc["conditions"], strings, base)}
        lists = {name: [strings[i] for i in _sums(jobs)] for name, jobs in doc["lists"].items()}
    except Unreadable:
        raise
    except (binascii.Error, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Unreadable(
            f"status.compactJobStatus: data is not {ENCODING} of JSON: {exc}"
        ) from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise Unreadable(
            f"status.compactJobStatus: data is not a version {VERSION} document: {exc!r}"
        ) from None
    counts = dict(field.get("counts") or {})
    given = {"jobStatusList": len(items), "conditions": len(conditions)}
    given.update((name, len(jobs)) for name, jobs in lists.items())
    if counts != given:
        raise Unreadable(
            f"status.compactJobStatus: data holds {given}, not the counts given ({counts})"
        )
    return items, conditions, lists


def expand(status: Mapping[str, Any]) -> dict[str, Any]:
    """A status in wire form with its `compactJobStatus` (if any) unfolded into Volcano's
    layout: every status list, `jobStatusList` item and `conditions` entry, in the order
    written. Unreadable as `decode`."""
    field = status.get(FIELD)
    if not field:
        return dict(status)
    items, conditions, lists = decode(field)
    out: dict[str, Any] = {name: jobs for name, jobs in lists.items() if jobs}
    if items:
        out["jobStatusList"] = items
    if conditions:
        out["conditions"] = conditions
    for key, value in status.items():
        if key not in out and key not in LAYOUT and key != FIELD:
            out[key] = value
    return out


#: The status lists (job names), in the model's field order (`JobFlowStatus`).
STATUS_LISTS = (
    "pendingJobs",
    "runningJobs",
    "failedJobs",
    "completedJobs",
    "terminatedJobs",
    "unKnowJobs",
)
#: The status fields the compact form holds in full: the lists, the records.
LAYOUT = (*STATUS_LISTS, "jobStatusList", "conditions")


# -- the columnar document -----------------------------------------------------------------
#
def _deltas(numbers: list[int], start: int = 0) -> list[int]:
    return [n - p for p, n in zip([start, *numbers], numbers, strict=False)]


def _sums(deltas: list[int]) -> list[int]:
    total, out = 0, []
    for delta in deltas:
        total += int(delta)
        out.append(total)
    return out


# A table is {"rows": n, "columns": {key: column}}, the columns by key; a column holds one
# key of every record, in record order: {"type": t, "values": [...]} and, where a record
# lacks the key or has it null, the row numbers in "absent" or "nulls" (the shorter;
# `values` holds null there).
# Types: "t" a canonical RFC 3339 time (as Unix seconds), "s" a string (an index into
# `strings`), "v" any other JSON value (an index into `strings` of its JSON text) — each of
# these three as the difference from the previous value of the column (the first from
# `base`, the first time, for "t"; from 0 else) —, "i" an integer, "d" a record (`values` 0,
# "table" the records), "l" a list of records (`values` the lengths, "table" the records of
# all the lists, concatenated). The status lists are string indices, as differences too.


class _Strings:
    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def add(self, text: str) -> int:
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self.values)
            self.values.append(text)
        return index


class _Times:
    """Canonical RFC 3339 times as Unix seconds (each text parsed once); `base` the first."""

    def __init__(self) -> None:
        self.base: int | None = None
        self._seconds: dict[str, int | None] = {}

    def seconds(self, text: str) -> int | None:
        if text in self._seconds:
            return self._seconds[text]
        value: int | None = None
        if len(text) == 20:
            try:
                moment = clock.parse_rfc3339(text)
                if clock.rfc3339(moment) == text:
                    value = int(moment.timestamp())
            except ValueError:
                pass
        self._seconds[text] = value
        return value


_MISSING = object()


def _table(records: list[Record], strings: _Strings, times: _Times) -> dict[str, Any]:
    keys: set[str] = set()
    for record in records:
        keys.update(record)
    # (by name: a record's own key order is not kept, so equal records encode the same)
    columns = {
        key: _column([record.get(key, _MISSING) for record in records], strings, times)
        for key in sorted(keys)
    }
    return {"rows": len(records), "columns": columns}


def _column(cells: list[Any], strings: _Strings, times: _Times) -> dict[str, Any]:
    absent: list[int] = []
    nulls: list[int] = []
    present: list[Any] = []
    for row, cell in enumerate(cells):
        if cell is _MISSING:
            absent.append(row)
        elif cell is None:
            nulls.append(row)
        else:
            present.append(cell)
    kind = _kind(present, times)
    values: list[Any]
    if kind == "i":
        values = [None if c is _MISSING else c for c in cells]
    elif kind == "l":
        values = [len(c) if c is not _MISSING and c is not None else None for c in cells]
    elif kind == "d":
        values = [0 if c is not _MISSING and c is not None else None for c in cells]
    else:
        numbers: list[int]
        if kind == "t":
            numbers = [times.seconds(c) or 0 for c in present]  # (all times: see _kind)
            if times.base is None:
                times.base = numbers[0]
            previous = times.base
        else:
            add = strings.add
            numbers = [add(c) for c in present] if kind == "s" else [add(_json(c)) for c in present]
            previous = 0
        deltas = iter(_deltas(numbers, previous))
        values = [None if c is _MISSING or c is None else next(deltas) for c in cells]
    column: dict[str, Any] = {"type": kind, "values": values}
    if absent and len(absent) <= len(nulls):
        column["absent"] = absent
    elif nulls:
        column["nulls"] = nulls
    if kind == "l":
        column["table"] = _table([record for cell in present for record in cell], strings, times)
    elif kind == "d":
        column["table"] = _table(present, strings, times)
    return column


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _kind(present: list[Any], times: _Times) -> str:
    """The column type of these values (all of one type, else "v")."""
    types = {type(c) for c in present}
    if types == {str}:
        seconds = times.seconds
        return "t" if all(seconds(c) is not None for c in present) else "s"
    if types <= {str}:  # (no value: all absent or null)
        return "s"
    if types == {int}:
        return "i"
    if types == {dict}:
        return "d"
    if types == {list} and all(type(r) is dict for c in present for r in c):
        return "l"
    return "v"


def _rows(table: Mapping[str, Any], strings: list[str], base: int | None) -> list[Record]:
    count = int(table["rows"])
    records: list[Record] = [{} for _ in range(count)]
    for key, column in table["columns"].items():
        for row, value in zip(range(count), _cells(column, count, strings, base), strict=True):
            if value is not _MISSING:
                records[row][key] = value
    return records


def _cells(
    column: Mapping[str, Any], count: int, strings: list[str], base: int | None
) -> list[Any]:
    kind, values = column["type"], column["values"]
    if len(values) != count:
        raise ValueError(f"a column has {len(values)} values for {count} rows")
    absent, nulls = set(column.get("absent") or ()), set(column.get("nulls") or ())
    inner = _rows(column["table"], strings, base) if kind in ("l", "d") else []
    out: list[Any] = []
    if kind == "t" and base is None:
        raise ValueError("a time column without a base")
    previous: int = (base or 0) if kind == "t" else 0
    used = 0
    for row, value in enumerate(values):
        if value is None:
            out.append(None if row in nulls or (absent and row not in absent) else _MISSING)
            continue
        if kind in ("t", "s", "v"):
            previous += int(value)
            if kind != "t" and not 0 <= previous < len(strings):
                raise ValueError(f"string {previous} of {len(strings)}")
        if kind == "t":
            out.append(_rfc3339(previous))
        elif kind == "s":
            out.append(strings[previous])
        elif kind == "v":
            out.append(json.loads(strings[previous]))
        elif kind == "i":
            out.append(int(value))
        elif kind == "l":
            out.append(inner[used : used + value])
            used += value
        elif kind == "d":
            out.append(inner[used])
            used += 1
        else:
            raise ValueError(f"unknown column type {kind!r}")
    return out


@functools.lru_cache(maxsize=4096)
def _rfc3339(seconds: int) -> str:
    return clock.rfc3339(datetime.fromtimestamp(seconds, UTC))
