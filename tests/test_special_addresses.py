"""Address pools and ASNs that lie: special-purpose ranges refused with their name, public space
and public ASNs warned about with the key, services pointed at a switch itself warned about.

The ranges below are copied from the IANA IPv4 Special-Purpose Address Registry (RFC 6890) by
hand, independently of fabricgen's own table, so a range missing there fails here.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.pipeline import load_and_plan
from tests.fabrics import fabric, write

IANA_SPECIAL = {
    "0.0.0.0/8": "this network",
    "127.0.0.0/8": "loopback",
    "169.254.0.0/16": "link-local",
    "192.0.0.0/24": "IETF protocol assignments",
    "192.0.2.0/24": "TEST-NET-1",
    "192.88.99.0/24": "6to4",
    "198.18.0.0/15": "benchmarking",
    "198.51.100.0/24": "TEST-NET-2",
    "203.0.113.0/24": "TEST-NET-3",
    "224.0.0.0/4": "multicast",
    "240.0.0.0/4": "reserved",
    "255.255.255.255/32": "limited broadcast",
}
POOLS = ("loopbacks", "fabric", "servers", "management")


def _diagnostics(tmp_path: Path, doc: dict[str, Any]) -> list[Diagnostic]:
    path = write(tmp_path, doc)
    try:
        return list(load_and_plan(path).warnings)
    except FabricError as exc:
        return exc.diagnostics


def _with_pool(pool: str, prefix: str) -> dict[str, Any]:
    addressing = dict(fabric()["addressing"])
    addressing[pool] = prefix
    return fabric(addressing=addressing)


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("special", sorted(IANA_SPECIAL))
def test_every_special_purpose_range_is_refused_in_every_pool(tmp_path: Path, pool: str, special: str) -> None:
    network = ipaddress.IPv4Network(special)
    prefix = str(next(network.subnets(new_prefix=24))) if network.prefixlen < 24 else special
    found = [d for d in _diagnostics(tmp_path, _with_pool(pool, prefix)) if d.path == f"addressing.{pool}"]
    assert found and found[0].is_error, found
    assert IANA_SPECIAL[special] in found[0].message and str(network) in found[0].message


@settings(max_examples=60, deadline=None)
@given(special=st.sampled_from(sorted(IANA_SPECIAL)), offset=st.integers(min_value=0), length=st.integers(min_value=0, max_value=32))
def test_any_prefix_touching_a_special_range_is_refused(special: str, offset: int, length: int) -> None:
    """A prefix anywhere inside a special range, or holding one, is refused (pure check, no plan)."""
    from fabricgen.inventory.validation.special import special_range

    network = ipaddress.IPv4Network(special)
    address = network.network_address + offset % network.num_addresses
    prefix = ipaddress.IPv4Network(f"{address}/{length}", strict=False)
    assert special_range(prefix) != ""


@pytest.mark.parametrize("prefix", ["10.8.0.0/16", "172.20.0.0/16", "192.168.64.0/20", "100.64.0.0/16"])
def test_private_pools_are_quiet(tmp_path: Path, prefix: str) -> None:
    found = _diagnostics(tmp_path, _with_pool("fabric", prefix))
    assert not [d for d in found if d.path == "addressing.fabric"], found


@pytest.mark.parametrize(("pool", "prefix"), [("fabric", "11.1.0.0/16"), ("loopbacks", "172.32.0.0/22"), ("servers", "8.0.0.0/16")])
def test_a_public_pool_is_a_warning_with_its_key(tmp_path: Path, pool: str, prefix: str) -> None:
    found = [d for d in _diagnostics(tmp_path, _with_pool(pool, prefix)) if d.path == f"addressing.{pool}"]
    assert len(found) == 1 and not found[0].is_error, found
    assert "public address space" in found[0].message and prefix in found[0].message


@pytest.mark.parametrize(
    ("bgp", "path", "shown"),
    [
        ({"spine_asn": 3356}, "bgp.spine_asn", "ASN 3356 is public"),
        ({"leaf_asn": 13335}, "bgp.leaf_asn", "ASN 13335-13338 is public"),
        ({"leaf_asn": 4199999999}, "bgp.leaf_asn", "is public"),
    ],
)
def test_a_public_asn_is_a_warning_with_its_key(tmp_path: Path, bgp: dict[str, int], path: str, shown: str) -> None:
    found = [d for d in _diagnostics(tmp_path, fabric(bgp=bgp)) if d.path == path]
    assert len(found) == 1 and not found[0].is_error and shown in found[0].message, found


def test_a_pinned_public_asn_points_at_the_pin(tmp_path: Path) -> None:
    doc = fabric(leaves={"nodes": [{"index": 2, "asn": 701}]})
    found = [d for d in _diagnostics(tmp_path, doc) if "public" in d.message]
    assert [(d.path, d.is_error) for d in found] == [("leaves.nodes[0].asn", False)]


@pytest.mark.parametrize("bgp", [{"spine_asn": 65000, "leaf_asn": 65101}, {"spine_asn": 4200000000, "leaf_asn": 4200000100}])
def test_private_asns_are_quiet(tmp_path: Path, bgp: dict[str, int]) -> None:
    assert not [d for d in _diagnostics(tmp_path, fabric(bgp=bgp)) if "ASN" in d.message]


@pytest.mark.parametrize(("asn", "source"), [(64496, "RFC 5398"), (65540, "RFC 5398"), (70000, "IANA"), (23456, "RFC 6793")])
def test_documentation_and_reserved_asns_are_refused(tmp_path: Path, asn: int, source: str) -> None:
    found = [d for d in _diagnostics(tmp_path, fabric(bgp={"spine_asn": asn})) if d.path == "bgp.spine_asn"]
    assert found and found[0].is_error and source in found[0].message, found


@pytest.mark.parametrize("service", ["ntp", "syslog", "dns"])
def test_a_service_at_a_switchs_own_management_address_is_a_warning(tmp_path: Path, service: str) -> None:
    doc = fabric(leaves={"nodes": [{"index": 3, "management": "192.168.1.200"}]}, services={service: ["192.168.1.200"]})
    found = [d for d in _diagnostics(tmp_path, doc) if d.path == f"services.{service}[0]"]
    assert len(found) == 1 and not found[0].is_error, found
    assert "t1-leaf03's own management address" in found[0].message


def test_a_service_elsewhere_in_the_management_pool_is_quiet(tmp_path: Path) -> None:
    doc = fabric(services={"ntp": ["192.168.3.250"]})
    assert not [d for d in _diagnostics(tmp_path, doc) if d.path.startswith("services")]


@pytest.mark.parametrize(("field", "address", "name"), [("loopback", "127.0.0.5", "loopback"), ("management", "169.254.1.1", "link-local")])
def test_a_pinned_address_in_a_special_range_is_refused(tmp_path: Path, field: str, address: str, name: str) -> None:
    doc = fabric(leaves={"nodes": [{"index": 2, field: address}]})
    found = [d for d in _diagnostics(tmp_path, doc) if d.path == f"leaves.nodes[0].{field}"]
    assert found and found[0].is_error and name in found[0].message, found
