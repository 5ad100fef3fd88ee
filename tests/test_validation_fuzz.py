"""No inventory may reach the internal-error path: mutated examples through `validate` exit 0
(valid, perhaps with warnings) or 2 (located errors), never 70 and never with a traceback; and
a mutant that validates also renders.

Mutations are drawn from a seeded generator, so a failure reproduces: each replaces one value
of an example (a leaf, a list or a mapping) with a hostile or out-of-range one, deletes a key,
or repeats a list entry.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fabricgen.cli import main
from tests.conftest import EXAMPLES

HOSTILE: list[Any] = [
    "",
    " ",
    "10.1.300.0/22",
    "10.0.0.0/33",
    "010.0.0.0/8",
    "10.1.0.1/22",
    "0.0.0.0/0",
    "255.255.255.255/32",
    "1.2.3.4",
    "999.1.1.1",
    "leaf;rm -rf {index}",
    "{index.__class__}",
    "{fabric[0]}{index}",
    "{index!r}",
    "{index:>999}",
    "{index",
    "}{index}",
    "{}{index}",
    "a\nb",
    "\u202e{index}",
    "x" * 300,
    "-{index}",
    "0m",
    "0.00m",
    "99999m",
    "0G",
    "400G",
    "0B",
    "1MB",
    "0x0000000000000000",
    "0xffffffffffffffff",
    -1,
    0,
    1,
    2,
    4294967295,
    2**64,
    1.5,
    -0.0,
    True,
    None,
    [],
    {},
    [None],
    {"index": 1},
    {"x": 1},
]
SMALL_EXAMPLES = ["pod-roce-400g", "pod-mixed", "pod-rail", "ib-hdr"]
MUTATIONS_PER_EXAMPLE = 75
RENDER_EVERY = 3
"""Every third mutant that validates is also rendered: `validate` must refuse whatever `render` would."""


def key_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path in a parsed document, the root `()` first (the mutation tests pick from them)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from key_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from key_paths(item, (*path, index))


def _mutate(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    places = [p for p in key_paths(doc) if p]
    scalars = [p for p in places if not isinstance(_get(doc, p), (dict, list))]
    path = rng.choice(scalars if rng.random() < 0.8 else places)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    action = rng.random()
    if action < 0.1 and isinstance(parent, dict):
        del parent[last]
    elif action < 0.2 and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    elif action < 0.6 and isinstance(parent[last], (str, int)):
        parent[last] = _nudge(parent[last], rng)
    else:
        parent[last] = copy.deepcopy(rng.choice(HOSTILE))
    return doc


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


EDITS = "0123456789./-:{}G m\n"


def _nudge(value: str | int, rng: random.Random) -> str | int:
    """A near miss of a real value: one character changed, added or removed; a number moved."""
    if isinstance(value, bool) or not isinstance(value, str):
        return rng.choice([value + 1, value - 1, value * 2, -value, 0])
    text = value
    where = rng.randrange(len(text) + 1)
    edit = rng.randrange(3)
    if edit == 0:
        return text[:where] + rng.choice(EDITS) + text[where:]
    if edit == 1 and text:
        return text[: min(where, len(text) - 1)] + rng.choice(EDITS) + text[min(where, len(text) - 1) + 1 :]
    return text[:where] + text[where + 1 :]


def _cases() -> list[tuple[str, int]]:
    return [(name, seed) for name in SMALL_EXAMPLES for seed in range(MUTATIONS_PER_EXAMPLE)]


OUTCOMES: dict[int, int] = {}


@pytest.mark.parametrize(("example", "seed"), _cases())
def test_mutated_inventory_exits_0_or_2(example: str, seed: int, tmp_path: Path) -> None:
    doc = yaml.safe_load((EXAMPLES / example / "fabric.yml").read_text(encoding="utf-8"))
    mutated = _mutate(doc, random.Random(f"{example}-{seed}"))
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code in (0, 2), result.output
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    OUTCOMES[result.exit_code] = OUTCOMES.get(result.exit_code, 0) + 1
    if result.exit_code == 0 and seed % RENDER_EVERY == 0:  # what validate accepts, render writes
        rendered = CliRunner().invoke(main, ["render", str(path), "-o", str(tmp_path / "out"), "-q"])
        assert rendered.exit_code == 0, rendered.output


def test_the_mutations_produce_both_outcomes() -> None:
    """The fuzzing means something only if some mutants stay valid and many are refused."""
    if sum(OUTCOMES.values()) < len(_cases()):
        pytest.skip("run with the whole module")
    assert OUTCOMES.get(0, 0) >= 10 and OUTCOMES.get(2, 0) >= 50, OUTCOMES
