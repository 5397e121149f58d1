"""kubectl's JSONPath templates (`-o jsonpath=...`, `--sort-by`, `-o custom-columns`, `wait
--for=jsonpath=...`) on top of jsonpath-ng, which evaluates the paths.

kubectl's syntax is not plain JSONPath: a template is text with `{...}` actions — a path
(`{.items[*].metadata.name}`), a string (`{"\\n"}`), `{range PATH}...{end}` — and a path
starts with `.` (the current object), `@` or `$` (the whole object), with field names that
may hold `/` and `-` and escape a dot as `\\.` (`.metadata.labels.volcano\\.sh/x`). This
module parses the template, turns each path into jsonpath-ng's syntax (every field name
quoted) and prints as kubectl does: the values of one action joined by a space, a string
as it is, anything else as compact JSON; a missing field prints nothing. Used by `get`,
`wait` and `output`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jsonpath_ng import JSONPath
from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.ext.parser import parse as parse_path


class TemplateError(ValueError):
    """A template or path that does not parse; the message names it and what is wrong."""


#: The deepest path: jsonpath-ng finds a path's values recursively, a level or two a step,
#: so a path of a thousand steps exhausted Python's stack (`internal error: RecursionError`).
MAX_DEPTH = 100
#: What ends a field name in a path: the next step, a bracket, an operator of a filter.
_NAME_END = set(".[]()=!<>~,|&'\" \t")


@dataclass(frozen=True)
class Path:
    """One kubectl path, compiled."""

    text: str
    compiled: JSONPath
    from_root: bool  # `$...`: the whole object, also inside a range

    def values(self, current: Any, root: Any = None) -> list[Any]:
        """The values the path selects under `current` (or the root for `$...`)."""
        data = root if self.from_root and root is not None else current
        return [match.value for match in self.compiled.find(data)]


def path(text: str) -> Path:
    """A kubectl path (`.metadata.name`, `@.a`, `$.items[*].b`); TemplateError if bad."""
    stripped = text.strip()
    if not stripped:
        raise TemplateError("empty JSONPath")
    from_root = stripped.startswith("$")
    if not stripped.startswith((".", "$", "@", "[")):
        stripped = f".{stripped}"
    try:
        compiled = parse_path(_translated(stripped))
    except TemplateError:
        raise
    except (JsonPathLexerError, JsonPathParserError, ValueError) as exc:
        reason = " ".join(str(exc).split())
        raise TemplateError(f"invalid JSONPath {stripped}: {reason}") from None
    if _depth(compiled) > MAX_DEPTH:
        raise TemplateError(f"invalid JSONPath: more than {MAX_DEPTH} steps deep")
    return Path(stripped, compiled, from_root)


def _depth(compiled: JSONPath) -> int:
    """How deep the path's tree is (each step a level: `.a.b` is Child(Child($, a), b));
    iterative, as a deep one is what it measures."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(compiled, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        parts = [getattr(node, a, None) for a in ("left", "right", "target")]
        parts += getattr(node, "expressions", None) or []
        stack.extend((part, depth + 1) for part in parts if part is not None)
    return deepest


def relaxed(text: str) -> Path:
    """A path as `--sort-by` and custom-columns take it: `.a.b`, `{.a.b}` or `a.b`."""
    match = re.fullmatch(r"\{([^{}]+)\}|([^{}]+)", text.strip())
    if match is None or not (match.group(1) or match.group(2)).strip():
        raise TemplateError(
            f"invalid JSONPath {text!r}: give a field path such as .metadata.name or "
            "{.metadata.name}"
        )
    return path(match.group(1) or match.group(2))


