"""Jinja2 environments for device and subnet-manager templates.

Templates only format plan data. Built-in templates live in `templates/<platform>/`; a user
can override or add files per fabric (`<inventory folder>/templates/<platform>/...`) or per
repository (`--templates DIR` or `$FABRICGEN_TEMPLATES`). As soon as any user template folder is
in the search path, every template runs in Jinja's immutable sandbox, so a template cannot call
methods that change data or reach Python internals.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

BUILTIN_TEMPLATES = Path(str(resources.files("fabricgen").joinpath("templates")))


def user_template_dirs(inventory_dir: Path | None, extra: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """Override folders, most specific first: per fabric, then --templates, then the env var."""
    dirs: list[Path] = []
    if inventory_dir is not None and (inventory_dir / "templates").is_dir():
        dirs.append(inventory_dir / "templates")
    dirs.extend(extra)
    env_dir = os.environ.get("FABRICGEN_TEMPLATES")
    if env_dir:
        dirs.append(Path(env_dir))
    return tuple(dirs)


def _options() -> dict[str, object]:
    return {
        "undefined": jinja2.StrictUndefined,
        "trim_blocks": True,
        "lstrip_blocks": True,
        "keep_trailing_newline": True,
        "autoescape": False,
        "auto_reload": False,
        "cache_size": -1,  # a plain dict: every {% include %} looks its template up, ~15 per switch
    }


@cache
def environment(user_dirs: tuple[Path, ...] = ()) -> jinja2.Environment:
    """One cached environment per search path: templates compile once per process."""
    loader = jinja2.FileSystemLoader([str(d) for d in (*user_dirs, BUILTIN_TEMPLATES)])
    env_class = ImmutableSandboxedEnvironment if user_dirs else jinja2.Environment
    env: jinja2.Environment = env_class(loader=loader, **_options())  # type: ignore[arg-type]
    env.filters["ms_to_s"] = lambda ms: f"{ms / 1000:g}"
    return env
