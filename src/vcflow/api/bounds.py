"""How much one input may make vcflow build: the size of a file, the nesting depth of a
document, and how far a YAML document's aliases may expand it (a "billion laughs" file of a
few hundred bytes names the same node billions of times). `loading` calls these while it
reads; the limits are in README ("Input bounds"). Pure: measures what it is given.

An alias is the node it names, so a composed YAML document is a graph, small however far
it expands; `measure_yaml` counts its expansion on that graph (each node once, each use of
it at the size it has), and refuses it as soon as a part grows past a bound, before any
data is built. No real manifest comes near a bound: a 10,000-entry flow is ~150,000 nodes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pydantic_core
import yaml

#: The largest file (or stdin) vcflow reads, in bytes.
MAX_FILE_BYTES = 32 * 1024 * 1024
#: The most nodes (mappings, sequences, scalars) one document may expand to through aliases.
MAX_NODES = 5_000_000
#: The most scalar text (characters) one document may expand to through aliases.
MAX_TEXT = 64 * 1024 * 1024
#: The deepest nesting of mappings and sequences in a document.
MAX_DEPTH = 100
#: The most digits of an integer (int64 has 19; Python refuses to convert past 4,300).
MAX_DIGITS = 32
#: The largest object, as JSON: etcd's default request limit (1.5 MiB), so the largest
#: object the Kubernetes API server stores. `loading` refuses a bigger document, the store
#: a bigger object a user writes.
MAX_OBJECT_BYTES = 1536 * 1024

NESTED = f"nested too deeply (more than {MAX_DEPTH} levels)"
TOO_MANY_DIGITS = (
    f"more than {MAX_DIGITS}, the most vcflow reads (Kubernetes' integers are 64-bit: 19)"
)


class Exceeded(ValueError):
    """A bound was passed; the message says which, in words for a one-line error."""


def mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB"


def measure_yaml(root: yaml.Node) -> None:
    """Refuse a composed document whose expansion passes a bound (Exceeded).

    Iterative, so nesting never meets Python's recursion limit; a recursive alias (a node
    inside itself) counts once and is left to the constructor, which refuses it.
    """
    done: dict[yaml.Node, tuple[int, int, int]] = {}  # node → (nodes, text, depth)
    busy: set[yaml.Node] = {root}
    # frames: node, its children, [next child, nodes, text, depth of the deepest child]
    stack: list[tuple[yaml.Node, list[yaml.Node], list[int]]] = []
    if isinstance(root, yaml.ScalarNode):
        return
    stack.append((root, _children(root), [0, 1, 0, 0]))
    while stack:
        node, children, acc = stack[-1]
        pushed = False
        while acc[0] < len(children):
            child = children[acc[0]]
            acc[0] += 1
            if isinstance(child, yaml.ScalarNode):
                acc[1] += 1
                acc[2] += len(child.value)
                continue
            size = done.get(child)
            if size is None and child not in busy:
                if len(stack) >= MAX_DEPTH:
                    raise Exceeded(NESTED)
                busy.add(child)
                stack.append((child, _children(child), [0, 1, 0, 0]))
                pushed = True
                break
            nodes, text, depth = size if size is not None else (1, 0, 1)
            acc[1] += nodes
            acc[2] += text
            acc[3] = max(acc[3], depth)
        if pushed:
            continue
        stack.pop()
        busy.discard(node)
        size = (acc[1], acc[2], acc[3] + 1)
        _check(*size)
        done[node] = size
        if stack:
            parent = stack[-1][2]
            parent[1] += size[0]
            parent[2] += size[1]
            parent[3] = max(parent[3], size[2])


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value)


def _check(nodes: int, text: int, depth: int) -> None:
    if nodes > MAX_NODES:
        raise Exceeded(f"aliases expand the document to more than {MAX_NODES:,} nodes")
    if text > MAX_TEXT:
        raise Exceeded(f"aliases expand the document to more than {mib(MAX_TEXT)} of text")
    if depth > MAX_DEPTH:
        raise Exceeded(NESTED)


def measure_data(data: Any) -> None:
    """Refuse data nested deeper than MAX_DEPTH (Exceeded): a JSON document, which has no
    aliases and is as big as its file. Iterative."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            items: Any = value.values()
        elif isinstance(value, list):
            items = value
        else:
            continue
        if depth >= MAX_DEPTH:
            raise Exceeded(NESTED)
        stack.extend((item, depth + 1) for item in items)


def object_size(data: Any) -> int:
    """The bytes of `data` as compact UTF-8 JSON (what the store keeps of an object),
    written once as bytes (a 10,000-item flow's status is several MB as text)."""
    try:
        return len(pydantic_core.to_json(data, inf_nan_mode="constants", fallback=str))
    except pydantic_core.PydanticSerializationError:  # (a lone surrogate)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
        return len(text.encode("utf-8", "surrogatepass"))


def too_large(size: int) -> str:
    """The message for an object of `size` bytes past MAX_OBJECT_BYTES."""
    return (
        f"the object is {size:,} bytes as JSON, more than {MAX_OBJECT_BYTES:,} (1.5 MiB): "
        "the Kubernetes API stores no object that large (etcd's default limit)"
    )


def surrogate_in(data: Any) -> str | None:
    """Why `data` cannot be written out as UTF-8 — a string or key holding a lone surrogate
    (`"\\ud800"` escapes make one) — or None. Iterative."""
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found = _SURROGATE.search(value)
            if found is not None:
                code = f"\\u{ord(found.group()):04x}"
                return f"{code} is a lone surrogate, not a character (text must be UTF-8)"
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
