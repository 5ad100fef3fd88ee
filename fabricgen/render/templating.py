"""Jinja2 environments for device and subnet-manager templates.

Templates only format plan data. Built-in templates live in `templates/<platform>/`; a user
can override or add files per fabric (`<inventory folder>/templates/<platform>/...`) or per
repository (`--templates DIR` or `$FABRICGEN_TEMPLATES`). As soon as any user template folder is
in the search path, every template runs in Jinja's immutable sandbox, so a template cannot call
methods that change data or reach Python internals.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from fabricgen.render.jinja_codegen import DirectAttributeEnvironment, FlatGlobalsTemplate, MergedOutputCodeGenerator
from fabricgen.render.template_cache import template_cache

BUILTIN_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


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


_WHOLE_LINE_INCLUDE = re.compile(r'^\{% include "([^"]+)" %\}\n', re.MULTILINE)
_SCOPED = re.compile(r"\{%-?\s*(?:set|macro|import|from|extends|block|call|filter|with|include|raw)\b")
"""Tags whose meaning depends on being in a template of their own (names they define, blocks,
nested includes): a template holding one is included, never inlined."""


class InliningLoader(jinja2.FileSystemLoader):
    """A FileSystemLoader that pastes an included template's source in place of a whole-line
    `{% include "name" %}` when that gives the same output (see `_inlinable`).

    A device config is ~15 includes, and each costs Jinja a template lookup and a new context
    per switch: a third of the render time of a config. The included file is still looked up
    through the same search path, so a user's override of one feature file (`<platform>/bgp.j2`) is
    what gets pasted; a template that does not qualify stays an ordinary include."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        return _WHOLE_LINE_INCLUDE.sub(lambda match: self._pasted(environment, match), source), filename, uptodate

    def _pasted(self, environment: jinja2.Environment, match: re.Match[str]) -> str:
        try:
            included = super().get_source(environment, match.group(1))[0]
        except jinja2.TemplateNotFound:
            return match.group(0)  # Jinja reports it at render time, as for any include
        return _inlinable(included) or match.group(0)


def _inlinable(source: str) -> str | None:
    """`source` ready to paste in place of a whole-line include (the include's own line end
    goes with it), or None when pasting could change the output.

    With trim_blocks and keep_trailing_newline, an included template's output is exactly its
    source's output, final line end included; pasted at the start of a line, it lexes the
    same, except that a leading `{#-`/`{%-`/`{{-` would now strip the text before it (at the
    start of a file it strips nothing, so it becomes `{#`), and that tags defining names or
    blocks would leak into the including template.

    >>> _inlinable('{#- a comment -#}\\nhostname {{ device.name }}\\n')
    '{# a comment -#}\\nhostname {{ device.name }}\\n'
    >>> _inlinable('{% set x = 1 %}{{ x }}\\n') is None
    True
    """
    if not source.endswith("\n") or _SCOPED.search(source):
        return None
    for opening in ("{#-", "{%-", "{{-"):
        if source.startswith(opening):
            return opening[:2] + source[3:]
    return source


class SandboxedEnvironment(ImmutableSandboxedEnvironment):
    """The environment once a user template is in the search path: Jinja's immutable sandbox,
    whose attribute checks stay in place; only the output is compiled merged."""

    code_generator_class = MergedOutputCodeGenerator
    template_class = FlatGlobalsTemplate


@cache
def environment(user_dirs: tuple[Path, ...] = ()) -> jinja2.Environment:
    """One cached environment per search path: templates compile once per process."""
    loader = InliningLoader([str(d) for d in (*user_dirs, BUILTIN_TEMPLATES)])
    env_class = SandboxedEnvironment if user_dirs else DirectAttributeEnvironment
    env: jinja2.Environment = env_class(loader=loader, **_options())  # type: ignore[arg-type]
    env.filters["ms_to_s"] = lambda ms: f"{ms / 1000:g}"
    # Compiled code kept between runs for the package's own templates only: a user's folders change, each would leave files behind.
    env.bytecode_cache = None if user_dirs else template_cache(env, _options())
    return env
