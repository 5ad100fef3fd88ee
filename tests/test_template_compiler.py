"""The compiled-template speedups (fabricgen/render/jinja_codegen.py) change how templates
compile, not what they print: every outcome (text, or error type and message) must equal plain
Jinja's, and user templates keep Jinja's sandbox checks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from fabricgen.lab.clab import export_files
from fabricgen.lab.topology import lab_topology
from fabricgen.producers import render_files
from fabricgen.render import templating
from fabricgen.render.context import RenderContext
from fabricgen.render.jinja_codegen import DirectAttributeCodeGenerator, DirectAttributeEnvironment
from tests.conftest import ROOT, example_plan


@dataclass
class Port:
    name: str
    flag: bool = True
    names: dict[str, str] = field(default_factory=lambda: {"key": "from-dict"})


class Odd:
    """Attributes Python cannot spell directly, and a property whose AttributeError sends Jinja
    to the item of the same name."""

    _private = "underscore"

    def __init__(self) -> None:
        setattr(self, "class", "keyword")

    @property
    def broken(self) -> str:
        raise AttributeError("broken")

    def __getitem__(self, key: str) -> str:
        return f"item {key}"


CONTEXT: dict[str, Any] = {
    "o": Port("eth1"),
    "off": Port("eth2", flag=False),
    "d": {"key": "value", "items": "shadowed", "name": "dict-name"},
    "mixed": [Port("a"), {"name": "b"}, Port("c"), None],
    "ports": [Port("a"), Port("b", flag=False), Port("c")],
    "odd": Odd(),
    "none": None,
}

CASES = {
    "object attributes": "{{ o.name }} {{ o.flag }}\n",
    "dict keys as attributes": "{{ d.key }} {{ o.names.key }}\n",
    "dict methods before keys": "{{ d.items is callable }} {{ d.keys() | list | length }}\n",
    "missing attribute": "{{ o.nope }}\n",
    "missing key": "{{ d.nope }}\n",
    "undefined variable": "{{ nothing.name }}\n",
    "undefined in a test": "{% if nothing.name %}x{% endif %}\n",
    "attribute of None": "{{ none.name }}\n",
    "bare variable undefined": "{{ nothing }}\n",
    "variable holding undefined": "{% set x = nothing %}{{ x.name }}\n",
    "is defined": "{{ o.nope is defined }} {{ nothing is defined }} {{ o.name is defined }}\n",
    "if elif else": (
        "{% for p in [o, off] %}{% if p.flag and d.key %}A{% elif not p.flag or d.nope %}B{% else %}C{% endif %}{% endfor %}\n"
    ),
    "object then dict at one site": "{% for x in mixed %}{{ x.name if x is not none else '-' }}{{ x.name is defined }},{% endfor %}\n",
    "mixed site": "{% for x in mixed[:3] %}{{ x.name }},{% endfor %}\n",
    "mixed site then None": "{% for x in mixed %}{{ x.name }},{% endfor %}\n",
    "mixed test site": "{% for x in mixed[:3] %}{% if x.name %}{{ loop.index }}{% endif %}{% endfor %}\n",
    "odd names": "{{ odd._private }} {{ odd.class }} {{ odd.broken }}\n",
    "loop filter": "{% for p in ports if p.flag %}{{ p.name }}{% endfor %}\n",
    "loop filter with loop": "{% for p in ports if p.flag %}{{ loop.index }}/{{ loop.length }}{% endfor %}\n",
    "loop filter with else": "{% for p in ports if not p.name %}{{ p.name }}{% else %}none passed{% endfor %}\n",
    "loop filter and set in body": "{% set flag = true %}{% for p in ports if flag %}{% set flag = p.flag %}{{ p.name }}{% endfor %}\n",
    "loop filter on undefined": "{% for p in ports if p.nope %}{{ p.name }}{% endfor %}\n",
    "macro buffer": "{% macro m(x) %}[{{ x.name }}|{{ x.names.key }}]{% endmacro %}{{ m(o) }}{{ m(d) }}\n",
    "set block": "{% set t %}{{ o.name }}-{{ d.key }}{% endset %}{{ t }}\n",
    "namespace": "{% set ns = namespace(n=0) %}{% for p in ports %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}\n",
    "expressions": "{{ o.name ~ '-' ~ d.key }} {{ o.name | upper }} {{ [o.name, d.key] | join(',') }}\n",
    "text that needs quoting": "it's \"q\" \\ {x} %s 100% {{ o.name }} '''\n",
}


def _outcome(env: jinja2.Environment, source: str) -> str:
    try:
        return env.from_string(source).render(CONTEXT)
    except Exception as error:  # the outcome under test: the same error from both compilers
        return f"{type(error).__name__}: {error}"


def _plain_and_fast() -> Iterator[tuple[jinja2.Environment, jinja2.Environment]]:
    options = templating._options()
    yield jinja2.Environment(**options), DirectAttributeEnvironment(**options)  # type: ignore[arg-type]
    yield ImmutableSandboxedEnvironment(**options), templating.SandboxedEnvironment(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize("source", CASES.values(), ids=list(CASES))
def test_fast_compilers_give_plain_jinjas_outcome(source: str) -> None:
    for plain, fast in _plain_and_fast():
        expected = _outcome(plain, source)
        assert _outcome(fast, source) == expected, type(fast).__name__
        template = fast.from_string(source)
        if "Error" not in expected:  # a second render, after any site fell back to Jinja's code
            assert template.render(CONTEXT) == expected


def test_extends_and_includes_render_alike() -> None:
    """Output outside blocks of an extending template is dropped; an included template sees the
    loop variable, under both compilers."""
    templates = {
        "base.j2": "head {% block b %}base {{ o.name }}{% endblock %} tail\n",
        "child.j2": '{% extends "base.j2" %}ignored {{ o.name }}{% block b %}child {{ d.key }}{% endblock %}',
        "item.j2": "{% set here = p.name %}{{ here }}:{{ d.key }};",
        "loop.j2": "{% for p in ports if p.flag %}{% include 'item.j2' %}{% endfor %}\n",
    }
    expected = {"child.j2": "head child value tail\n", "loop.j2": "a:value;c:value;"}
    for plain, fast in _plain_and_fast():
        plain.loader = fast.loader = jinja2.DictLoader(templates)
        for name, text in expected.items():
            assert fast.get_template(name).render(CONTEXT) == plain.get_template(name).render(CONTEXT) == text


def test_user_templates_keep_jinjas_sandbox_checks(tmp_path: Any) -> None:
    """With a user folder, templates compile with Jinja's attribute checks (no direct access),
    so what the immutable sandbox refuses is still refused."""
    env = templating.environment(templating.user_template_dirs(None, (tmp_path,)))
    assert isinstance(env, ImmutableSandboxedEnvironment)
    assert not issubclass(env.code_generator_class, DirectAttributeCodeGenerator)
    for source in ("{{ o.__class__.__mro__ }}", "{{ d.pop('key') }}", "{% if o.names.clear() %}{% endif %}"):
        with pytest.raises(jinja2.exceptions.SecurityError):
            env.from_string(source).render(CONTEXT)
    assert templating.environment() is not env and isinstance(templating.environment(), DirectAttributeEnvironment)


def _built_in_files(example: str) -> dict[str, str]:
    plan = example_plan(example)
    files = render_files(plan, RenderContext())
    if example == "pod-roce-400g":
        files.update(export_files(lab_topology(plan)))  # FRR configs of the containerlab export
    return files


@pytest.mark.parametrize(("example", "prefix"), [("pod-mixed", "configs/"), ("ib-ndr", "opensm/"), ("pod-roce-400g", "frr/")])
def test_built_in_trees_equal_plain_jinjas(example: str, prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """EOS, NX-OS, OpenSM and FRR files of the examples, rendered with the fast environment and
    with plain Jinja from the same loader and options."""
    templating.environment.cache_clear()
    fast = _built_in_files(example)
    monkeypatch.setattr(templating, "DirectAttributeEnvironment", jinja2.Environment)
    templating.environment.cache_clear()
    try:
        assert type(templating.environment()) is jinja2.Environment
        plain = _built_in_files(example)
    finally:
        templating.environment.cache_clear()
    assert fast == plain
    assert any(path.startswith(prefix) for path in fast)


def test_jinja_is_the_one_version_the_code_generators_were_checked_against() -> None:
    """The code generators subclass Jinja's compiler and reuse its internals (`Frame`,
    `optimizeconst`, `visit_Output`'s hooks), which Jinja does not promise to keep between
    releases: pyproject.toml pins one version, and this file checks every outcome against plain
    Jinja on that version. Loosening the pin is a decision to re-run these tests on each
    version allowed (docs/scale.md, "The Jinja code generators")."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pins = re.findall(r'"jinja2\s*([=<>!~]=?)\s*([^",]+)"', pyproject)
    assert pins == [("==", jinja2.__version__)], pins
