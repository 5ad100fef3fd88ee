"""Special-purpose IPv4 ranges and ASNs: what an address pool or an ASN must not be, and what
is public (fine when the operator holds it, so only a warning).

The tables are the IANA registries, which RFC 6890 set up and later RFCs extend:
- IPv4 Special-Purpose Address Registry
  (https://www.iana.org/assignments/iana-ipv4-special-registry/), RFC 6890 §2.2.2;
- Autonomous System (AS) Numbers (https://www.iana.org/assignments/as-numbers/), RFC 6996
  (private use), RFC 7300 (last ASNs), RFC 5398 (documentation), RFC 6793 (AS_TRANS),
  RFC 7607 (AS 0).
Private-use space (RFC 1918, and RFC 6598's shared space, which operators use inside their own
networks) is what a pool is expected to be; every other range that is neither special nor
private is public.
"""

from __future__ import annotations

import ipaddress

SPECIAL_RANGES: tuple[tuple[str, str, str], ...] = (
    ("0.0.0.0/8", '"this network"', "RFC 791, RFC 1122 §3.2.1.3"),
    ("127.0.0.0/8", "loopback", "RFC 1122 §3.2.1.3"),
    ("169.254.0.0/16", "link-local", "RFC 3927"),
    ("192.0.0.0/24", "IETF protocol assignments", "RFC 6890 §2.1"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737"),
    ("192.31.196.0/24", "AS112-v4", "RFC 7535"),
    ("192.52.193.0/24", "AMT", "RFC 7450"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526"),
    ("192.175.48.0/24", "direct delegation AS112 service", "RFC 7534"),
    ("198.18.0.0/15", "benchmarking", "RFC 2544"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737"),
    ("233.252.0.0/24", "multicast documentation (MCAST-TEST-NET)", "RFC 5771"),
    ("224.0.0.0/4", "multicast", "RFC 5771"),
    ("255.255.255.255/32", "limited broadcast", "RFC 8190, RFC 919"),
    ("240.0.0.0/4", "reserved for future use", "RFC 1112 §4"),
)
"""(prefix, name, source): a more specific range before the one that holds it, so a pool is
refused with the most precise name."""

PRIVATE_RANGES: tuple[tuple[str, str], ...] = (
    ("10.0.0.0/8", "RFC 1918"),
    ("172.16.0.0/12", "RFC 1918"),
    ("192.168.0.0/16", "RFC 1918"),
    ("100.64.0.0/10", "RFC 6598"),
)

_SPECIAL = tuple((ipaddress.IPv4Network(prefix), name, source) for prefix, name, source in SPECIAL_RANGES)
_PRIVATE = tuple(ipaddress.IPv4Network(prefix) for prefix, _ in PRIVATE_RANGES)


def special_range(network: ipaddress.IPv4Network) -> str:
    """The special-purpose range a pool overlaps, named with its source; "" for none.

    >>> special_range(ipaddress.IPv4Network("127.0.0.0/24"))
    'loopback 127.0.0.0/8 (RFC 1122 §3.2.1.3)'
    >>> special_range(ipaddress.IPv4Network("192.0.0.0/16"))
    'IETF protocol assignments 192.0.0.0/24 (RFC 6890 §2.1)'
    >>> special_range(ipaddress.IPv4Network("10.0.0.0/8"))
    ''
    """
    for prefix, name, source in _SPECIAL:
        if network.overlaps(prefix):
            return f"{name} {prefix} ({source})"
    return ""


def is_private(network: ipaddress.IPv4Network) -> bool:
    """Inside RFC 1918 private-use or RFC 6598 shared space.

    >>> is_private(ipaddress.IPv4Network("10.1.0.0/16")), is_private(ipaddress.IPv4Network("100.64.0.0/10"))
    (True, True)
    >>> is_private(ipaddress.IPv4Network("172.32.0.0/16")), is_private(ipaddress.IPv4Network("8.8.8.0/24"))
    (False, False)
    """
    return any(network.subnet_of(prefix) for prefix in _PRIVATE)


_RESERVED_ASN_RANGES: tuple[tuple[int, int, str], ...] = (
    (0, 0, "AS 0 may not be used (RFC 7607)"),
    (23456, 23456, "AS 23456 is AS_TRANS, which stands in for 4-byte ASNs in 2-byte sessions (RFC 6793)"),
    (64496, 64511, "ASNs 64496-64511 are reserved for documentation (RFC 5398)"),
    (65535, 65535, "AS 65535 is reserved (RFC 7300)"),
    (65536, 65551, "ASNs 65536-65551 are reserved for documentation (RFC 5398)"),
    (65552, 131071, "ASNs 65552-131071 are reserved by IANA (IANA AS Numbers registry)"),
    (4294967295, 4294967295, "AS 4294967295 is reserved (RFC 7300)"),
)

PRIVATE_ASNS = ((64512, 65534), (4200000000, 4294967294))
"""Private-use ASNs (RFC 6996 §5; 64512-65535 were set aside by RFC 1930 §10, RFC 7300 took 65535)."""


def reserved_asn(asn: int) -> str:
    """Why an ASN may not be used; "" when it may.

    >>> reserved_asn(0), reserved_asn(64500), reserved_asn(65001)
    ('AS 0 may not be used (RFC 7607)', 'ASNs 64496-64511 are reserved for documentation (RFC 5398)', '')
    """
    return next((why for low, high, why in _RESERVED_ASN_RANGES if low <= asn <= high), "")


def is_private_asn(asn: int) -> bool:
    """Inside the private-use ranges (RFC 6996 §5).

    >>> is_private_asn(65000), is_private_asn(4200000001), is_private_asn(13335)
    (True, True, False)
    """
    return any(low <= asn <= high for low, high in PRIVATE_ASNS)
