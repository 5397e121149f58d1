"""Read manifests (files, directories, stdin; YAML or JSON; multi-document; `kind: List`)
and turn them into typed objects, with every problem as a FieldError that names the file,
document, line, kind, namespace/name and field path.

Called by the CLI, the conformance runner and tests. YAML is loaded with `yamlreader`'s
safe loader (read as Kubernetes reads YAML; libyaml's parser when PyYAML has it); a YAML
error is one line naming the file and, where known, the line. Documents of plain YAML are
built from the nodes directly (`yamlreader.plain_data`); the nodes are not kept (see
`_Text`). Schema errors are worded by `modelerrors`. What a file may hold is bounded
(`bounds`: its size, its nesting, its aliases' expansion).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
import yaml

from vcflow.api import bounds, config, jsontext, names, scheduling
from vcflow.api.errors import FieldError, Origin, ParseError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.modelerrors import schema_errors
from vcflow.api.vcjob import VCJob
from vcflow.api.yamlreader import _NOT_PLAIN, KubeSafeLoader, plain_data

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

#: (apiVersion, kind) → model; the kinds vcflow stores.
MODELS: dict[tuple[str, str], type[Resource]] = {
    (names.FLOW_API_VERSION, "JobFlow"): JobFlow,
    (names.FLOW_API_VERSION, "JobTemplate"): JobTemplate,
    (names.BATCH_API_VERSION, "Job"): VCJob,
    ("v1", "ConfigMap"): config.ConfigMap,
    ("v1", "Secret"): config.Secret,
    (scheduling.SCHEDULING_API_VERSION, "Queue"): scheduling.Queue,
    (scheduling.PRIORITY_API_VERSION, "PriorityClass"): scheduling.PriorityClass,
}


@dataclass
class Document:
    """One object as read: its data, where it came from, and the YAML node for line lookup."""

    data: dict[str, Any]
    origin: Origin
    _node: yaml.Node | _Recomposed | None = field(default=None, repr=False)
    prefix: tuple[str | int, ...] = ()

    @property
    def node(self) -> yaml.Node | None:
        """The document's YAML node (None for JSON or built data); a file read here has its
        text composed again the first time one of its documents is asked for a line."""
        if isinstance(self._node, _Recomposed):
            self._node = self._node.node()
        return self._node

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The 1-based line of the deepest node along `loc` (None without a YAML node)."""
        node = self.node
        if node is None:
            return self.origin.line
        line = node.start_mark.line + 1
        for part in (*self.prefix, *loc):
            found = _child(node, part)
            if found is None:
                break
            anchor, node = found
            line = anchor.start_mark.line + 1
        return line


class _Text:
    """A YAML file's text and the loader that read it, composed again on demand.

    Lines are only needed for errors and warnings, so the node tree of a read document is
    dropped: kept, its nodes and libyaml's marks (hundreds of objects per JobTemplate) made
    every full GC pass longer for as long as the manifests lived, and `vcflow run` keeps
    them for the whole run.
    """

    __slots__ = ("loader", "nodes", "text")

    def __init__(self, text: str, loader: type[yaml.SafeLoader]) -> None:
        self.text = text
        self.loader = loader
        self.nodes: list[yaml.Node | None] | None = None

    def node(self, index: int) -> yaml.Node | None:
        if self.nodes is None:
            self.nodes = _compose_all(self.text, self.loader)
        return self.nodes[index] if index < len(self.nodes) else None


def _compose_all(text: str, loader_type: type[yaml.SafeLoader]) -> list[yaml.Node | None]:
    """The node of every document, up to the first one that does not compose."""
    nodes: list[yaml.Node | None] = []
    loader = loader_type(text)
    try:
        while loader.check_node():
            nodes.append(loader.get_node())
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        pass  # read here before: the documents after it were never Documents
    finally:
        loader.dispose()
    return nodes


class _Recomposed:
    """The node of document `index` of a `_Text`, composed when first needed."""

    __slots__ = ("index", "text")

    def __init__(self, text: _Text, index: int) -> None:
        self.text = text
        self.index = index

    def node(self) -> yaml.Node | None:
        return self.text.node(self.index)


