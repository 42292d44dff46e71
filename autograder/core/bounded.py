"""Parsing YAML and JSON that a student or a download may have placed, within bounds.

A parser given a stranger's bytes must not cost the grader more than the bytes are worth. YAML
aliases make a few hundred bytes stand for billions of nodes (each ``&a [*b, *b, ...]`` multiplies
what the next one names: a 474-byte file cost grade-all 11 s and 596 MiB once the data was walked
and written out); nesting costs recursion; the text itself can be any size. So every read of such
a file goes through here, and refuses, with ``Refused`` (its ``reason`` one line), a text over
``Limits.max_bytes``, nesting deeper than ``Limits.max_depth``, or a document that would hold
more than ``Limits.max_nodes`` values once its aliases were expanded. The aliases are counted on
the parsed node graph (each anchored node's expanded size once, so the count itself is linear in
the text), before any Python value is built.

Used by grade-all's discovery (a Gradescope ``submission_metadata.yml``,
autograder/classdata/discover.py), the submission time from Gradescope's harness
(autograder/batch/submitted.py) and the Measure table (autograder/lessons/why17/measurements.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from shared import yamlfile


@dataclass(frozen=True)
class Limits:
    """What one document may cost: ``max_bytes`` of UTF-8 text, ``max_depth`` levels of nested
    lists and mappings, ``max_nodes`` values (scalars, lists, mappings) with every alias expanded."""

    max_bytes: int = 1 * 2**20
    max_depth: int = 64
    max_nodes: int = 100_000


#: The bounds used where a caller names none: a metadata file or a Measure table is a few KiB.
DEFAULT = Limits()


class Refused(ValueError):
    """The text is over a bound or not valid; ``reason`` is one line that reads after the file's
    name ("is nested too deeply (more than 64 levels)"): the caller puts the name before it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def head(path: Path | str, limits: Limits = DEFAULT) -> bytes:
    """At most ``limits.max_bytes`` + 1 bytes of the file at ``path`` (one more than allowed, so
    that the loaders see it is too large without reading all of it); OSError when unreadable."""
    with open(path, "rb") as fh:
        return fh.read(limits.max_bytes + 1)


def _text(data: bytes | str, limits: Limits) -> str:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > limits.max_bytes:
        raise Refused(f"is larger than {limits.max_bytes // 1024} KiB ({len(raw)} bytes)")
    if isinstance(data, str):
        return data
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("is not UTF-8 text") from None


def load_yaml(data: bytes | str, limits: Limits = DEFAULT):
    """The one YAML document in ``data`` as plain data (the safe loader's types), or Refused."""
    text = _text(data, limits)
    try:
        _check_depth(yaml.parse(text, Loader=yamlfile.LOADER), limits)
        loader = yamlfile.LOADER(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expanded(node, limits)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise Refused(f"is not valid YAML ({' '.join(str(exc).split())[:160]})") from None
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        # the safe constructors' own refusals (a timestamp out of range, an unhashable key)
        if isinstance(exc, Refused):
            raise
        raise Refused(f"is not valid YAML ({type(exc).__name__})") from None


def _check_depth(events, limits: Limits) -> None:
    """Refuse nesting deeper than the limit, from the parser's events (before any node is built:
    the composer recurses once per level)."""
    depth = 0
    for event in events:
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > limits.max_depth:
                raise Refused(f"is nested too deeply (more than {limits.max_depth} levels)")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _check_expanded(root: yaml.Node, limits: Limits) -> None:
    """Refuse a node graph that stands for more than ``max_nodes`` values with its aliases
    expanded; each distinct node's expanded size is computed once (the graph is a DAG: the
    composer refuses an alias to a node still being built)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total = 1 + sum(sizes[id(c)] for c in children)
        if total > limits.max_nodes:
            raise Refused(f"stands for more than {limits.max_nodes} values once its aliases are expanded")
        sizes[id(node)] = total


def _children(node: yaml.Node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_json(data: bytes | str, limits: Limits = DEFAULT, *, constant=None):
    """The JSON value in ``data``, or Refused: over a bound, not UTF-8, invalid. ``constant``
    is called with 'NaN', 'Infinity' or '-Infinity' where the text holds one (its value or its
    exception stands); without it they are refused. JSON has no aliases: its values are its
    text's, so ``max_bytes`` bounds them; nesting is counted before parsing."""
    text = _text(data, limits)
    _check_json_depth(text, limits)

    def no_constant(name):
        raise Refused(f"holds {name}, which is not a JSON number")

    try:
        return json.loads(text, parse_constant=constant or no_constant)
    except json.JSONDecodeError as exc:
        raise Refused(f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise Refused(f"is nested too deeply (more than {limits.max_depth} levels)") from None
    except ValueError as exc:   # an integer of more digits than Python reads
        if type(exc) is not ValueError:
            raise
        raise Refused("holds a number Python does not read (" + " ".join(str(exc).split())[:120] + ")") from None


def _check_json_depth(text: str, limits: Limits) -> None:
    """Refuse nesting deeper than the limit, by a scan of brackets outside strings (skipped when
    the text holds too few brackets to nest that deep)."""
    if text.count("[") + text.count("{") <= limits.max_depth:
        return
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limits.max_depth:
                raise Refused(f"is nested too deeply (more than {limits.max_depth} levels)")
        elif ch in "]}":
            depth -= 1
