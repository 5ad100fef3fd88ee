"""The hardware catalog and platform facts, read from data files.

Built-in models live in `data/catalog.yml`; an inventory's `models:` section adds or replaces
entries. Platform facts live in `data/platforms.yml`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from fabricgen.core.model import Model, NicModel, Platform
from fabricgen.core.usercache import parsed

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it: the same documents, parsed about ten
times faster (the catalog alone took a tenth of a second with the pure-Python loader, most of
the fixed cost of planning a small fabric)."""

DATA = Path(__file__).resolve().parent.parent / "data"
"""The packaged data files (a folder of the installed package, as the templates are:
`importlib.resources` would cost every command about 5 ms of imports, `tempfile` among them)."""


@cache
def _read_data(name: str) -> dict[str, Any]:
    """A packaged data file, parsed once per process, and kept parsed between runs in the user's
    cache (`usercache.parsed`: 0.3 ms instead of 14 ms for the files a render reads). Callers
    only read it."""
    text = (DATA / name).read_text(encoding="utf-8")
    data: dict[str, Any] = parsed(name, text, _parse_yaml, f"PyYAML {yaml.__version__} {_SAFE_LOADER.__name__}")
    return data


def _parse_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SAFE_LOADER)


def catalog_data(name: str) -> Any:
    """A whole data file (`rollout.yml`), parsed once per process."""
    return _read_data(name)


def catalog_section(name: str) -> Any:
    """One top-level section of `data/catalog.yml` (`optics`, `containerlab`, `hier_config`),
    parsed once per process, so every module reads the catalog the same way."""
    return _read_data("catalog.yml")[name]


def _model(name: str, entry: dict[str, Any]) -> Model:
    breakouts = {int(speed): int(count) for speed, count in entry.get("breakouts", {entry["speed"]: 1}).items()}
    breakouts.setdefault(int(entry["speed"]), 1)
    return Model(
        name=name,
        vendor=str(entry.get("vendor", "")),
        description=str(entry.get("description", name)),
        ports=int(entry["ports"]),
        speed=int(entry["speed"]),
        lanes=int(entry.get("lanes", 8)),
        form_factor=str(entry["form_factor"]),
        breakouts=dict(sorted(breakouts.items())),
        platforms=tuple(entry["platforms"]),
        queue_family=str(entry.get("queue_family", "trident")),
        dynamic_load_balancing=bool(entry.get("dynamic_load_balancing", False)),
        lane_rate=int(entry.get("lane_rate", 0)),
        twin_port=bool(entry.get("twin_port", False)),
        netbox={str(k): str(v) for k, v in entry.get("netbox", {}).items() if k != "interface_types"},
        netbox_interface_types={int(k): str(v) for k, v in entry.get("netbox", {}).get("interface_types", {}).items()},
    )


@cache
def builtin_models() -> dict[str, Model]:
    return {name: _model(name, entry) for name, entry in sorted(_read_data("catalog.yml")["models"].items())}


@cache
def nic_models() -> dict[str, NicModel]:
    """Server NIC / HCA models (`nics:` of the catalog)."""
    return {
        name: NicModel(
            name=name,
            vendor=str(entry.get("vendor", "")),
            description=str(entry.get("description", name)),
            form_factor=str(entry["form_factor"]),
            speed=int(entry["speed"]),
            lanes=int(entry["lanes"]),
            lane_rate=int(entry["lane_rate"]),
            netbox_interface_types={str(k): str(v) for k, v in entry.get("netbox_interface_types", {}).items()},
        )
        for name, entry in sorted(catalog_section("nics").items())
    }


def models_for(inventory_models: dict[str, Any]) -> dict[str, Model]:
    """Built-in catalog plus the inventory's own models (which win)."""
    models = dict(builtin_models())
    for name, entry in sorted(inventory_models.items()):
        models[name] = _model(name, entry)
    return models


@cache
def platforms() -> dict[str, Platform]:
    result = {}
    for name, entry in sorted(_read_data("platforms.yml")["platforms"].items()):
        result[name] = Platform(name=name, **{**entry, "config_sections": tuple(entry.get("config_sections", ()))})
    return result