def _child(node: yaml.Node, part: str | int) -> tuple[yaml.Node, yaml.Node] | None:
    """(node whose line names `part`, value node): a mapping key's line, not its value's."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
                return key_node, value_node
    elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        if 0 <= part < len(node.value):
            item: yaml.Node = node.value[part]
            return item, item
    return None


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files to read, in order: directories expand to their manifests, sorted (none, for a
    directory without any: as kubectl, it gives no object); `-` is stdin; an empty path
    is ParseError, as a missing file is."""
    out: list[str] = []
    for raw in paths:
        if raw == "-":
            out.append(raw)
            continue
        if not raw:  # Path("") is ".": `-f "$UNSET"` would read every manifest here
            raise ParseError('the path "" does not exist (an empty -f names no file)')
        path = Path(raw)
        try:  # (the OS's reason: a symlink loop, a directory not readable, not "no such file")
            if not path.is_dir():
                path.stat()
                out.append(raw)
                continue
            out.extend(
                sorted(
                    str(p)
                    for p in path.iterdir()
                    if p.is_file() and p.suffix in MANIFEST_SUFFIXES and not p.name.startswith(".")
                )
            )
        except OSError as exc:
            reason = (exc.strerror or type(exc).__name__).lower()
            raise ParseError(reason, origin=Origin(raw)) from None
    return out


def read_documents(paths: Iterable[str], *, stdin: io.TextIOBase | None = None) -> list[Document]:
    """Every object in `paths`; raises ParseError on the first unreadable file or document."""
    docs: list[Document] = []
    for source in expand_paths(paths):
        label = "<stdin>" if source == "-" else source
        docs.extend(parse_text(_read_text(source, stdin), label))
    return docs


def read_file_lenient(
    source: str, *, stdin: io.TextIOBase | None = None
) -> list[Document | ParseError]:
    """The documents of one file, with a document that is not an object reported in its
    place and reading going on; only unreadable text or YAML syntax ends the file early."""
    label = "<stdin>" if source == "-" else source
    try:
        text = _read_text(source, stdin)
    except ParseError as exc:
        return [exc]
    out: list[Document | ParseError] = []
    try:
        if label.endswith(".json"):
            out.extend(_from_json(text, label))
        else:
            out.extend(_from_yaml(text, label, lenient=True))
    except ParseError as exc:
        out.append(exc)
    return out


def _read_text(source: str, stdin: io.TextIOBase | None) -> str:
    """The text of a file, or of stdin for `-`; undecodable, unreadable or larger than
    `bounds.MAX_FILE_BYTES` → ParseError. At most one byte past the bound is read, so
    `/dev/zero` is refused as fast as a big file."""
    label = "<stdin>" if source == "-" else source
    limit = bounds.MAX_FILE_BYTES
    try:
        if source == "-" and stdin is not None:
            text = stdin.read(limit + 1)
            size = len(text)  # characters: a text stream's own unit
        elif source == "-":
            if sys.stdin is None:  # (started with stdin closed: `vcflow apply -f - <&-`)
                raise ParseError("stdin is closed: nothing to read", origin=Origin(label))
            # (bytes, decoded as a file's are: under a C locale sys.stdin reads undecodable
            # bytes as lone surrogates, which YAML then called `unacceptable character #xdce9`)
            data = sys.stdin.buffer.read(limit + 1)
            size = len(data)
            text = data.decode("utf-8-sig")
        else:
            with Path(source).open("rb") as f:
                data = f.read(limit + 1)
            size = len(data)
            # ("-sig": a byte-order mark, as Windows editors write, is no text: YAML skipped it
            # and JSON refused it, `Unexpected UTF-8 BOM (decode using utf-8-sig)`)
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason})", origin=Origin(label)) from None
    except OSError as exc:
        raise ParseError(exc.strerror or str(exc), origin=Origin(source)) from None
    if size > limit:
        message = f"larger than {bounds.mib(limit)}, the most vcflow reads from one file"
        raise ParseError(message, origin=Origin(label))
    return text


def parse_text(text: str, source: str) -> list[Document]:
    """Documents of one file's text: JSON for `.json`, else (multi-document) YAML."""
    if source.endswith(".json"):
        return _from_json(text, source)
    return [d for d in _from_yaml(text, source) if isinstance(d, Document)]


