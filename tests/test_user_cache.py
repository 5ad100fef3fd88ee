"""The user's cache of fixed work: compiled built-in templates and parsed data files. The
configs and the data are the same with it and without it, a cached entry is not made again, a
changed text is, and a folder that is not private, a damaged file or a folder that cannot be
made means doing the work as before."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import jinja2
import jinja2.compiler
import jinja2.sandbox
import pytest
import yaml

from fabricgen.configs.devices import device_configs
from fabricgen.core import catalog, usercache
from fabricgen.core.model import Plan
from fabricgen.core.usercache import CodeTable, parsed, private_cache_dir
from fabricgen.render.context import RenderContext
from fabricgen.render.template_cache import TemplateCache, template_cache
from fabricgen.render.templating import _options, environment
from tests.conftest import example_plan


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private XDG cache folder, and fresh environments before and after the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FABRICGEN_NO_CACHE", raising=False)
    environment.cache_clear()
    yield tmp_path / "cache"
    environment.cache_clear()


def _configs(plan: Plan) -> dict[str, str]:
    environment.cache_clear()  # a new process, as far as the templates are concerned
    return device_configs(plan, RenderContext())


DATA_FILES = sorted(p.name for p in (Path(catalog.__file__).parent.parent / "data").glob("*.yml"))


def _cached_files(cache_home: Path) -> list[Path]:
    return sorted(cache_home.glob("fabricgen/templates-*/*.code"))


def _refuse_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def compile_refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled although cached")

    monkeypatch.setattr(jinja2.Environment, "compile", compile_refused)


def test_configs_are_the_same_from_the_cache(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = example_plan("pod-mixed")  # EOS and NX-OS switches: two device templates
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    uncached = _configs(plan)
    assert not _cached_files(cache_home)
    monkeypatch.delenv("FABRICGEN_NO_CACHE")
    assert _configs(plan) == uncached  # compiled, then written to the cache
    assert {p.name for p in _cached_files(cache_home)} and len(_cached_files(cache_home)) == 2
    _refuse_compiling(monkeypatch)
    assert _configs(plan) == uncached  # loaded, not compiled


def test_a_changed_text_is_compiled_again(cache_home: Path) -> None:
    env = jinja2.Environment()
    cache = template_cache(env, {})
    assert cache is not None
    first = cache.get_bucket(env, "t.j2", "/x/t.j2", "one {{ a }}")
    first.code = env.compile("one {{ a }}")
    cache.set_bucket(first)
    assert cache.get_bucket(env, "t.j2", "/x/t.j2", "one {{ a }}").code is not None
    assert cache.get_bucket(env, "t.j2", "/x/t.j2", "two {{ a }}").code is None


def test_a_damaged_file_is_compiled_again(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = example_plan("pod-roce-400g")
    expected = _configs(plan)
    (cached,) = _cached_files(cache_home)
    header = cached.read_bytes().split(b"\n", 1)[0] + b"\n"
    cached.write_bytes(header + b"\x00not marshalled code")
    assert _configs(plan) == expected
    cached.write_bytes(header[:-5])
    assert _configs(plan) == expected
    _refuse_compiling(monkeypatch)
    assert _configs(plan) == expected  # the damaged file was replaced


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o755])
def test_a_folder_others_can_reach_is_not_used(cache_home: Path, mode: int) -> None:
    env = jinja2.Environment()
    cache = template_cache(env, {})
    assert isinstance(cache, TemplateCache)
    os.chmod(cache.directory, mode)
    assert template_cache(env, {}) is None


def test_a_folder_of_another_user_is_not_used(cache_home: Path) -> None:
    env = jinja2.Environment()
    cache = template_cache(env, {})
    assert isinstance(cache, TemplateCache)
    if os.getuid() != 0:
        pytest.skip("changing a folder's owner needs root")
    os.chown(cache.directory, 4242, 4242)
    assert template_cache(env, {}) is None


def test_a_link_is_not_used(cache_home: Path, tmp_path: Path) -> None:
    env = jinja2.Environment()
    cache = template_cache(env, {})
    assert isinstance(cache, TemplateCache)
    target = tmp_path / "elsewhere"
    Path(cache.directory).rename(target)
    Path(cache.directory).symlink_to(target)
    assert template_cache(env, {}) is None


def test_no_folder_means_no_cache(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache_home.write_text("a file where the folder would go")
    assert template_cache(jinja2.Environment(), {}) is None
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert template_cache(jinja2.Environment(), {}) is None
    assert _configs(example_plan("pod-roce-400g"))  # renders all the same


def test_environments_that_compile_differently_do_not_share_a_folder(cache_home: Path) -> None:
    options = _options()
    plain = template_cache(jinja2.Environment(**options), options)  # type: ignore[arg-type]
    other = template_cache(jinja2.Environment(), {})
    sandboxed = template_cache(jinja2.sandbox.ImmutableSandboxedEnvironment(**options), options)  # type: ignore[arg-type]
    generated = template_cache(_OwnCodeEnvironment(**options), options)  # type: ignore[arg-type]
    assert plain and other and sandboxed and generated
    assert len({plain.directory, other.directory, sandboxed.directory, generated.directory}) == 4


class _OwnCodeGenerator(jinja2.compiler.CodeGenerator):
    """A code generator outside Jinja: the source of this module keys the cache."""


class _OwnCodeEnvironment(jinja2.Environment):
    code_generator_class = _OwnCodeGenerator


def test_the_source_of_a_code_generator_keys_the_cache(cache_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = _OwnCodeEnvironment()
    before = template_cache(env, {})
    edited = tmp_path / "edited_generator.py"
    edited.write_text(Path(__file__).read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "__file__", str(edited))
    after = template_cache(env, {})
    assert before and after and before.directory != after.directory


def test_user_templates_are_not_cached(cache_home: Path, tmp_path: Path) -> None:
    (tmp_path / "eos").mkdir()
    assert environment((tmp_path,)).bytecode_cache is None
    assert environment().bytecode_cache is not None


@pytest.mark.parametrize("name", DATA_FILES)
def test_data_files_are_the_same_from_the_cache(name: str, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (Path(catalog.__file__).parent.parent / "data" / name).read_text(encoding="utf-8")
    expected = yaml.safe_load(text)
    first = catalog._read_data.__wrapped__(name)  # parsed, then cached
    assert (cache_home / "fabricgen" / "data" / f"{name}.marshal").is_file()

    def parse_refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr(yaml, "load", parse_refused)
    again = catalog._read_data.__wrapped__(name)
    assert first == again == expected
    assert repr(first) == repr(again) == repr(expected)  # the same key types and order too


def test_a_changed_or_damaged_data_file_is_parsed_again(cache_home: Path) -> None:
    calls: list[str] = []

    def parse(text: str) -> dict[str, str]:
        calls.append(text)
        return {"text": text}

    assert parsed("t.yml", "one", parse, "1") == {"text": "one"}
    assert parsed("t.yml", "one", parse, "1") == {"text": "one"} and calls == ["one"]
    assert parsed("t.yml", "two", parse, "1") == {"text": "two"} and calls == ["one", "two"]
    assert parsed("t.yml", "two", parse, "2") == {"text": "two"} and len(calls) == 3  # another parser
    cached = cache_home / "fabricgen" / "data" / "t.yml.marshal"
    cached.write_bytes(cached.read_bytes()[:-3])
    assert parsed("t.yml", "two", parse, "2") == {"text": "two"} and len(calls) == 4


def test_no_cache_when_turned_off(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    assert private_cache_dir("data") is None
    assert template_cache(jinja2.Environment(), {}) is None
    assert parsed("t.yml", "x", lambda text: [text], "1") == ["x"]
    assert not (cache_home / "fabricgen" / "data").exists()


RECORD_INIT = "def __init__(self, left, right=_d):\n    _set_left(self, left)\n    _set_right(self, right)\n"


def _init_of(table: CodeTable, source: str) -> object:
    names: dict[str, object] = {
        "_d": 7,
        "_set_left": lambda obj, value: setattr(obj, "left", value),
        "_set_right": lambda obj, value: setattr(obj, "right", value),
    }
    exec(table.compiled(source, "<record Pair>"), names)
    return names["__init__"]


def test_record_inits_are_read_back_not_compiled(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `@record` keeps: an `__init__` compiled once is read back by the next process (a new
    table) and does the same; another source is compiled afresh, never served an old entry."""
    first = CodeTable("test-inits")
    made = _init_of(first, RECORD_INIT)
    first.save()
    assert list(cache_home.glob("fabricgen/code/test-inits.marshal"))

    def compile_refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled although cached")

    monkeypatch.setattr(usercache, "compile", compile_refused, raising=False)
    again = _init_of(CodeTable("test-inits"), RECORD_INIT)
    assert again.__code__ == made.__code__  # type: ignore[attr-defined]
    box = type("Box", (), {})()
    again(box, 1)  # type: ignore[operator]
    assert (box.left, box.right) == (1, 7)  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match="compiled although cached"):
        _init_of(CodeTable("test-inits"), RECORD_INIT.replace("right=_d", "right=None"))


def test_a_damaged_or_switched_off_code_table_only_compiles(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (cache_home / "fabricgen" / "code").mkdir(parents=True, mode=0o700)
    (cache_home / "fabricgen" / "code" / "test-inits.marshal").write_bytes(sys.version.encode() + b"\0garbage")
    box = type("Box", (), {})()
    _init_of(CodeTable("test-inits"), RECORD_INIT)(box, 2)  # type: ignore[operator]
    assert box.left == 2  # type: ignore[attr-defined]
    monkeypatch.setenv("FABRICGEN_NO_CACHE", "1")
    (cache_home / "fabricgen" / "code" / "off.marshal").unlink(missing_ok=True)
    table = CodeTable("off")
    _init_of(table, RECORD_INIT)
    table.save()
    assert not (cache_home / "fabricgen" / "code" / "off.marshal").exists()
