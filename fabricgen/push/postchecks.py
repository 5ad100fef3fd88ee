"""Post-change checks for the deploy playbooks: `show ... | json` in, a list of problems out.

The playbooks confirm a pending commit only when every check returns an empty list. The
logic lives here, in plain typed Python with unit tests on captured outputs, rather than in
Jinja expressions inside YAML that nobody can test. `playbooks/filter_plugins/fabricgen.py`
exposes these functions to Ansible as filters.

Every check fails closed: an interface or neighbor missing from the output counts as a
problem, so a command whose output shape differs from what is expected stops the canary
instead of waving a broken switch through. The output is read by the platform's driver
(`fabricgen/platforms/<os>/driver.py`); the checks here are the same for every platform, and
each platform's filters (`fabricgen_<os>_bgp_problems`, ...) are generated from the registry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from fabricgen import platforms as registry
from fabricgen.platforms.driver import Driver, short_interface

ESTABLISHED = "established"


def _names(items: Iterable[Any], key: str = "") -> list[str]:
    """Accept plain names or dicts (host_vars entries) and return the names."""
    names = []
    for item in items or ():
        if isinstance(item, Mapping):
            names.append(str(item[key]))
        else:
            names.append(str(item))
    return names


# --- BGP -------------------------------------------------------------------------------------


def bgp_not_established(states: Mapping[str, str], neighbors: Iterable[Any]) -> list[str]:
    """Planned neighbors that are not Established, as `address (state)` messages."""
    problems = []
    for address in _names(neighbors, "address"):
        state = states.get(address)
        if state is None:
            problems.append(f"{address} (not configured)")
        elif state.lower() != ESTABLISHED:
            problems.append(f"{address} ({state})")
    return problems


def bgp_problems(driver: Driver, summary: Mapping[str, Any], neighbors: Iterable[Any]) -> list[str]:
    """`show ip bgp summary | json` -> planned neighbors not Established."""
    return bgp_not_established({address: s.state for address, s in driver.bgp_sessions(summary).items()}, neighbors)


# --- interfaces ------------------------------------------------------------------------------


def interfaces_not_up(states: Mapping[str, str], interfaces: Iterable[Any], up: Iterable[str] = ("up", "connected")) -> list[str]:
    """Planned fabric interfaces that are not up, as `name (state)` messages."""
    good = {u.lower() for u in up}
    problems = []
    for name in _names(interfaces, "name"):
        state = states.get(short_interface(name))
        if state is None:
            problems.append(f"{name} (missing)")
        elif state.lower() not in good:
            problems.append(f"{name} ({state})")
    return problems


def interface_problems(driver: Driver, status: Mapping[str, Any], interfaces: Iterable[Any]) -> list[str]:
    return interfaces_not_up(driver.interface_states(status), interfaces)


# --- PFC -------------------------------------------------------------------------------------


def pfc_not_enabled(states: Mapping[str, bool], interfaces: Iterable[Any]) -> list[str]:
    problems = []
    for name in _names(interfaces, "name"):
        state = states.get(short_interface(name))
        if state is None:
            problems.append(f"{name} (missing)")
        elif not state:
            problems.append(f"{name} (PFC off)")
    return problems


def pfc_problems(driver: Driver, pfc: Mapping[str, Any], interfaces: Iterable[Any]) -> list[str]:
    return pfc_not_enabled(driver.pfc_states(pfc), interfaces)


# --- all checks of one switch ---------------------------------------------------------------

_CHECKS: dict[str, Callable[[Driver, Mapping[str, Any], Iterable[Any]], list[str]]] = {
    "bgp": bgp_problems,
    "interfaces": interface_problems,
    "pfc": pfc_problems,
}


def device_problems(
    driver: Driver,
    outputs: Mapping[str, Any],
    neighbors: Iterable[Any] = (),
    fabric_interfaces: Iterable[Any] = (),
    roce_interfaces: Iterable[Any] = (),
) -> list[str]:
    """{check name: `show ... | json` output} of one switch -> every problem, prefixed by check.

    Check names: `bgp`, `interfaces`, `pfc`; an empty list means the switch may be confirmed.
    """
    arguments = {"bgp": neighbors, "interfaces": fabric_interfaces, "pfc": roce_interfaces}
    problems = []
    for check, output in outputs.items():
        if check not in _CHECKS:
            problems.append(f"{check}: unknown post-check")
            continue
        if not isinstance(output, Mapping):
            problems.append(f"{check}: expected JSON output, got {type(output).__name__}")
            continue
        problems.extend(f"{check}: {message}" for message in _CHECKS[check](driver, output, arguments[check] or ()))
    return problems


# --- device diffs ----------------------------------------------------------------------------


def config_lines(text: str) -> list[str]:
    """A rendered config as the commands a config session takes: `!` comments and `end` dropped,
    indentation kept (EOS leaves sub-modes implicitly by indentation)."""
    out = []
    for line in str(text).splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        out.append(line.rstrip())
    return out


# --- OpenSM ----------------------------------------------------------------------------------


def opensm_options(text: str) -> dict[str, str]:
    """`opensm.conf` -> {option: value}. OpenSM takes the first token after the key as value."""
    options = {}
    for line in str(text).splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split()
        options[parts[0]] = parts[1] if len(parts) > 1 else ""
    return options


def opensm_changed_options(old: str, new: str) -> list[str]:
    before, after = opensm_options(old), opensm_options(new)
    return sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))


def opensm_restart_needed(old: str, new: str, reloadable: Iterable[str]) -> bool:
    """True when an option that OpenSM reads only at start changed (SIGHUP is not enough).

    Options not listed as reloadable count as restart-only: unknown means restart.
    """
    allowed = set(reloadable)
    return any(key not in allowed for key in opensm_changed_options(old, new))


def local_checksums(directory: str, names: Iterable[str]) -> dict[str, str]:
    """{name: SHA-1} of rendered files on the controller (SHA-1: what `find`/`stat` report)."""
    return {name: hashlib.sha1(Path(directory, name).read_bytes()).hexdigest() for name in names}


def live_checksums(find_result: Mapping[str, Any]) -> dict[str, str]:
    """{name: SHA-1} from a registered `ansible.builtin.find` with `get_checksum: true`."""
    return {PurePosixPath(f["path"]).name: str(f.get("checksum", "")) for f in find_result.get("files", [])}


def checksums_differ(rendered: Mapping[str, str], live: Mapping[str, str]) -> bool:
    """True when a rendered file differs from the live one or has no live counterpart: the
    deploy then takes a fresh backup before replacing anything."""
    return any(live.get(name) != checksum for name, checksum in rendered.items())


def _platform_filters() -> Iterator[tuple[str, Any]]:
    """Each platform's filters, `fabricgen_<os>_<name>`: the checks above bound to its driver,
    and the driver's own (device diff readers)."""
    for name, driver in registry.drivers().items():
        yield f"fabricgen_{name}_problems", partial(device_problems, driver)
        for check, function in _CHECKS.items():
            yield f"fabricgen_{name}_{check.removesuffix('s')}_problems", partial(function, driver)
        for filter_name, function in driver.filters().items():
            yield f"fabricgen_{name}_{filter_name}", function


def _iter_filters() -> Iterator[tuple[str, Any]]:
    yield from _platform_filters()
    yield "fabricgen_config_lines", config_lines
    yield "fabricgen_opensm_changed_options", opensm_changed_options
    yield "fabricgen_opensm_restart_needed", opensm_restart_needed
    yield "fabricgen_local_checksums", local_checksums
    yield "fabricgen_live_checksums", live_checksums
    yield "fabricgen_checksums_differ", checksums_differ


def ansible_filters() -> dict[str, Any]:
    """Name -> function, as Ansible's FilterModule.filters() wants it."""
    return dict(_iter_filters())