def _from_json(text: str, source: str) -> list[Document]:
    try:
        data = jsontext.loads(text)
    except jsontext.Invalid as exc:
        raise ParseError(f"invalid JSON: {exc}", origin=Origin(source, 0, exc.line)) from None
    sized = len(text) > bounds.MAX_OBJECT_BYTES // 4
    return list(_objects(data, Origin(source, 0, 1), None, sized=sized))


def _from_yaml(text: str, source: str, *, lenient: bool = False) -> Iterator[Document | ParseError]:
    _check_printable(text, source)
    loader = KubeSafeLoader(text)
    kept = _Text(text, KubeSafeLoader)
    anchored = "&" in text  # without an anchor there is no alias: nothing expands
    escaped = "\\u" in text or "\\U" in text  # only an escape makes a lone surrogate
    sized = len(text) > bounds.MAX_OBJECT_BYTES // 4  # (JSON is at most 4x its YAML)
    index = 0
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                node = loader.get_node()
                if anchored and node is not None:
                    bounds.measure_yaml(node)
                data = plain_data(node, loader)
                if data is _NOT_PLAIN:
                    if not anchored and node is not None:
                        bounds.measure_yaml(node)  # deeper than plain_data goes
                    data = loader.construct_document(node)
            except bounds.Exceeded as exc:
                # an expansion names its document's first line; nesting, like a parser's, none
                line = node.start_mark.line + 1 if node is not None else None
                if str(exc) == bounds.NESTED:
                    line = None
                raise ParseError(
                    f"invalid YAML: {exc}", origin=Origin(source, index, line)
                ) from None
            except RecursionError:
                raise ParseError(
                    f"invalid YAML: {bounds.NESTED}", origin=Origin(source, index)
                ) from None
            except yaml.MarkedYAMLError as exc:
                raise _marked_error(exc, source, index) from None
            except (yaml.YAMLError, ValueError, TypeError) as exc:
                raise ParseError(
                    f"invalid YAML: {_one_line(str(exc))}", origin=Origin(source, index)
                ) from None
            if data is not None and node is not None:
                origin = Origin(source, index, node.start_mark.line + 1)
                problem = bounds.surrogate_in(data) if escaped else None
                if problem is not None:  # (libyaml refuses them itself)
                    raise ParseError(f"invalid YAML: {problem}", origin=origin)
                try:
                    yield from _objects(data, origin, node, _Recomposed(kept, index), sized=sized)
                except ParseError as exc:
                    if not lenient:
                        raise
                    yield exc
            index += 1
    finally:
        loader.dispose()


#: Characters YAML forbids in a stream (PyYAML's pure-Python reader's own set).
_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE


def _check_printable(text: str, source: str) -> None:
    """Refuse a text with a character YAML forbids before parsing any of it, as the
    pure-Python reader does (libyaml finds one only when it gets there, and cannot encode a
    lone surrogate at all)."""
    found = _NON_PRINTABLE.search(text)
    if found is None:
        return
    line = text.count("\n", 0, found.start()) + 1
    raise ParseError(
        f"invalid YAML: unacceptable character #x{ord(found.group()):04x}: "
        "special characters are not allowed",
        origin=Origin(source, 0, line),
    )


def _marked_error(exc: yaml.MarkedYAMLError, source: str, index: int) -> ParseError:
    """One line from a parser, scanner, composer or constructor error, whichever library
    raised it: the problem, then what was being read and from where, at the problem's line.

    libyaml's "exceeded maximum nesting depth" reads as the pure parser's RecursionError does.
    """
    problem_mark, context_mark = exc.problem_mark, exc.context_mark
    mark = problem_mark or context_mark
    problem = _one_line(exc.problem or "")
    context = _one_line(exc.context or "")
    if problem == "exceeded maximum nesting depth":
        return ParseError(f"invalid YAML: {bounds.NESTED}", origin=Origin(source, index))
    if problem and context:
        where = _position(context_mark)
        if where and where != _position(problem_mark):
            context += f" at {where}"
        detail = f"{problem} ({context})"
    else:
        detail = problem or context or "syntax error"
    line = mark.line + 1 if mark is not None else None
    return ParseError(f"invalid YAML: {detail}", origin=Origin(source, index, line))


def _position(mark: yaml.Mark | None) -> str:
    return "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}"


def _one_line(text: str) -> str:
    """`text` with every run of whitespace, newlines included, as one space."""
    return " ".join(text.split())


