"""Load one inventory file: safe YAML into plain data, remembering where every key and value is.

PyYAML's composer gives nodes with line/column marks; we convert nodes to plain Python
ourselves so that we can (1) record positions for every key path, (2) refuse duplicate keys,
unknown tags, recursive and exponentially expanding aliases, and (3) never construct arbitrary
objects. Nothing here raises on bad input: problems come back as diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.records import record

PathKey = tuple[str | int, ...]

MAX_NODES = 500_000
"""Upper bound on values after alias expansion: stops 'billion laughs' documents early.
A 5,000-switch inventory with every node pinned holds well under 100,000 values."""


class _TooLarge(Exception):
    """Internal: abandon the conversion of an exploding document."""


MAX_FILE_BYTES = 16 * 1024 * 1024

_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


def format_path(path: PathKey) -> str:
    """('leaves', 'nodes', 2, 'asn') -> 'leaves.nodes[2].asn'. Keys with control characters are
    shown escaped, so a diagnostic cannot write escape sequences to the user's terminal.

    >>> print(format_path(("jobs", "train\\x1b[2J", "gpus")))
    jobs.train\\x1b[2J.gpus
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            shown = part if part.isprintable() else part.encode("unicode_escape").decode("ascii")
            text += f".{shown}" if text else shown
    return text


@dataclass(slots=True)
class SourceMap:
    """Where each value (and each mapping key) sits in the file."""

    file: str
    values: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    keys: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    plain: dict[PathKey, str] = field(default_factory=dict)
    """The text of each unquoted scalar that YAML 1.1 typed as a number or boolean (`1:1` is
    61, `010` is 8, `on` is true): the schema-aware stage (`inventory/implicit.py`) reads it
    as the person meant it where the schema expects another type, or refuses it."""

    def locate(self, path: PathKey, *, key: bool = False) -> tuple[int, int]:
        """Best position for a path: the exact node, else the closest existing parent."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            probe = probe[:-1]
        return self.values.get((), (1, 1))

    def diagnostic(self, path: PathKey, message: str, *, hint: str = "", key: bool = False) -> Diagnostic:
        line, column = self.locate(path, key=key)
        return Diagnostic(message, format_path(path), self.file, line, column, hint)


@record
class LoadedDocument:
    data: Any
    source: SourceMap


def resolve_inventory_path(path: Path) -> Path:
    """A folder means its `fabric.yml`."""
    return path / "fabric.yml" if path.is_dir() else path


def load_inventory(path: Path, display_name: str | None = None) -> LoadedDocument:
    """Read and parse; raises FabricError with every problem found."""
    file_path = resolve_inventory_path(path)
    name = display_name or str(file_path)
    try:
        raw = file_path.read_bytes()
    except OSError as exc:
        raise FabricError([Diagnostic(f"cannot read inventory: {exc.strerror or exc}", file=name)]) from None
    if len(raw) > MAX_FILE_BYTES:
        raise FabricError([Diagnostic(f"file is larger than {MAX_FILE_BYTES} bytes", file=name)])
    return parse_inventory_text(decode_inventory(raw, name), name)


_UTF16_BOMS = {b"\xff\xfe": "UTF-16 (little-endian)", b"\xfe\xff": "UTF-16 (big-endian)"}


def decode_inventory(raw: bytes, name: str) -> str:
    """UTF-8 text, or a FabricError saying where decoding failed (line, column and byte offset).

    UTF-16 files (what some Windows editors save) are named as such, and NUL bytes, which YAML
    forbids and no text editor writes, are refused where they are.

    >>> try:
    ...     decode_inventory(b"fabric:\\n  name: caf\\xe9\\n", "f.yml")
    ... except FabricError as exc:
    ...     print(exc.diagnostics[0].format())
    f.yml:2:12: not UTF-8 text: byte 0xe9 at byte 19 cannot be decoded (hint: save the file as UTF-8)
    """
    for bom, encoding in _UTF16_BOMS.items():
        if raw.startswith(bom) and not raw.startswith(b"\xff\xfe\x00\x00"):
            raise FabricError(
                [Diagnostic(f"the file is {encoding} text (byte-order mark at byte 0), not UTF-8", "", name, 1, 1, "save it as UTF-8")]
            )
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, column = _line_column(raw, nul)
        utf16 = raw.count(b"\x00") * 3 > len(raw)  # ASCII in UTF-16: every other byte is NUL
        hint = "the file looks like UTF-16 text; save it as UTF-8" if utf16 else "remove it; YAML text cannot hold NUL bytes"
        raise FabricError([Diagnostic(f"NUL byte at byte {nul}", "", name, line, column, hint)])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_column(raw, exc.start)
        bad = raw[exc.start : exc.start + 1].hex()
        message = f"not UTF-8 text: byte 0x{bad} at byte {exc.start} cannot be decoded"
        raise FabricError([Diagnostic(message, "", name, line, column, "save the file as UTF-8")]) from None


def _line_column(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of a byte offset.

    >>> _line_column(b"ab\\ncd", 4)
    (2, 2)
    """
    line_start = raw.rfind(b"\n", 0, offset) + 1
    return raw.count(b"\n", 0, offset) + 1, offset - line_start + 1


def parse_inventory_text(text: str, name: str) -> LoadedDocument:
    source = SourceMap(name)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or "YAML syntax error"
        hint = "indent with spaces; YAML does not allow tabs" if "\\t" in problem or "tab" in problem else ""
        indentation = indentation_problem(text, problem, line) if not hint else None
        if indentation is not None:
            raise FabricError([Diagnostic(indentation[0], "", name, indentation[1], indentation[2], indentation[3])]) from None
        raise FabricError([Diagnostic(f"YAML syntax error: {problem}", "", name, line, column, hint)]) from None
    except yaml.YAMLError as exc:
        raise FabricError([Diagnostic(f"YAML error: {exc}", file=name, line=1, column=1)]) from None
    if node is None:
        raise FabricError(
            [Diagnostic("the file is empty; expected a mapping with 'fabric', 'spines', 'leaves'", file=name, line=1, column=1)]
        )
    converter = _Converter(source)
    try:
        data = converter.convert(node, ())
    except _TooLarge:
        data = None
    if converter.problems:
        raise FabricError(converter.problems)
    return LoadedDocument(data, source)


_INDENTATION_PROBLEMS = (
    "mapping values are not allowed here",
    "expected <block end>",
    "did not find expected key",
    "could not find expected ':'",
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key_column(line: str) -> int:
    """Column (0-based) of a line's first key: after any `- ` of a list item."""
    column = _indent(line)
    while line[column : column + 2] == "- ":
        column += 2
        column += _indent(line[column:])
    return column


def indentation_problem(text: str, problem: str, line: int) -> tuple[str, int, int, str] | None:
    """(message, line, column, hint) naming the line whose indentation to fix, for the parser
    errors that a misplaced indent causes; None for other errors.

    >>> indentation_problem("leaves:\\n  count: 4\\n   model: x\\n", "mapping values are not allowed here", 3)[0]
    'YAML syntax error: check the indentation of line 3 (mapping values are not allowed here)'
    """
    if not problem.startswith(_INDENTATION_PROBLEMS):
        return None
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    here = lines[line - 1]
    above = next(
        (n for n in range(line - 1, 0, -1) if lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")),
        0,
    )
    message = f"YAML syntax error: check the indentation of line {line} ({problem})"
    if above == 0:
        return message, line, _indent(here) + 1, ""
    was, now = _key_column(lines[above - 1]), _indent(here)
    if now > was:
        hint = (
            f"line {line} starts in column {now + 1}, deeper than line {above} (column {was + 1}), which already has a value; "
            f"move it to column {was + 1}, or end line {above} with ':' to open a mapping"
        )
    elif now < was:
        hint = (
            f"line {line} starts in column {now + 1}, left of the keys of line {above} (column {was + 1}); "
            f"indent it like the keys it belongs with"
        )
    else:
        hint = f"line {line} starts in the same column as line {above}; check the line break and ':' of line {above}"
    return message, line, now + 1, hint


class _Converter:
    """Node graph -> plain data, with positions and guards."""

    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.problems: list[Diagnostic] = []
        self.count = 0
        self.active: set[int] = set()
        self.constructor = yaml.SafeLoader("")

    def _problem(self, node: yaml.Node, path: PathKey, message: str, hint: str = "") -> None:
        mark = node.start_mark
        self.problems.append(Diagnostic(message, format_path(path), self.source.file, mark.line + 1, mark.column + 1, hint))

    def convert(self, node: yaml.Node, path: PathKey) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            self._problem(
                node,
                path,
                f"document expands to more than {MAX_NODES} values",
                "aliases that repeat aliases multiply; write the values out",
            )
            raise _TooLarge
        if path not in self.source.values:
            self.source.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if id(node) in self.active:
            self._problem(node, path, "recursive alias: a value contains itself")
            return None
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag != "tag:yaml.org,2002:seq":
                    self._problem(node, path, f"unsupported YAML tag {node.tag}")
                return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
        finally:
            self.active.discard(id(node))
        self._problem(node, path, "unsupported YAML node")
        return None

    def _scalar(self, node: yaml.ScalarNode, path: PathKey) -> Any:
        if node.tag == "tag:yaml.org,2002:timestamp":
            return node.value
        if node.tag not in _PLAIN_TAGS:
            self._problem(node, path, f"unsupported YAML tag {node.tag}", "write plain strings, numbers, booleans, lists and mappings")
            return None
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            self._problem(node, path, f"cannot read value {node.value!r}: {exc}")
            return None
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            self._problem(node, path, f"expected a finite number, got {node.value!r}")
            return None
        if node.style is None and isinstance(value, int | float):  # bool is an int
            self.source.plain[path] = node.value
        return value

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[str, Any]:
        if node.tag != "tag:yaml.org,2002:map":
            self._problem(node, path, f"unsupported YAML tag {node.tag}")
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self._problem(key_node, path, "merge keys ('<<') are not supported", "write the keys out; they are few")
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self._problem(key_node, path, "mapping keys must be plain strings")
                continue
            key = str(key_node.value)
            child = (*path, key)
            position = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key in result:
                first = self.source.keys.get(child, (0, 0))
                self._problem(key_node, child, f"duplicate key '{key}' (first at line {first[0]})")
                continue
            self.source.keys[child] = position
            result[key] = self.convert(value_node, child)
        return result
