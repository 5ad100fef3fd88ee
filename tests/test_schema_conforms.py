"""`conforms` (the quick schema check that spares a valid inventory the jsonschema import) may
only say yes where jsonschema finds nothing; whenever it says no, jsonschema words the
diagnostics. So `validate` accepts and refuses exactly what it did with jsonschema alone.

Compared here against jsonschema itself (the validator `validate_document` falls back to):
every example and benchmark inventory (the quick path must accept them, or it is useless),
every file of the bad-input corpus, mutants of the examples with hostile values, and random
JSON-like values against every sub-schema of the inventory schema.
"""

from __future__ import annotations

import copy
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.core.diagnostics import FabricError
from fabricgen.inventory.conforms import conforms
from fabricgen.inventory.loader import load_inventory
from fabricgen.inventory.schema import _validator, fabric_schema, normalise_units
from tests.conftest import EXAMPLES, ROOT
from tests.test_validation_fuzz import HOSTILE, key_paths

BROKEN = sorted((ROOT / "tests" / "data" / "broken").glob("*.yml"))
MUTANTS_PER_EXAMPLE = 400


def jsonschema_valid(data: Any, schema: dict[str, Any] | None = None) -> bool:
    """The verdict of the jsonschema validator itself (fabricgen's integer and ipv4 format)."""
    validator = _validator() if schema is None else _validator().evolve(schema=schema)
    return bool(validator.is_valid(data))


def _normalised(path: Path) -> Any:
    document = load_inventory(path, str(path))
    return normalise_units(document.data, document.source)[0]


def _benchmark_inventories() -> list[str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench import inventory  # type: ignore[import-not-found]

    return [inventory(size) for size in ("2t-96", "3t-8")]


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir() if (p / "fabric.yml").exists()))
def test_every_example_takes_the_quick_path(example: str) -> None:
    data = _normalised(EXAMPLES / example)
    assert jsonschema_valid(data)
    assert conforms(fabric_schema(), data), "the quick check no longer accepts a valid example: a new schema keyword?"


def test_the_benchmark_fabrics_take_the_quick_path() -> None:
    for text in _benchmark_inventories():
        data = yaml.safe_load(text)
        assert jsonschema_valid(data) and conforms(fabric_schema(), data)


def _readable(paths: list[Path]) -> list[Path]:
    """The corpus files that reach the schema (the others are refused by the loader)."""
    readable = []
    for path in paths:
        try:
            _normalised(path)
        except FabricError:
            continue
        readable.append(path)
    return readable


READABLE = _readable(BROKEN)


def test_most_of_the_corpus_reaches_the_schema() -> None:
    assert len(READABLE) >= 60, len(READABLE)


@pytest.mark.parametrize("path", READABLE, ids=[p.stem for p in READABLE])
def test_the_bad_input_corpus_gets_the_same_verdict(path: Path) -> None:
    data = _normalised(path)
    assert conforms(fabric_schema(), data) == jsonschema_valid(data)


def _mutant(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One to three edits: a value replaced by a hostile one, a key deleted or added, an entry repeated."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice([p for p in key_paths(doc) if p])
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        last, action = path[-1], rng.random()
        if action < 0.15 and isinstance(parent, dict):
            del parent[last]
        elif action < 0.25 and isinstance(parent, dict):
            parent[rng.choice(["extra", "per_spine", "count", "name", "speed"])] = copy.deepcopy(rng.choice(HOSTILE))
        elif action < 0.35 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        else:
            parent[last] = copy.deepcopy(rng.choice(HOSTILE))
    return doc


@pytest.mark.parametrize("example", ["pod-roce-400g", "pod-mixed", "pod-rail", "ib-hdr", "cluster-3tier"])
def test_mutants_get_the_same_verdict(example: str) -> None:
    """Each mutant: conforms implies jsonschema-valid (the soundness the fallback relies on);
    and on these plain YAML values the two agree, so valid mutants skip jsonschema too."""
    doc = _normalised(EXAMPLES / example)
    rng = random.Random(example)
    verdicts = {True: 0, False: 0}
    for _ in range(MUTANTS_PER_EXAMPLE):
        mutant = _mutant(doc, rng)
        valid = jsonschema_valid(mutant)
        assert conforms(fabric_schema(), mutant) == valid, mutant
        verdicts[valid] += 1
    assert verdicts[True] >= 20 and verdicts[False] >= 100, verdicts  # both outcomes, many times


def _subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for key, value in schema.items():
            if key in ("properties",):
                for sub in value.values():
                    yield from _subschemas(sub)
            elif key in ("items", "additionalProperties", "propertyNames", "if", "else", "then"):
                yield from _subschemas(value)


SUBSCHEMAS = list(_subschemas(fabric_schema()))
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.sampled_from([0, 1, 2, 1.0, 4.0, -0.0, 65535, 4294967295, "400G", "10.0.0.1", "10.0.0.0/24", "30m", "roce", "eos", "0x0"])
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["name", "count", "model", "x", "index"]), inner, max_size=4)
    ),
    max_leaves=8,
)
RANDOM_CASES: dict[bool, int] = {True: 0, False: 0}


def _shaped(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values close to what `schema` accepts: its enum, default, bounds and a close miss of
    each, and mappings of its own keys, so that many random cases are valid."""
    if not isinstance(schema, dict) or depth > 3:
        return JSON_SCALARS
    options: list[st.SearchStrategy[Any]] = []
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    if "default" in schema:
        options.append(st.just(schema["default"]))
    bounds = [schema[k] for k in ("minimum", "maximum", "exclusiveMinimum") if k in schema]
    options.extend(st.sampled_from([b - 1, b, b + 1]) for b in bounds)
    if "properties" in schema:
        names = sorted(schema["properties"])
        options.append(
            st.lists(st.sampled_from(names), unique=True, max_size=4).flatmap(
                lambda keys: st.fixed_dictionaries({k: _shaped(schema["properties"][k], depth + 1) for k in keys})
            )
        )
    if isinstance(schema.get("items"), dict):
        options.append(st.lists(_shaped(schema["items"], depth + 1), max_size=3))
    return st.one_of(*options, JSON_VALUES) if options else JSON_VALUES


@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_random_values_against_every_subschema(data: st.DataObject) -> None:
    """Soundness on values no inventory would hold: whenever conforms says yes, so does jsonschema."""
    schema = data.draw(st.sampled_from(SUBSCHEMAS))
    value = data.draw(_shaped(schema))
    quick = conforms(schema, value)
    if quick:
        assert jsonschema_valid(value, schema), (schema, value)
    RANDOM_CASES[quick] += 1


def test_random_values_reach_both_verdicts() -> None:
    if sum(RANDOM_CASES.values()) < 1000:
        pytest.skip("run with the whole module")
    assert RANDOM_CASES[True] >= 150 and RANDOM_CASES[False] >= 150, RANDOM_CASES