def _objects(
    data: Any,
    origin: Origin,
    node: yaml.Node | None,
    later: _Recomposed | None = None,
    *,
    sized: bool = False,
) -> Iterator[Document]:
    """Split a `kind: List` into its items; check each object is a mapping (and, if `sized`,
    within `bounds.MAX_OBJECT_BYTES`). The Documents keep `later` in place of `node`."""
    for doc in _listed(data, origin, node, later):
        if sized and (size := bounds.object_size(doc.data)) > bounds.MAX_OBJECT_BYTES:
            kind, ns, name = identity(doc.data)
            what = f"{kind or 'object'} {ns}/{name}: " if name else ""
            raise ParseError(what + bounds.too_large(size), origin=doc.origin)
        yield doc


def _listed(
    data: Any, origin: Origin, node: yaml.Node | None, later: _Recomposed | None
) -> Iterator[Document]:
    if not isinstance(data, dict):
        raise ParseError(
            f"expected a Kubernetes object (a mapping), got {_type_name(data)}", origin=origin
        )
    if data.get("kind") == "List" and data.get("apiVersion") in ("v1", None):
        items = data.get("items")
        if items is None:  # (as kubectl: a List without items holds no object)
            return
        if not isinstance(items, list):
            message = f"items: expected a list of objects, got {_type_name(items)}"
            raise ParseError(f"List: {message}", origin=origin)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ParseError(
                    f"items[{i}]: expected a Kubernetes object (a mapping), got {_type_name(item)}",
                    origin=origin,
                )
            doc = Document(item, origin, node, ("items", i))
            line = doc.line_of(())
            kept = later or node
            yield Document(item, Origin(origin.source, origin.document, line), kept, ("items", i))
        return
    yield Document(data, origin, later or node)


def _type_name(value: Any) -> str:
    return {
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
    }.get(type(value), type(value).__name__)


def identity(data: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, namespace, name) as well as they can be read from raw data, for messages."""
    kind = data.get("kind")
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name")
    return (
        kind if isinstance(kind, str) else "",
        ns if isinstance(ns, str) and ns else names.DEFAULT_NAMESPACE,
        name if isinstance(name, str) else "",
    )


def to_model(doc: Document) -> tuple[Resource | None, list[FieldError]]:
    """The typed object of a document, or the schema errors that stop it being one."""
    data = doc.data
    kind, ns, name = identity(data)

    def err(message: str, path: str = "", loc: Sequence[str | int] = ()) -> FieldError:
        origin = Origin(doc.origin.source, doc.origin.document, doc.line_of(loc))
        return FieldError(message, path, kind or "object", ns, name, origin)

    api_version = data.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        return None, [err("Required value", "apiVersion", ("apiVersion",))]
    if not isinstance(kind, str) or not kind:
        return None, [err("Required value", "kind", ("kind",))]
    model = MODELS.get((api_version, kind))
    if model is None:
        known = ", ".join(f"{k} ({v})" for v, k in MODELS)
        return None, [err(f'no kind "{kind}" in version "{api_version}"; vcflow knows {known}')]
    if model is not JobFlow and isinstance(data.get("spec"), dict):
        data = {**data, "spec": without_nulls(data["spec"])}
    try:
        obj = model.from_dict(data)
    except pydantic.ValidationError as exc:
        return None, [err(message, path, loc) for path, loc, message in schema_errors(exc, data)]
    return obj, []


def without_nulls(data: dict[str, Any]) -> dict[str, Any]:
    """`data` without its null-valued keys, at every depth: in Kubernetes a null field is an
    absent one (the API server prunes them from a vcjob's or JobTemplate's spec, and a pod's
    fields are omitted when empty), so `priorityClassName: null` in a pod template must not
    come back in every pod's YAML. A JobFlow keeps its nulls: in `patch.jobSpec` a null
    deletes the template's value (merge-patch rules). Items of lists stay as they are."""
    return {k: _pruned(v) for k, v in data.items() if v is not None}


def _pruned(value: Any) -> Any:
    if type(value) is dict:
        return without_nulls(value)
    if type(value) is list:
        return [_pruned(item) for item in value]
    return value


def dump_yaml(data: Any) -> str:
    """YAML for `-o yaml`: block style, keys in the order given."""
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)
