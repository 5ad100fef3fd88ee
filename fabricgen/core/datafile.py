"""A packaged YAML data file, parsed the same way wherever it is read (catalog, platforms).

libyaml's safe loader when PyYAML was built with it: the same documents, parsed about ten times
faster than the pure-Python loader; and the parsed data is kept between runs in the user's cache
(`usercache.parsed`), so a command's fixed cost does not grow with the data files it reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fabricgen.core.usercache import parsed

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SAFE_LOADER)


def read_yaml(path: Path, cache_name: str) -> Any:
    """`path` parsed with the safe loader; `cache_name` names its entry in the user's cache
    (unique per file: two files under one name would only evict each other)."""
    text = path.read_text(encoding="utf-8")
    return parsed(cache_name, text, _parse_yaml, f"PyYAML {yaml.__version__} {_SAFE_LOADER.__name__}")
