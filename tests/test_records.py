"""`@record` behaves as `@dataclass(frozen=True, slots=True)`: the same class body under both
decorators gives the same repr, equality, hash, fields, replace, asdict, pickling, copying,
frozen errors and constructor errors; and every record class of the plan keeps its dataclass
fields and constructor signature."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import pickle
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import fabricgen
from fabricgen.core import model
from fabricgen.core.model import Endpoint, Link
from fabricgen.core.records import builder, record, replace


def _body(decorate: Any, prefix: str) -> tuple[type, type, type, type]:
    @decorate
    class Item:
        """An item."""

        a: int
        b: str = "x"
        c: dict[str, int] = field(default_factory=dict)
        d: tuple[int, ...] = ()
        e: float = field(default=0.0, compare=False)
        f: int = field(default=1, repr=False)
        g: int = field(default=2, hash=False)

    @decorate
    class Holder:
        item: Item

    @decorate
    class Empty:
        pass

    @decorate
    class Single:
        z: float

    classes = (Item, Holder, Empty, Single)
    for cls in classes:  # module-level names, so pickle finds them
        cls.__qualname__ = cls.__name__ = prefix + cls.__name__
        setattr(sys.modules[__name__], cls.__name__, cls)
    return classes


RECORD = _body(record, "R")
DATACLASS = _body(dataclass(frozen=True, slots=True), "D")


def _outcome(action: Any) -> str:
    try:
        return repr(action())
    except Exception as exc:  # the error is part of the behaviour compared
        return f"{type(exc).__name__}: {exc}"


def _behaviour(classes: tuple[type, ...]) -> list[str]:
    item, holder, empty, single = classes
    a = item(1, c={"k": 2}, e=1.5)
    b = item(2, d=(1, 2))
    nan = single(math.nan)
    actions = [
        lambda: a,
        lambda: holder(b),
        lambda: empty(),
        lambda: hash(b),
        lambda: hash(holder(b)),
        lambda: hash(empty()),
        lambda: hash(a),  # a dict field: unhashable, as with @dataclass
        lambda: a == item(1, c={"k": 2}, e=9.0),  # e is not compared
        lambda: a == item(2),
        lambda: a != item(1, c={"k": 2}),
        lambda: a == "a",
        lambda: (nan == nan, nan == single(math.nan), hash(nan) == hash((nan.z,))),
        lambda: item.__match_args__,
        lambda: [f.name for f in dataclasses.fields(a)],
        lambda: dataclasses.replace(a, b="y"),
        lambda: dataclasses.asdict(holder(a)),
        lambda: pickle.loads(pickle.dumps(holder(b))) == holder(b),
        lambda: (copy.deepcopy(a) == a, copy.copy(a) == a),
        lambda: (item.__slots__, hasattr(a, "__dict__"), dataclasses.is_dataclass(item)),
        lambda: item.__dataclass_params__,
        lambda: item(1).c is not item(1).c,
        lambda: setattr(a, "a", 2),
        lambda: delattr(a, "b"),
        lambda: item(),
        lambda: item(1, "b", {}, (), 0.0, 1, 2, 3),
        lambda: item(1, q=2),
        lambda: str(inspect.signature(item)),
    ]
    return [re.sub(r"\b[RD](Item|Holder|Empty|Single)\b", r"\1", _outcome(action)) for action in actions]


def test_record_behaves_as_a_frozen_slotted_dataclass() -> None:
    got, expected = _behaviour(RECORD), _behaviour(DATACLASS)
    differences = [(index, mine, theirs) for index, (mine, theirs) in enumerate(zip(got, expected, strict=True)) if mine != theirs]
    assert not differences, differences


def test_record_refuses_what_it_does_not_support() -> None:
    with pytest.raises(TypeError, match="generates __eq__"):

        @record
        class OwnEquality:
            a: int

            def __eq__(self, other: object) -> bool:
                return True

    with pytest.raises(TypeError, match="kw_only"):

        @record
        class KeywordOnly:
            a: int = field(kw_only=True)

    with pytest.raises(TypeError, match="inherit"):

        @record
        class Child(RECORD[0]):  # type: ignore[misc,valid-type]
            extra: int = 0


RECORD_CLASSES = sorted(
    (cls for cls in vars(model).values() if isinstance(cls, type) and cls.__module__ == model.__name__ and dataclasses.is_dataclass(cls)),
    key=lambda cls: cls.__name__,
)


@pytest.mark.parametrize("cls", RECORD_CLASSES, ids=lambda cls: cls.__name__)
def test_every_plan_class_is_a_frozen_dataclass(cls: type) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and params.eq and params.init and params.repr
    names = [f.name for f in dataclasses.fields(cls)]
    assert list(inspect.signature(cls).parameters) == names
    assert cls.__slots__ == tuple(names)  # type: ignore[attr-defined]


def test_a_builder_takes_named_fields_in_its_own_order_and_refuses_unknown_or_missing_ones() -> None:
    make = builder(Link, "kind", "a", "z", "speed", "length_m", "mtu", "subnet", "a_address", "z_address")
    a, z = Endpoint("l1", "e1", 1), Endpoint("s1", "e9", 9)
    link = make("leaf-spine", a, z, 400, 3.0, 9214, "10.0.0.0/31", "10.0.0.1", "10.0.0.0")
    assert link == Link(
        kind="leaf-spine", a=a, z=z, speed=400, subnet="10.0.0.0/31", a_address="10.0.0.1", z_address="10.0.0.0", length_m=3.0, mtu=9214
    )
    assert link.media is None and replace(link, mtu=1500) == Link(
        **{**{f: getattr(link, f) for f in Link.__dataclass_fields__}, "mtu": 1500}
    )
    with pytest.raises(TypeError, match="unknown \\['colour'\\]"):
        builder(Endpoint, "device", "interface", "port", "colour")
    with pytest.raises(TypeError, match="no default for \\['port'\\]"):
        builder(Endpoint, "device", "interface")


def test_no_wiring_pass_builds_a_record_from_a_positional_twin() -> None:
    # LinkDraft (a named tuple mirroring Link), `tuple.__new__` drafts and `Interface(*row)` over
    # rows in the model's field order: a field added to the model silently shifted them.
    passes = Path(fabricgen.__file__).parent / "plan" / "passes"
    twin = re.compile(r"tuple\.__new__|NamedTuple|\b(Interface|BgpNeighbor|Link|ServerNic|Endpoint)\(\*")
    found = [f"{path.name}: {m.group(0)}" for path in sorted(passes.glob("*.py")) for m in twin.finditer(path.read_text())]
    assert found == []
