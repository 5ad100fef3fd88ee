"""`@record`: a frozen, slotted dataclass, cheaper to define and to build than
`@dataclass(frozen=True, slots=True)`; the one mechanism for the plan's and the inputs' types.

WHY: start-up and planning are dominated by these classes. Python 3.11's dataclass decorator
`exec`s six generated functions per frozen class, and a frozen instance stores each field
through a setter call; a plan at 5,000 switches builds over a million interfaces, neighbors,
links and NICs. `record` lets `dataclasses` do the field bookkeeping (so `fields`, `replace`,
`asdict` and `is_dataclass` work as before) and generates nothing: it compiles one
constructor (or reads it from the user's cache, `usercache.CodeTable`) and gives the other
methods as small closures that do exactly what the generated ones do. The constructor builds
an instance as an unfrozen twin class with the same slots (plain attribute stores), then gives
it its class, a documented and checked operation between identical slot layouts; a class with
a default factory, `init=False` field, `__post_init__` or a base class gets an `__init__` that
stores through the slot descriptors instead. Figures: docs/scale.md ("One frozen-record
mechanism").

Type checkers treat a `record` class as a frozen dataclass (PEP 681 `dataclass_transform`).
What it does not support it refuses at import time: `InitVar`, `kw_only`, base classes with
fields, and a class body that defines one of the methods it generates.

>>> @record
... class Pair:
...     left: int
...     right: str = "r"
>>> Pair(1), Pair(left=2, right="x") == Pair(2, "x"), hash(Pair(1)) == hash((1, "r"))
(Pair(left=1, right='r'), True, True)
>>> import copy, dataclasses
>>> copy.deepcopy(Pair(3)) == Pair(3), type(copy.copy(Pair(3))) is Pair, dataclasses.replace(Pair(3), right="y")
(True, True, Pair(left=3, right='y'))
>>> replace(Pair(3), right="y"), replace(Pair(3), left=4).right
(Pair(left=3, right='y'), 'r')
>>> Pair(1).left = 3
Traceback (most recent call last):
dataclasses.FrozenInstanceError: cannot assign to field 'left'
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, field
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

from fabricgen.core.usercache import CodeTable

_Cls = TypeVar("_Cls", bound=type)
_Obj = TypeVar("_Obj")

_INITS = CodeTable("record-inits")
"""Every `__init__` compiled before, by its source: compiling them was about 0.015 CPU-s of
every command's start-up (some eighty classes), reading them back a fraction of a millisecond."""


class _Factory:
    """The default of a field with a default factory in `__init__`'s signature (as dataclasses'
    own sentinel, it shows as `<factory>`)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()

_GENERATED = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: _Cls) -> _Cls:
    """Make `cls` a frozen, slotted dataclass (see the module's docstring)."""
    own = [name for name in _GENERATED if name in cls.__dict__ and not (name == "__hash__" and cls.__dict__[name] is None)]
    if own:
        raise TypeError(f"{cls.__name__}: @record generates {', '.join(own)}; use @dataclass for a class that defines it")
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__name__}: @record does not inherit fields")
    documented = bool(cls.__doc__)
    if not documented:
        cls.__doc__ = cls.__name__  # set below; @dataclass would call inspect.signature for it
    made: Any = dataclasses.dataclass(init=False, repr=False, eq=False, slots=True)(cls)
    specs = dataclasses.fields(made)
    pseudo = [spec for spec in made.__dataclass_fields__.values() if "InitVar" in str(spec.type)]
    if pseudo or any(spec.kw_only is True for spec in specs):
        raise TypeError(f"{cls.__name__}: @record supports no InitVar and no kw_only fields")
    new = _twin_new(made, specs)
    if new is None:
        made.__init__ = _init(made, specs)
    else:
        setattr(made, "__new__", new)  # noqa: B010 - mypy refuses a direct assignment to __new__
        names = tuple(spec.name for spec in specs)
        made.__reduce__ = lambda self: (made, tuple(getattr(self, name) for name in names))
        made.__replace__ = _replace_method(made, names, new)
    compared = tuple(spec.name for spec in specs if spec.compare)
    made.__eq__, made.__hash__ = _eq_and_hash(compared, tuple(spec.name for spec in specs if _hashed(spec)))
    made.__repr__ = _repr(tuple(spec.name for spec in specs if spec.repr))
    made.__setattr__, made.__delattr__ = _frozen(made, frozenset(spec.name for spec in specs))
    made.__getstate__, made.__setstate__ = _state(tuple(spec.name for spec in specs))
    params = made.__dataclass_params__  # say what the class is: frozen, with __init__, __repr__ and __eq__
    params.init = params.repr = params.eq = params.frozen = True
    if not documented:
        made.__doc__ = f"{made.__name__}({', '.join(spec.name for spec in specs)})"
    result: _Cls = made
    return result


