"""The lab's reading of a SONiC switch's config_db.json (fabricgen/lab/native.py): a table it
cannot read is refused with the switch and the table named, never guessed."""

from __future__ import annotations

import pytest

from fabricgen.lab.native import NativeConfigError, kernel_addresses, port_mtus


def test_config_db_tables_the_lab_cannot_read_are_refused() -> None:
    with pytest.raises(NativeConfigError, match="PORT Ethernet0 has no numeric mtu"):
        port_mtus({"PORT": {"Ethernet0": {"speed": "400000"}}}, "leaf1")
    with pytest.raises(NativeConfigError, match="INTERFACE is not a table"):
        kernel_addresses({"INTERFACE": ["Ethernet0|10.0.0.0/31"]}, "leaf1")
    with pytest.raises(NativeConfigError, match="has no prefix length"):
        kernel_addresses({"INTERFACE": {"Ethernet0|10.0.0.0": {}}}, "leaf1")


def test_addresses_and_mtus_as_intfmgrd_and_portmgrd_set_them() -> None:
    db = {
        "PORT": {"Ethernet0": {"mtu": "9100", "admin_status": "up"}, "Ethernet8": {"mtu": "9216"}},
        "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.51.0.1/31": {}},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.50.0.3/32": {}},
    }
    assert port_mtus(db, "leaf1") == (("Ethernet0", 9100), ("Ethernet8", 9216))
    assert kernel_addresses(db, "leaf1") == ((("Ethernet0", "10.51.0.1/31"), ("Loopback0", "10.50.0.3/32")), ("Loopback0",))
