"""The published schema file (`schemas/fabric.schema.json`) and the form the checks read.

The file is written for people and editors: definitions the tiers share live once under
`$defs` (the platform enum, a tier's count, model and name pattern, a pinned node), and the
platform enum is generated from the platform registry, so a new platform folder is a valid
`platform:` value without an edit here. `python -m fabricgen.inventory.schemafile` rewrites
the file after a platform is added; tests/test_platforms.py fails while it is stale.

The checks (`schema.py`, `conforms.py`) walk the schema key by key, so they read it with every
local `$ref` replaced by what it points at (`inlined`): the same constraints, without teaching
every walker JSON pointers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabricgen import platforms as registry
from fabricgen.core.catalog import DATA

SCHEMA_FILE = DATA / "fabric.schema.json"
"""The packaged copy (a link to schemas/fabric.schema.json in a checkout)."""


def published(document: Mapping[str, Any]) -> dict[str, Any]:
    """`document` with its platform enum (`$defs.platform`) from the registry."""
    result: dict[str, Any] = json.loads(json.dumps(document))
    result["$defs"]["platform"]["enum"] = registry.inventory_platforms()
    return result


def schema_text(document: Mapping[str, Any]) -> str:
    """The file's text: two-space JSON, UTF-8 as it is, one final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _pointed(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise ValueError(f"{SCHEMA_FILE.name}: only local references are read, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def inlined(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` without `$defs`, each `{"$ref": ..., more}` replaced by the schema it points at
    with `more` (annotations: a description, a default) laid over it.

    >>> inlined({"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n", "default": 1}}})
    {'properties': {'a': {'type': 'integer', 'default': 1}}}
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, Mapping):
            return node
        if "$ref" in node:
            target = walk(_pointed(schema, str(node["$ref"])))
            return {**target, **{key: walk(value) for key, value in node.items() if key != "$ref"}}
        return {key: walk(value) for key, value in node.items() if key != "$defs"}

    result: dict[str, Any] = walk(schema)
    return result


def read_published() -> dict[str, Any]:
    """The file as it is on disk."""
    document: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return document


def checked_schema() -> dict[str, Any]:
    """What the checks validate against: the file, its enum from the registry, inlined."""
    return inlined(published(read_published()))


def write(path: Path = SCHEMA_FILE) -> bool:
    """Rewrite the published file from the registry; True when it changed."""
    text = schema_text(published(read_published()))
    if path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


if __name__ == "__main__":
    print(f"{SCHEMA_FILE.resolve()}: {'rewritten' if write() else 'up to date'}")
