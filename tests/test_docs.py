"""Every key of the schema is documented (docs/*.md), so the schema and the docs cannot drift."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import ROOT


def key_paths(node: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        paths.append(path)
        paths.extend(key_paths(sub, path))
        items = sub.get("items")
        if isinstance(items, dict):
            paths.extend(key_paths(items, f"{path}[]"))
        extra = sub.get("additionalProperties")
        if isinstance(extra, dict):
            paths.extend(key_paths(extra, f"{path}.<name>"))
    return paths


def test_every_schema_key_is_documented() -> None:
    schema = json.loads((ROOT / "schemas" / "fabric.schema.json").read_text(encoding="utf-8"))
    docs = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))
    paths = key_paths(schema)
    documented = {path for path in paths if f"`{path}`" in docs}
    # A container (`roce.ecn`) counts as documented through its documented children.
    missing = [
        path
        for path in paths
        if path not in documented and not any(d.startswith(f"{path}.") or d.startswith(f"{path}[]") for d in documented)
    ]
    assert missing == []


def test_packaged_schema_is_the_published_one() -> None:
    from fabricgen.schema import fabric_schema

    assert fabric_schema() == json.loads((ROOT / "schemas" / "fabric.schema.json").read_text(encoding="utf-8"))
