"""Rendered configs of the lab's daemons: FRR (`templates/frr/`) and lldpd, per switch.

The same text runs in the local namespace lab and in the containerlab export. Lab timers are
not planned values (`LabTopology.timers`): they make a laptop-sized lab converge in seconds (BGP
keepalive 1 s, hold 3 s, connect retry 2 s, LLDP every second) and slow down with the lab's
sessions per core (`fabricgen/lab/timers.py`); BFD runs at the planned interval and multiplier
unless the lab's size slows it down too.
"""

from __future__ import annotations

from fabricgen import platforms as registry
from fabricgen.lab.topology import LabSwitch, LabTimers, LabTopology
from fabricgen.render.templating import environment
from fabricgen.render.tidy import tidy


def frr_config(topology: LabTopology, switch: LabSwitch, timers: LabTimers | None = None, log_file: str = "/var/log/frr/frr.log") -> str:
    """`frr.conf` of one switch (integrated config: vtysh hands zebra, bgpd and bfdd their parts):
    the switch's own rendered file when its platform runs FRR itself (SONiC), unmodified, else
    templates/frr; `timers`: the topology's unless given."""
    if switch.native:
        return switch.native.frr_config
    timers = timers or topology.timers
    template = environment().get_template("frr/frr.conf.j2")
    drain = registry.section("drain")["frr"]
    return tidy(template.render(switch=switch, topology=topology, lab=timers, log_file=log_file, drain=drain))


def lldpd_config(switch: LabSwitch, timers: LabTimers) -> str:
    """lldpd commands (lldpcli syntax) of one switch: its planned name, ports named by ifname."""
    return (
        f"configure system hostname {switch.name}\n"
        "configure lldp portidsubtype ifname\n"
        f"configure lldp tx-interval {timers.lldp_tx_interval}\n"
        f"configure system interface pattern {switch.port_pattern}\n"
    )


def plumbing_config(log_file: str) -> str:
    """Applied before a switch's own FRR config (never written into it): where the lab reads the
    daemons' log, with the millisecond timestamps the fault drill measures BFD by."""
    return f"log file {log_file}\nlog timestamp precision 3\n"


DAEMONS_FILE = """# FRR daemons of a fabricgen lab node (containerlab export)
zebra=yes
bgpd=yes
bfdd=yes
staticd=no
vtysh_enable=yes
zebra_options=" -A 127.0.0.1 -s 90000000"
bgpd_options=" -A 127.0.0.1"
bfdd_options=" -A 127.0.0.1"
"""