def _twin_new(cls: type, specs: tuple[Field[Any], ...]) -> Callable[..., Any] | None:
    """`__new__(cls, <fields in order, with their defaults>)` that stores the fields on an
    unfrozen twin of `cls` and then gives the instance its class; None when `cls` needs the
    general `__init__` (a default factory, an `init=False` field, `__post_init__`, a base)."""
    plain = all(spec.default_factory is MISSING and spec.init for spec in specs)
    if not plain or hasattr(cls, "__post_init__") or cls.__bases__ != (object,):
        return None
    twin = type(f"_{cls.__name__}Slots", (object,), {"__slots__": cls.__dict__["__slots__"]})
    try:
        probe: Any = object.__new__(twin)
        probe.__class__ = cls  # identical layouts, or the general path
    except TypeError:
        return None
    _TWINS[cls] = twin
    names: dict[str, Any] = {"_twin": twin, "_new": object.__new__}
    params = []
    for spec in specs:
        if spec.default is MISSING:
            params.append(spec.name)
        else:
            names[f"_default_{spec.name}"] = spec.default
            params.append(f"{spec.name}=_default_{spec.name}")
    stores = "".join(f"    self.{spec.name} = {spec.name}\n" for spec in specs)
    source = f"def __new__(cls, {', '.join(params)}):\n    self = _new(_twin)\n{stores}    self.__class__ = cls\n    return self\n"
    # Built above from the class's own field names; the file name tells profiles apart.
    exec(_INITS.compiled(source, f"<record {cls.__qualname__}>"), names)
    new: Callable[..., Any] = names["__new__"]
    new.__qualname__ = f"{cls.__qualname__}.__new__"
    return new


_TWINS: dict[type, type] = {}
"""Each record built through an unfrozen twin (`_twin_new`), and that twin."""


