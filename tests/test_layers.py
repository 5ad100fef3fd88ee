"""The package's folders are its layers, and imports only go down.

The types every layer reads (`core/`, and the platform registry `platforms/`) and load/validate (`inventory/`) sit at the bottom, then
`plan/`, then `checks/`, then `pipeline.py` (load -> validate -> plan -> check, the start of
every command), then the render engine (`render/`: templating, serialisers, the writer), the
producers (`configs/`, `artifacts/`), `infiniband/` (which reads an artifact), the tools that
read a plan (`lab/`, `push/`, `analyze/`, `diffing/`), `producers.py` (the list of every
producer) and on top the commands (`cli.py`, `commands/` and every package's `cli.py`). A
module that imports upwards, or modules that import each other in a circle, fail here with the
offending line. Imports inside functions and under `TYPE_CHECKING` count too: a deferred import
still ties the layers together.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import fabricgen

PACKAGE = Path(fabricgen.__file__).parent
LAYERS: tuple[tuple[str, ...], ...] = (
    ("fabricgen", "fabricgen.core", "fabricgen.platforms"),
    ("fabricgen.inventory",),
    ("fabricgen.plan",),
    ("fabricgen.checks",),
    ("fabricgen.pipeline",),
    ("fabricgen.render",),
    ("fabricgen.artifacts", "fabricgen.configs"),
    ("fabricgen.infiniband",),
    ("fabricgen.lab", "fabricgen.push", "fabricgen.analyze", "fabricgen.diffing"),
    ("fabricgen.producers",),
    ("fabricgen.commands", "fabricgen.cli", "fabricgen.__main__"),
)
COMMANDS = len(LAYERS) - 1


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """The layer of the longest matching prefix; a package's `cli` module is a command.

    >>> layer_of("fabricgen.plan.passes.expand"), layer_of("fabricgen.lab.cli"), layer_of("fabricgen")
    (2, 10, 0)
    """
    if module.rsplit(".", 1)[-1] == "cli":
        return COMMANDS
    best, found = -1, 0
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    return found


def _is_module(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").exists()


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every fabricgen import in the file, wherever it stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "fabricgen":
            if node.module == "fabricgen":
                yield from ((node.lineno, f"fabricgen.{a.name}" if _is_module(a.name) else "fabricgen") for a in node.names)
            else:
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "fabricgen")


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_import_goes_down_or_sideways() -> None:
    upward = []
    for path in sources():
        module = module_name(path)
        for line, target in imports(path):
            if layer_of(target) > layer_of(module):
                where = f"{path.relative_to(PACKAGE.parent)}:{line}"
                upward.append(f"{where}: {module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})")
    assert not upward, "\n".join(upward)


def _graph() -> dict[str, set[str]]:
    """Module -> the fabricgen modules it imports (a `from package import name` counts as the package)."""
    raw = {module_name(path): {target for _, target in imports(path)} for path in sources()}
    return {module: {t if t in raw else t.rpartition(".")[0] for t in targets} - {module} for module, targets in raw.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every circle met by a depth-first walk, as `a -> b -> a`.

    >>> find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    ['a -> b -> c -> a']
    >>> find_cycles({"a": {"b"}, "b": set()})
    []
    """
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[str] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*trail[trail.index(target) :], target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_import_cycles() -> None:
    cycles = find_cycles(_graph())
    assert not cycles, "\n".join(cycles)


def test_an_upward_import_is_seen(tmp_path: Path) -> None:
    """The layer check can fail: a plan pass that imports a producer, or the render engine that
    imports an artifact, is reported with its line."""
    source = tmp_path / "bad.py"
    source.write_text(
        "import os\n\nfrom fabricgen.configs.devices import device_configs\nimport fabricgen.artifacts.bom\n", encoding="utf-8"
    )
    found = [(line, target, layer_of(target) > layer_of("fabricgen.render.stream")) for line, target in imports(source)]
    assert found == [(3, "fabricgen.configs.devices", True), (4, "fabricgen.artifacts.bom", True)]


def test_the_layer_table_names_every_package() -> None:
    named = {prefix for prefixes in LAYERS for prefix in prefixes}
    packages = {module_name(p) for p in PACKAGE.glob("*/__init__.py")} | {module_name(p) for p in PACKAGE.glob("*.py")}
    assert packages <= named, f"top-level modules and packages without a layer: {sorted(packages - named)}"
