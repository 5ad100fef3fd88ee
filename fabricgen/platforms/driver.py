"""What the push reads from a device, as one typed interface each platform implements.

The deploy playbooks run `show ... | json` on a switch and hand the output to fabricgen; a
platform's driver (`fabricgen/platforms/<os>/driver.py`, a `DRIVER` object) turns its own JSON
into plain facts: BGP sessions, interface states, PFC states, LLDP neighbors, counters. The
checks (`push/baseline.py`, `push/postchecks.py`) compare those facts with the plan, whatever
the platform, and pick the driver by the host's platform: a new OS brings its parser in its
own folder and nothing else changes. Every parser reads what it knows and ignores the rest; a
check that finds nothing it expects fails (fail closed), it never passes on an empty parse.
The driver also reads the platform's config text where a pre-flight needs it (`management`:
what keeps the controller's path to the switch, `push/reachability.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabricgen.platforms.acl_text import ControlPlaneFilter
from fabricgen.platforms.sections import Section, split_sections


@dataclass(frozen=True, slots=True)
class Session:
    """One BGP session as the device reports it."""

    state: str
    prefixes: int

    @property
    def established(self) -> bool:
        return self.state.lower() == "established"


@dataclass(frozen=True, slots=True)
class Management:
    """What reaches a switch, as one config says it."""

    interface: str = ""
    address: str = ""  # without the prefix length
    vrf: str = "default"
    default_route: bool = False
    api_vrfs: frozenset[str] = field(default_factory=frozenset)
    ssh_vrfs: frozenset[str] = field(default_factory=frozenset)


class Driver(Protocol):
    """A platform's readers of `show ... | json` (each: output in, facts out)."""

    def bgp_sessions(self, summary: Mapping[str, Any]) -> dict[str, Session]:
        """`show ip bgp summary`: peer address -> its session."""
        ...

    def bfd_states(self, peers: Mapping[str, Any]) -> dict[str, str]:
        """BFD peers: peer address -> its state, lower case (`up` is up)."""
        ...

    def interface_states(self, status: Mapping[str, Any]) -> dict[str, str]:
        """Interface status: short interface name (`short_interface`) -> link state."""
        ...

    def pfc_states(self, pfc: Mapping[str, Any]) -> dict[str, bool]:
        """Per-port PFC: short interface name -> PFC on."""
        ...

    def pfc_priorities(self, pfc: Mapping[str, Any]) -> dict[str, frozenset[int]]:
        """The `pfc` check's output: short interface name -> the priorities PFC pauses (none
        when PFC is off on the port)."""
        ...

    def qos_policies(self, output: Mapping[str, Any]) -> dict[str, str]:
        """The `qos` check's output: short interface name -> the QoS policy the port runs (EOS
        its `service-profile`, NX-OS its input `service-policy type qos`), "" when none."""
        ...

    def ecn_thresholds(self, output: Mapping[str, Any]) -> dict[str, dict[int, tuple[int, int]]]:
        """The `ecn` check's output: short interface name -> {traffic class that marks ECN:
        (minimum, maximum threshold in bytes)}."""
        ...

    def bgp_identity(self, config: str) -> dict[str, tuple[str, str]]:
        """A config's `router bgp`: neighbor address -> (local AS, remote AS), with what the
        neighbor inherits (EOS peer group, NX-OS peer template) applied. Read from the running
        and the staged config to find the sessions a change makes two-ended."""
        ...

    def lldp_neighbors(self, output: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
        """`show lldp neighbors`: local short interface name -> (neighbor host, its short port)."""
        ...

    def counters(self, output: Any, keys: str) -> dict[str, int]:
        """Error and drop counters whose key matches `keys`, by their path in the output."""
        ...

    def known_shapes(self) -> Mapping[str, tuple[str, ...]]:
        """Per check (`bgp`, `bfd`, `interfaces`, `lldp`, `pfc`, `qos`, `ecn`, `errors`, `watchdog`), the top-level
        keys of the outputs this platform answers with: an output with none of them is not
        understood, and the check fails rather than pass on an empty parse."""
        ...

    def filters(self) -> Mapping[str, Callable[..., Any]]:
        """The platform's own Ansible filters, by name without the `fabricgen_<os>_` prefix."""
        ...

    def management(self, config: str) -> Management:
        """Config text (running or staged): the management interface, its address and VRF, the
        VRF's default route, and the VRFs where the API and SSH are on."""
        ...

    def control_plane(self, config: str) -> ControlPlaneFilter:
        """Config text: the access lists and where the control-plane (or vty) ACL is applied."""
        ...


def short_interface(name: str) -> str:
    """Canonical interface name for comparison: EOS and NX-OS abbreviate (`Et1/1`, `Eth1/1`).

    >>> short_interface("Et1/1"), short_interface("Ethernet1/1"), short_interface(" mgmt0 ")
    ('ethernet1/1', 'ethernet1/1', 'mgmt0')
    """
    match = re.match(r"(?i)^(eth|et|ethernet)(\d.*)$", name.strip())
    if match:
        return f"ethernet{match.group(2)}"
    return name.strip().lower()


def truthy(value: Any) -> bool:
    """A device's way of saying yes (`on`, `true`, `enabled`, ...), or a JSON boolean."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"on", "true", "enabled", "yes", "1"}


def as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


UNIT_BYTES = {"bytes": 1, "kbytes": 1000, "mbytes": 1000 * 1000}
"""Queue threshold units as the switches print them, in bytes (1 KB = 1000 bytes, as the plan's
`ecn_min` / `ecn_max` texts are written)."""


def threshold_bytes(value: Any, unit: Any) -> int:
    """A queue threshold in bytes; -1 for a unit this project does not know (never equal to a
    planned value, so the check fails rather than guess).

    >>> threshold_bytes("950", "kbytes"), threshold_bytes(150, "KBytes"), threshold_bytes(1, "cells")
    (950000, 150000, -1)
    """
    factor = UNIT_BYTES.get(str(unit).strip().lower())
    return as_int(value) * factor if factor else -1


NEIGHBOR_ADDRESS = re.compile(r"^[0-9a-fA-F:.]+$")
"""A `neighbor` that is an address, not a peer group or template name."""


def bgp_section(config: str) -> Section | None:
    """The `router bgp <asn>` section of a config (running or staged), if it has one."""
    return next((s for s in split_sections(config) if s.head.startswith("router bgp ")), None)


def host_part(name: Any) -> str:
    """LLDP system names may carry a domain: compare the host part."""
    return str(name or "").split(".")[0].lower()


def numeric_leaves(output: Any, keys: str, path: str = "") -> dict[str, int]:
    """Every numeric leaf whose key matches `keys` (a regex), by its path in the JSON document.

    Shape-agnostic on purpose: PFC watchdog and error counter JSON differ between releases.

    >>> numeric_leaves({"interfaces": {"Et1": {"fcsErrors": 2, "name": "x"}}}, "(?i)errors")
    {'interfaces/Et1/fcsErrors': 2}
    """
    found: dict[str, int] = {}
    if isinstance(output, Mapping):
        for name, value in output.items():
            child = f"{path}/{name}" if path else str(name)
            if isinstance(value, (Mapping, list)):
                found.update(numeric_leaves(value, keys, child))
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and re.search(keys, str(name)):
                found[child] = int(value)
    elif isinstance(output, list):
        for index, item in enumerate(output):
            found.update(numeric_leaves(item, keys, f"{path}[{index}]"))
    return found