def builder(cls: type[_Obj], *names: str) -> Callable[..., _Obj]:
    """A constructor of record `cls` that takes the fields `names`, in that order, positionally;
    every other field keeps its default. For the planner's loops that build a record per port or
    cable from a row of values: the row's order is the one written here by field name, not the
    class's (a field added to the class with a default changes nothing here; an unknown name, or
    a field without a default left out, fails at import), and a call costs what a positional
    build costs, where keyword arguments cost more per call.

    >>> @record
    ... class Trio:
    ...     a: int
    ...     b: str
    ...     c: float = 0.5
    >>> builder(Trio, "b", "a")("x", 1)
    Trio(a=1, b='x', c=0.5)
    """
    specs = {spec.name: spec for spec in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = [name for name in names if name not in specs]
    missing = [name for name, spec in specs.items() if name not in names and spec.default is MISSING]
    if unknown or missing or cls not in _TWINS:
        raise TypeError(f"{cls.__name__}: builder{names}: unknown {unknown}, no default for {missing} (or not a plain record)")
    namespace: dict[str, Any] = {"_twin": _TWINS[cls], "_new": object.__new__, "_cls": cls}
    stores = []
    for name, spec in specs.items():
        if name not in names:
            namespace[f"_default_{name}"] = spec.default
        stores.append(f"    self.{name} = {name if name in names else f'_default_{name}'}\n")
    source = f"def build({', '.join(names)}):\n    self = _new(_twin)\n{''.join(stores)}    self.__class__ = _cls\n    return self\n"
    # Built above from the class's own field names, like `__new__`.
    exec(_INITS.compiled(source, f"<record {cls.__qualname__} builder>"), namespace)
    build: Callable[..., _Obj] = namespace["build"]
    return build


_KEEP: Any = object()
"""A `__replace__` argument not given: the field keeps its value."""


def _replace_method(cls: type, names: tuple[str, ...], new: Callable[..., Any]) -> Callable[..., Any]:
    """`__replace__(self, *, <field>=...)`: a copy with the given fields changed, built by the
    class's own `__new__` (the protocol `copy.replace` uses from Python 3.13). `dataclasses.replace`
    reads the fields' metadata on every call, several times the cost of a build."""
    params = "".join(f", {name}=_KEEP" for name in names)
    values = "".join(f", self.{name} if {name} is _KEEP else {name}" for name in names)
    source = f"def __replace__(self{', *' if names else ''}{params}):\n    return _new(_cls{values})\n"
    namespace: dict[str, Any] = {"_KEEP": _KEEP, "_new": new, "_cls": cls}
    # Built above from the class's own field names, like `__new__`.
    exec(_INITS.compiled(source, f"<record {cls.__qualname__}.__replace__>"), namespace)
    method: Callable[..., Any] = namespace["__replace__"]
    method.__qualname__ = f"{cls.__qualname__}.__replace__"
    return method


def replace(obj: _Obj, /, **changes: Any) -> _Obj:
    """`obj` with `changes`, as `dataclasses.replace` (which it falls back to for a record built by
    the general `__init__`), through the record's compiled `__replace__` when it has one."""
    method = getattr(obj, "__replace__", None)
    if method is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    result: _Obj = method(**changes)
    return result


def _hashed(spec: Field[Any]) -> bool:
    """A field goes into the hash as with `@dataclass`: `hash=True`, or `hash=None` and compared."""
    return bool(spec.hash) if spec.hash is not None else spec.compare


def _init(cls: type, specs: tuple[Field[Any], ...]) -> Callable[..., None]:
    """`__init__(self, <fields in order, with their defaults>)`, compiled once: each field set
    through its slot descriptor, a default factory called per instance, then `__post_init__`."""
    names: dict[str, Any] = {"_FACTORY": _FACTORY}
    params, body = [], []
    for spec in specs:
        names[f"_set_{spec.name}"] = cls.__dict__[spec.name].__set__
        value = spec.name
        if spec.default_factory is not MISSING:
            names[f"_factory_{spec.name}"] = spec.default_factory
            value = f"_factory_{spec.name}()" if not spec.init else f"_factory_{spec.name}() if {spec.name} is _FACTORY else {spec.name}"
            default = "_FACTORY"
        elif spec.default is not MISSING:
            names[f"_default_{spec.name}"] = spec.default
            value = value if spec.init else f"_default_{spec.name}"
            default = f"_default_{spec.name}"
        elif not spec.init:
            continue  # like @dataclass: no default and not in __init__, so left unset
        else:
            default = ""
        if spec.init:
            params.append(f"{spec.name}={default}" if default else spec.name)
        body.append(f"    _set_{spec.name}(self, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    # Built above from the class's own field names; the file name tells profiles and tracebacks apart.
    exec(_INITS.compiled(source, f"<record {cls.__qualname__}>"), names)
    init: Callable[..., None] = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {spec.name: spec.type for spec in specs if spec.init} | {"return": None}  # as @dataclass's, for introspection
    return init


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the named attributes, as `@dataclass` builds it to compare and hash."""
    if len(names) > 1:
        getter: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
        return getter
    if names:
        (only,) = names
        return lambda obj: (getattr(obj, only),)
    return lambda obj: ()


def _eq_and_hash(compared: tuple[str, ...], hashed: tuple[str, ...]) -> tuple[Callable[[Any, Any], Any], Callable[[Any], int]]:
    compare_values, hash_values = _values(compared), _values(hashed)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compare_values(self) == compare_values(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hash_values(self))

    return __eq__, __hash__


def _repr(shown: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    return __repr__


def _frozen(cls: type[Any], names: frozenset[str]) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _state(names: tuple[str, ...]) -> tuple[Callable[[Any], list[Any]], Callable[[Any, list[Any]], None]]:
    """Pickling and copying a frozen slotted object: the field values in order, restored past
    the frozen `__setattr__` (what `@dataclass(frozen=True, slots=True)` adds)."""

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __getstate__, __setstate__
