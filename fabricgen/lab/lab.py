"""A running lab: build it from a `LabTopology`, query it, change one switch, tear it down.

This is the Python API other code builds on (`lab verify`, and device stand-ins that need real
routing state):

    with Lab(lab_topology(plan)) as lab:        # up() on enter, down() on exit, also on Ctrl-C
        lab.bgp_summary("pod1-leaf01")          # `show bgp summary json` of that switch
        lab.replace_frr_config("pod1-leaf01", text)

Everything the lab creates is named from the topology's per-fabric prefix (`fg-<fabric>-`):
namespaces, FRR path spaces, the work folder `/run/fabricgen-lab/<fabric>/`. `down()` removes
exactly those, so two labs of different fabrics run side by side.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from fabricgen.lab import daemons, kernel
from fabricgen.lab.configs import frr_config, lldpd_config, plumbing_config
from fabricgen.lab.topology import LabServer, LabSwitch, LabTopology

WORK_ROOT = Path("/run/fabricgen-lab")

SWITCH_SYSCTLS = {
    "net.ipv4.ip_forward": "1",
    "net.ipv4.fib_multipath_hash_policy": "1",
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv6.conf.all.disable_ipv6": "1",
}
"""Switches route (forwarding is off in a new namespace) and hash on L4 like a switch hashing the
RoCEv2 UDP source port; IPv6 off so link-local chatter does not reach the daemons."""
START_WORKERS = 4
"""Switches started at once: vtysh applying a config mostly waits on the daemons."""
SERVER_SYSCTLS = {"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0", "net.ipv6.conf.all.disable_ipv6": "1"}


class Lab:
    def __init__(self, topology: LabTopology) -> None:
        self.topology = topology
        self.timers = topology.timers
        self.work = WORK_ROOT / topology.fabric
        self._switches = {s.name: s for s in topology.switches}
        self._servers = {s.name: s for s in topology.servers}
        self._previous_sigterm: Any = None
        self.kernel_changes: list[str] = []
        """Host-wide kernel limits `up()` had to raise (see `kernel.ensure_neighbour_capacity`)."""

    # -- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> Lab:
        """up(); SIGTERM becomes KeyboardInterrupt until exit, so a killed run still cleans up."""
        self._previous_sigterm = _catch_sigterm()
        try:
            self.up()
        except BaseException:
            self.down()
            _restore_sigterm(self._previous_sigterm)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        """down(), which a SIGTERM no longer interrupts: a 96-switch lab takes minutes to tear
        down, and a second stop (a `timeout` after the first) left its namespaces behind."""
        _ignore_sigterm()
        try:
            self.down()
        finally:
            _restore_sigterm(self._previous_sigterm)

    def up(self) -> None:
        """Namespaces, veths, addresses and MTUs, then FRR and lldpd in every switch."""
        if kernel.existing_namespaces(self.topology.prefix):
            self.down()
        self.work.mkdir(parents=True, exist_ok=True)
        self.kernel_changes = kernel.ensure_neighbour_capacity(2 * len(self.topology.cables) + 256)
        self._create_namespaces()
        self._create_cables()
        for server in self.topology.servers:
            self._configure_server(server)
        for switch in self.topology.switches:
            self._configure_switch(switch)
        with ThreadPoolExecutor(max_workers=START_WORKERS) as pool:
            list(pool.map(self._start_daemons, self.topology.switches))

    def down(self) -> None:
        """Stop every process in the lab's namespaces, delete them and the lab's files."""
        for namespace in kernel.existing_namespaces(self.topology.prefix):
            daemons.kill_remaining(namespace)
        leftovers = kernel.existing_namespaces(self.topology.prefix)
        kernel.ip_batch((f"netns del {ns}" for ns in leftovers), force=True)
        for namespace in self.topology.namespaces:
            daemons.remove_frr_paths(namespace)
        shutil.rmtree(self.work, ignore_errors=True)

    def running(self) -> bool:
        return bool(kernel.existing_namespaces(self.topology.prefix))

    # -- building -------------------------------------------------------------------------
    def _create_namespaces(self) -> None:
        kernel.ip_batch(f"netns add {ns}" for ns in self.topology.namespaces)

    def _create_cables(self) -> None:
        ns = self.topology.namespace
        kernel.ip_batch(
            f"link add name {c.a_kernel} netns {ns(c.a_node)} type veth peer name {c.z_kernel} netns {ns(c.z_node)}"
            for c in self.topology.cables
        )

    def _configure_server(self, server: LabServer) -> None:
        kernel.sysctls(server.namespace, SERVER_SYSCTLS)
        commands = ["link set lo up"]
        for nic in server.nics:
            commands += [
                f"link set {nic.kernel} alias {nic.planned} mtu {nic.mtu} up",
                f"addr add {nic.address}/{nic.prefix_length} dev {nic.kernel}",
            ]
            if self.topology.servers_prefix and nic.gateway:
                commands += [
                    f"route replace {self.topology.servers_prefix} via {nic.gateway} dev {nic.kernel} table {nic.table}",
                    f"rule add from {nic.address} table {nic.table} priority {nic.table}",
                ]
        kernel.ip_batch(commands, server.namespace)

    def _configure_switch(self, switch: LabSwitch) -> None:
        """Link state and MTU (FRR does not set MTUs); FRR's zebra sets the addresses, except on a
        switch that runs its own FRR config (SONiC): there the kernel gets its config_db's MTUs
        and addresses, as SONiC's portmgrd and intfmgrd set them, and zebra learns them."""
        kernel.sysctls(switch.namespace, SWITCH_SYSCTLS)
        commands = ["link set lo up"]
        mtus = dict(switch.native.mtus) if switch.native else {}
        commands += [f'link set {p.kernel} alias "{p.planned}" mtu {mtus.get(p.kernel, p.mtu)} up' for p in switch.ports]
        if switch.native:
            # the switch's loopback is a dummy interface; kernels without the dummy driver (this
            # lab's CI) have veths, so it is one end of a veth pair inside the namespace
            for name in switch.native.loopbacks:
                commands += [f"link add {name} type veth peer name {name[:10]}-lab", f"link set {name[:10]}-lab up", f"link set {name} up"]
            commands += [f"addr add {cidr} dev {name}" for name, cidr in switch.native.addresses]
        kernel.ip_batch(commands, switch.namespace)

    def node_work(self, node: str) -> Path:
        return self.work / node

    def _start_daemons(self, switch: LabSwitch) -> None:
        work = self.node_work(switch.name)
        work.mkdir(parents=True, exist_ok=True)
        config = work / "frr.conf"
        config.write_bytes(frr_config(self.topology, switch, self.timers, str(work / "frr.log")).encode())
        (work / "lldpd.conf").write_text(lldpd_config(switch, self.timers))
        daemons.start_frr(switch.namespace, config, work, before=self._plumbing(switch))
        daemons.start_lldpd(switch.namespace, work, work / "lldpd.conf", switch.port_pattern)

    def _plumbing(self, switch: LabSwitch) -> Path | None:
        """The lab's own lines for a switch that runs its own FRR config (applied before it)."""
        if not switch.native:
            return None
        path = self.node_work(switch.name) / "lab-plumbing.conf"
        path.write_text(plumbing_config(str(self.node_work(switch.name) / "frr.log")))
        return path

    # -- the API for checks and stand-ins ---------------------------------------------------
    def namespace(self, node: str) -> str:
        return self.topology.namespace(node)

    def bgp_summary(self, switch: str) -> Any:
        return daemons.vtysh_json(self.namespace(switch), "show bgp ipv4 unicast summary json")

    def bgp_table(self, switch: str) -> Any:
        return daemons.vtysh_json(self.namespace(switch), "show bgp ipv4 unicast json")

    def bgp_originated(self, switch: str) -> Any:
        """The BGP routes the switch originates itself (empty AS_PATH): a small answer at any size."""
        return daemons.vtysh_json(self.namespace(switch), "show bgp ipv4 unicast regexp ^$ json")

    def bfd_peers(self, switch: str) -> Any:
        return daemons.vtysh_json(self.namespace(switch), "show bfd peers json", daemon="bfdd")

    def lldp_neighbors(self, switch: str) -> Any:
        return daemons.lldp_neighbors(self.namespace(switch), self.node_work(switch))

    def routes(self, node: str) -> list[dict[str, Any]]:
        return kernel.routes(self.namespace(node))

    def interfaces(self, node: str) -> list[dict[str, Any]]:
        return kernel.links(self.namespace(node))

    def vtysh(self, switch: str, *commands: str) -> str:
        return daemons.vtysh(self.namespace(switch), *commands)

    def frr_config(self, switch: str) -> str:
        return (self.node_work(switch) / "frr.conf").read_text()

    def replace_frr_config(self, switch: str, text: str) -> None:
        """Run `switch` on a new FRR config: its FRR daemons restart on `text` (lldpd and the
        links stay up, so the neighbours see a routing restart, not a cable pull)."""
        namespace = self.namespace(switch)
        work = self.node_work(switch)
        lldpd_pid = _read_int(work / "lldpd.pid")
        for pid in kernel.namespace_pids(namespace):
            if pid != lldpd_pid and _parent(pid) != lldpd_pid:
                os.kill(pid, signal.SIGKILL)
        _wait_gone(namespace, keep={lldpd_pid}, timeout=10)
        daemons.remove_frr_paths(namespace)
        (work / "frr.conf").write_bytes(text.encode())
        kernel.ip_batch(["route flush proto bgp"], namespace, force=True)
        daemons.start_frr(namespace, work / "frr.conf", work, before=self._plumbing(self._switches[switch]))

    def apply_frr_commands(self, switch: str, text: str) -> None:
        """Apply config lines (FRR syntax) to the running switch, without restarting it."""
        path = self.node_work(switch) / "change.conf"
        path.write_text(text)
        daemons.apply_config(self.namespace(switch), path)

    def set_mtu(self, node: str, kernel_name: str, mtu: int) -> None:
        kernel.ip_batch([f"link set {kernel_name} mtu {mtu}"], self.namespace(node))

    def restart_switch(self, switch: LabSwitch) -> None:
        """Run `switch` (a changed copy of one of the lab's switches) with its rendered config."""
        work = self.node_work(switch.name)
        self.replace_frr_config(switch.name, frr_config(self.topology, switch, self.timers, str(work / "frr.log")))

    def set_link(self, node: str, kernel_name: str, up: bool) -> None:
        kernel.ip_batch([f"link set {kernel_name} {'up' if up else 'down'}"], self.namespace(node))

    def ping(self, server: str, source: str, destination: str, size: int, count: int = 1, timeout: float = 2) -> bool:
        """One DF ping of `size` bytes on the wire (IP packet), from `source` on `server`."""
        argv = ["ping", "-n", "-q", "-M", "do", "-c", str(count), "-W", f"{timeout:g}", "-s", str(size - 28), "-I", source, destination]
        return kernel.in_namespace(self.namespace(server), argv, timeout=timeout * count + 5, check=False).returncode == 0


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


_Handler = Any
"""What signal.getsignal returns (a callable, an int constant or None)."""


def _catch_sigterm() -> _Handler:
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_interrupt)


def _ignore_sigterm() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _restore_sigterm(previous: _Handler) -> None:
    if previous is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, previous)


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _parent(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[1])
    except (OSError, ValueError, IndexError):
        return 0


def _wait_gone(namespace: str, keep: set[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(pid in keep or _parent(pid) in keep for pid in kernel.namespace_pids(namespace)):
            return
        time.sleep(0.1)
