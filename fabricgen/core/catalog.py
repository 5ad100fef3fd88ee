"""The hardware catalog and platform facts, read from data files.

Built-in models live in `data/catalog.yml`; an inventory's `models:` section adds or replaces
entries. Platform facts are each platform's `facts:` in `fabricgen/platforms/<os>/platform.yml`,
read through the platform registry.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from fabricgen import platforms as registry
from fabricgen.core.datafile import read_yaml
from fabricgen.core.model import Model, NicModel, Platform, PortMap

DATA = Path(__file__).resolve().parent.parent / "data"
"""The packaged data files (a folder of the installed package, as the templates are:
`importlib.resources` would cost every command about 5 ms of imports, `tempfile` among them)."""


@cache
def _read_data(name: str) -> dict[str, Any]:
    """A packaged data file, parsed once per process (and kept parsed between runs in the
    user's cache, see `core.datafile`). Callers only read it."""
    data: dict[str, Any] = read_yaml(DATA / name, name)
    return data


def catalog_data(name: str) -> Any:
    """A whole data file (`rollout.yml`), parsed once per process."""
    return _read_data(name)


def catalog_section(name: str) -> Any:
    """One top-level section of `data/catalog.yml` (`optics`, `nics`, `containerlab_server`),
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
        pfc_headroom_bytes=int(entry.get("pfc_headroom_bytes", 0)),
        pfc_headroom_cable_m=float(entry.get("pfc_headroom_cable_m", 0)),
        pfc_headroom_source=str(entry.get("pfc_headroom_source", "")),
        netbox={str(k): str(v) for k, v in entry.get("netbox", {}).items() if k != "interface_types"},
        netbox_interface_types={int(k): str(v) for k, v in entry.get("netbox", {}).get("interface_types", {}).items()},
        port_map=_port_map(entry["port_map"]) if "port_map" in entry else None,
    )


def _port_map(entry: dict[str, Any]) -> PortMap:
    """A model's `port_map:`: cage lanes as the platform files write them ("17,18,19,20")."""
    return PortMap(
        hwsku=str(entry["hwsku"]),
        lanes=tuple(tuple(int(lane) for lane in str(cage).split(",")) for cage in entry["lanes"]),
        alias=str(entry["alias"]),
        breakout_alias=str(entry["breakout_alias"]),
        breakout_modes={int(count): str(mode) for count, mode in entry.get("breakout_modes", {}).items()},
        fec=str(entry.get("fec", "rs")),
        source=str(entry.get("source", "")),
        buffers=_buffers(entry.get("buffers") or {}),
    )


def _buffers(entry: dict[str, Any]) -> dict[str, Any]:
    """A port map's `buffers:`, its xon keyed by speed (Gb/s) as the plan's ports are."""
    return {**entry, "xon": {int(speed): int(xon) for speed, xon in entry.get("xon", {}).items()}} if entry else {}


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
    """Every platform an inventory may name, by name (sorted), as the plan's records."""
    drain = registry.section("drain")
    return {
        name: Platform(name=name, **{**facts, "config_sections": tuple(facts.get("config_sections", ())), "drain": drain.get(name, {})})
        for name, facts in sorted(registry.section("facts").items())
    }