def _translated(text: str) -> str:
    """kubectl's path in jsonpath-ng's syntax: `$` first, field names quoted (`\\.`
    unescaped), strings, brackets and filter operators as they are."""
    out = ["$"]
    i = 1 if text[0] in "@$" else 0
    while i < len(text):
        char = text[i]
        if char in "'\"":
            end = _string_end(text, i)
            out.append(text[i : end + 1])
            i = end + 1
        elif char == ".":
            dots = ".." if text.startswith("..", i) else "."
            i += len(dots)
            name, i = _field(text, i)
            if not name:
                if dots == "..":
                    out.append("..")
                    continue
                raise TemplateError(f"invalid JSONPath {text}: a '.' with no field name after it")
            out.append(dots + ("*" if name == "*" else _quoted(name)))
        elif char == "@" and (i + 1 == len(text) or text[i + 1] in ".["):
            out.append("@")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _field(text: str, i: int) -> tuple[str, int]:
    name: list[str] = []
    while i < len(text) and text[i] not in _NAME_END:
        if text[i] == "\\" and i + 1 < len(text):
            name.append(text[i + 1])
            i += 2
            continue
        name.append(text[i])
        i += 1
    return "".join(name), i


def _quoted(name: str) -> str:
    return f'"{name}"' if "'" in name else f"'{name}'"


def _string_end(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    raise TemplateError(f"invalid JSONPath {text}: unterminated string")


# --- templates -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Range:
    path: Path
    body: tuple[Node, ...]


Node = _Text | Path | _Range


@dataclass(frozen=True)
class Template:
    """A parsed kubectl JSONPath template."""

    text: str
    nodes: tuple[Node, ...]

    def render(self, data: Any) -> str:
        """The template's output on `data` (an object's or a List's wire dict)."""
        return "".join(_render(self.nodes, data, data))


def template(text: str) -> Template:
    """Parse a template; TemplateError naming it and what is wrong."""
    stack: list[list[Node]] = [[]]
    ranges: list[Path] = []
    i = 0
    while i < len(text):
        start = text.find("{", i)
        if start < 0:
            stack[-1].append(_Text(text[i:]))
            break
        if start > i:
            stack[-1].append(_Text(text[i:start]))
        end = _action_end(text, start)
        action = text[start + 1 : end].strip()
        i = end + 1
        if action == "end":
            if not ranges:
                raise TemplateError(f"error parsing jsonpath {text}: {{end}} with no {{range}}")
            body = tuple(stack.pop())
            stack[-1].append(_Range(ranges.pop(), body))
        elif action.startswith("range ") or action == "range":
            ranges.append(_action_path(text, action.removeprefix("range")))
            stack.append([])
        elif action and action[0] in "'\"":
            stack[-1].append(_Text(_literal(text, action)))
        else:
            stack[-1].append(_action_path(text, action))
    if ranges:
        raise TemplateError(f"error parsing jsonpath {text}: {{range}} with no {{end}}")
    return Template(text, tuple(stack[0]))


def _action_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] in "'\"":
            try:
                i = _string_end(text, i) + 1
            except TemplateError:
                break
            continue
        if text[i] == "}":
            return i
        i += 1
    raise TemplateError(f"error parsing jsonpath {text}: unclosed action")


def _action_path(text: str, action: str) -> Path:
    if not action.strip():
        raise TemplateError(f"error parsing jsonpath {text}: an empty action")
    try:
        return path(action)
    except TemplateError as exc:
        raise TemplateError(f"error parsing jsonpath {text}: {exc}") from None


def _literal(text: str, action: str) -> str:
    """A `{"..."}` (or `{'...'}`) string, with JSON's escapes (`\\n`, `\\t`, `\\u00e9`)."""
    quote, body = action[0], action[1:-1]
    if len(action) < 2 or action[-1] != quote:
        raise TemplateError(f"error parsing jsonpath {text}: unterminated string {action}")
    if quote == "'":
        body = re.sub(r'(?<!\\)"', r'\\"', body.replace("\\'", "'"))
    try:
        return str(json.loads(f'"{body}"'))
    except ValueError:
        raise TemplateError(f"error parsing jsonpath {text}: invalid string {action}") from None


def _render(nodes: Sequence[Node], current: Any, root: Any) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, Path):
            out.append(" ".join(text(value) for value in node.values(current, root)))
        else:
            for value in node.path.values(current, root):
                out.extend(_render(node.body, value, root))
    return out


def text(value: Any) -> str:
    """A value as kubectl's JSONPath prints it: a string as it is, others as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
