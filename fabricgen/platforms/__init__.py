"""The platform registry: every switch operating system fabricgen knows is one folder here.

`fabricgen/platforms/<os>/platform.yml` holds what fabricgen knows about the OS outside its
templates (`templates/<templates>/`) and its Ansible role (`playbooks/roles/<os>_deploy/`):
`facts` (the plan's `Platform` record), `containerlab`, `hier_config`, `ansible` (collection
and group variables); `ownership.yml` beside it says what a push owns on the device. A folder
may start from another platform with `parent: <name>` (netlab's device `parent:`): mappings are
merged key by key, the child's value wins, anything else is replaced. The name is the folder's
unless `name:` says otherwise.

This registry is the only place that lists platforms: the schema's platform enum, the Ansible
group variables, the containerlab kinds and the ownership tables are read from it, so adding
an OS is adding a folder (docs/architecture.md, "Adding a platform").
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, cast

from fabricgen.core.datafile import read_yaml
from fabricgen.platforms.driver import Driver

HERE = Path(__file__).resolve().parent

FOLDERS: list[Path] = [HERE]
"""Where platform folders are looked for: each subfolder with a `platform.yml` is one platform.
A test adds a folder of its own here (and calls `reload()`) to try a platform out."""

_NOT_INHERITED = ("name", "parent")


def _read_folder(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = dict(read_yaml(folder / "platform.yml", f"platform-{folder.name}.yml") or {})
    data["folder"] = str(folder)
    return data


def _raw() -> dict[str, dict[str, Any]]:
    """Every folder's own data by platform name, before inheritance."""
    found: dict[str, dict[str, Any]] = {}
    for root in FOLDERS:
        for folder in sorted(p for p in root.iterdir() if (p / "platform.yml").is_file()):
            data = _read_folder(folder)
            name = str(data.get("name", folder.name))
            if name in found:
                raise ValueError(f"{folder / 'platform.yml'}: platform {name!r} is defined twice (also in {found[name]['folder']})")
            found[name] = data
    return found


def merged(parent: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """`child` over `parent`: mappings merged key by key, any other value replaced.

    >>> merged({"facts": {"mtu_max": 9214, "title": "Parent"}, "templates": "parent"}, {"facts": {"title": "Toy"}})
    {'facts': {'mtu_max': 9214, 'title': 'Toy'}, 'templates': 'parent'}
    """
    result = dict(parent)
    for key, value in child.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def _resolved(name: str, raw: Mapping[str, dict[str, Any]], chain: tuple[str, ...]) -> dict[str, Any]:
    data = raw[name]
    parent = data.get("parent")
    own = {key: value for key, value in data.items() if key not in _NOT_INHERITED}
    if parent is None:
        return {**own, "lineage": (name,)}
    where = f"{data['folder']}/platform.yml: parent"
    if parent not in raw:
        raise ValueError(f"{where}: no platform {parent!r} (known: {', '.join(sorted(raw))})")
    if parent in chain:
        raise ValueError(f"{where}: {' -> '.join((*chain, name, parent))} is a circle")
    base = _resolved(str(parent), raw, (*chain, name))
    return {**merged(base, own), "lineage": (name, *base["lineage"])}


@cache
def registry() -> dict[str, dict[str, Any]]:
    """Platform name -> its data with its parents' merged in, sorted by name. `folder` is the
    platform's own folder, `lineage` its name and its ancestors' (nearest first)."""
    raw = _raw()
    return {name: _resolved(name, raw, ()) for name in sorted(raw)}


def reload() -> None:
    """Forget what was read (after a change to `FOLDERS`)."""
    registry.cache_clear()
    ownership_tables.cache_clear()
    drivers.cache_clear()


@cache
def ownership_tables() -> dict[str, Any]:
    """Platform name -> its `ownership.yml`, or its nearest ancestor's (the whole file), for the
    platforms that have one. Read only by the commands that push or compare device configs."""
    return {
        name: read_yaml(folder / "ownership.yml", f"platform-{folder.name}-ownership.yml")
        for name, folder in _nearest_with("ownership.yml").items()
    }


def _nearest_with(file_name: str) -> dict[str, Path]:
    """Platform name -> the folder of the nearest platform in its lineage (itself first) that has
    `file_name`, for the platforms where one has it: how a child inherits a file."""
    platforms = registry()
    found: dict[str, Path] = {}
    for name, data in platforms.items():
        folders = (Path(platforms[ancestor]["folder"]) for ancestor in data["lineage"])
        nearest = next((folder for folder in folders if (folder / file_name).is_file()), None)
        if nearest is not None:
            found[name] = nearest
    return found


def section(key: str) -> dict[str, Any]:
    """Platform name -> its `key` section, for the platforms that have one (`containerlab`,
    `hier_config`, `facts`)."""
    return {name: data[key] for name, data in registry().items() if key in data}


def entry(name: str) -> dict[str, Any]:
    """One platform's data; a KeyError names the known platforms."""
    found = registry()
    if name not in found:
        raise KeyError(f"no platform {name!r} in fabricgen/platforms (known: {', '.join(found)})")
    return found[name]


def inventory_platforms() -> list[str]:
    """The platforms an inventory may name (those with `facts`), sorted: the schema's enum."""
    return sorted(section("facts"))


def template_folder(name: str) -> str:
    """The folder under templates/ whose `device.j2` renders this platform's switches (a child
    platform renders with its parent's unless it names its own)."""
    return str(entry(name)["templates"])


def config_files(name: str) -> dict[str, str]:
    """Output file under configs/ (`{name}` the switch) -> its template, for a platform's
    switches: `config_files:` in its platform.yml, else one `<name>.cfg` from `device.j2`.

    >>> sorted({path for name in inventory_platforms() for path in config_files(name)})[0]
    '{name}.cfg'
    """
    data = entry(name)
    own = data.get("config_files") or {"{name}.cfg": "device.j2"}
    return {str(path): f"{data['templates']}/{template}" for path, template in own.items()}


def ansible_group_vars() -> dict[str, dict[str, Any]]:
    """Inventory group -> what every host in it gets: the platform's `ansible.group_vars` and its
    `ansible_network_os`. The group is the platform's name: `ansible/hosts.yml` groups the
    switches by platform. playbooks/vars_plugins/ hands this to the playbooks."""
    found: dict[str, dict[str, Any]] = {}
    for name, data in registry().items():
        variables = dict(data.get("ansible", {}).get("group_vars") or {})
        network_os = data.get("facts", {}).get("ansible_network_os")
        if network_os:
            variables["ansible_network_os"] = network_os
        if variables:
            found[name] = variables
    return found


def _driver_of(folder: Path) -> Driver:
    """`DRIVER` of the folder's driver module (one of this package, or a file in a folder elsewhere)."""
    if folder.parent == HERE:
        module = importlib.import_module(f"{__name__}.{folder.name}.driver")
    else:
        spec = importlib.util.spec_from_file_location(f"fabricgen_platform_{folder.name}_driver", folder / "driver.py")
        if spec is None or spec.loader is None:
            raise ImportError(f"{folder / 'driver.py'}: not a Python module")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return cast(Driver, module.DRIVER)


@cache
def drivers() -> dict[str, Driver]:
    """Platform name -> the reader of its device output (`driver.py` in its folder, or in its
    nearest ancestor's), for the platforms the push talks to."""
    return {name: _driver_of(folder) for name, folder in _nearest_with("driver.py").items()}


def driver(platform: str) -> Driver:
    """The driver of a platform, by fabricgen name (its folder's) or Ansible network OS (what a playbook
    knows of its host: `ansible_network_os`); a KeyError names the platforms that have one."""
    found = drivers()
    if platform in found:
        return found[platform]
    for name, data in registry().items():
        if name in found and data.get("facts", {}).get("ansible_network_os") == platform:
            return found[name]
    raise KeyError(f"no device driver for platform {platform!r} (platforms with one: {', '.join(found)})")
