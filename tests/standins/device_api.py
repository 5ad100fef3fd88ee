"""STAND-IN device APIs for the deploy-playbook tests: Arista eAPI and Cisco NX-API over HTTP.

This is NOT an Arista or Cisco device and does not check CLI syntax. It exists because no real
EOS or NX-OS runs on a CI machine. It answers the JSON-RPC (`/command-api`) and NX-API
(`/ins`) requests that the `arista.eos` / `cisco.nxos` httpapi plugins send, keeps a
running-config, configuration sessions with commit timers, checkpoints and configure replace
with a commit timeout in memory, and records every command, commit, confirm and rollback in
order. It proves the playbooks' logic (order, check mode, commit confirm, rollback on a failed
post-check, rollout stopping) and nothing about the devices' syntax.

Each stand-in device listens on its own port on 127.0.0.1, in a thread of the test process, so
there is no process to clean up besides closing the servers (`StandinFabric.close`).

It does not agree with whatever it is told:
- it authenticates every request (HTTP basic) against the `username` lines of its own running
  config, so a push that removes the login user locks the test out;
- it has a clock (`StandinClock`, advanced by the test): an unconfirmed commit timer or
  commit-timeout expires and the previous config returns, also when the controller is gone;
- it refuses an NX-OS `configure replace` file that is not a complete running configuration
  (`NxosApi._full_config`: no `version` / `hostname` line, or a `boot` line of its running
  config missing), and a checkpoint path without its filesystem;
- its PFC, QoS policy and ECN answers are derived from the config it holds (qos_state.py);
- its BGP / LLDP / interface answers come from a pluggable routing-state source
  (`RoutingState`). The default (`ConfigRouting`) reads every device's committed config with the
  vendors' own parsers (tests/standins/parsers.py) and the cabling plan: a session is
  Established only when both ends' configs agree (addresses on the cabled link, neighbor
  address, remote-as = the far end's ASN). A lab-backed source (FRR in namespaces) plugs in the
  same way. `fail_postcheck` still forces the first neighbor down while a commit is pending.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import re
import threading
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from tests.standins.qos_state import port_qos

# What a switch carries before fabricgen's first push: the login users, the API the playbooks
# use, the lines a full replace must keep. Cleartext `secret 0` so the stand-in can check them.
INITIAL_CONFIGS = {
    "eos": (
        "hostname {name}\n! stand-in initial config\nusername admin privilege 15 role network-admin secret 0 factory\n"
        "username standin privilege 15 role network-admin secret 0 standin\n"
        "tacacs-server host 192.168.20.9 key 7 Tq7-tacacs\nsnmp-server community Sn9-community ro\n"
        "management api http-commands\n   no shutdown\n"
    ),
    "nxos": (
        "!Command: show running-config\nversion 10.4(3) Bios:version 05.47\nhostname {name}\n! stand-in initial config\nfeature nxapi\nusername admin password 0 factory role network-admin\n"
        "username standin password 0 standin role network-admin\nboot nxos bootflash:/nxos64-cs.10.4.3.F.bin\ncopp profile strict\n"
        "tacacs-server host 192.168.20.9 key 7 Tq7-tacacs\nsnmp-server community Sn9-community group network-operator\n"
    ),
}
INITIAL_CONFIG = INITIAL_CONFIGS["eos"]


class StandinClock:
    """The stand-ins' shared clock: real time plus what the test adds with `advance`."""

    def __init__(self) -> None:
        import time

        self._time = time.monotonic
        self.offset = 0.0
        self.listeners: list[Any] = []

    def now(self) -> float:
        return self._time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds
        for listener in self.listeners:
            listener()


class ConfirmGate:
    """A test hook that holds a device at the point of confirm: the request that would confirm a
    pending commit signals `reached` and waits for `release`, then the device drops it unanswered
    (a controller gone at that instant never gets a reply). Deterministic: the test kills the
    controller between the two events instead of guessing a moment with sleeps."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()


class RoutingState(Protocol):
    """Where the stand-in's show-command answers come from (config-derived, or a real lab)."""

    def apply(self, device: StandinDevice) -> None: ...
    def bgp(self, device: StandinDevice) -> dict[str, tuple[str, int, str]]: ...
    def lldp(self, device: StandinDevice) -> list[tuple[str, str, str]]: ...
    def interfaces(self, device: StandinDevice) -> dict[str, str]: ...


class CommandError(Exception):
    """A command the stand-in rejects (the device would answer with an error)."""


@dataclass
class StandinDevice:
    """One STAND-IN switch: state plus a log of what it was asked to do."""

    name: str
    platform: str  # "eos" or "nxos"
    neighbors: list[str]
    fabric_interfaces: list[str]
    roce_interfaces: list[str]
    cabling: list[tuple[str, str, str]] = field(default_factory=list)  # (local if, peer, peer if)
    running: str = ""
    startup: str = ""
    fail_postcheck: bool = False
    log: list[tuple[str, str]] = field(default_factory=list)
    sessions: dict[str, list[str]] = field(default_factory=dict)
    completed_sessions: set[str] = field(default_factory=set)
    pending: tuple[str, str] | None = None  # (session or "replace", config before the commit)
    deadline: float = 0.0  # clock time at which a pending commit rolls back by itself
    bootflash: dict[str, str] = field(default_factory=dict)
    checkpoints: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    clock: StandinClock = field(default_factory=StandinClock)
    routing: RoutingState | None = None
    confirm_gate: ConfirmGate | None = None  # set by a test: hold the next confirm (see ConfirmGate)
    errors: dict[str, int] = field(default_factory=dict)  # interface -> error counter (a test moves it)
    error_growth: int = 0  # added to the first fabric interface's errors at every read while a commit is pending
    applied: str = ""  # the running config the routing-state source last got

    def __post_init__(self) -> None:
        if not self.running:
            self.running = INITIAL_CONFIGS[self.platform].format(name=self.name)
        self.startup = self.running
        self.initial = self.running
        self.clock.listeners.append(self.expire)

    def expire(self) -> None:
        """The commit timer ran out unconfirmed: the previous config returns."""
        with self.lock:
            if self.pending is not None and self.clock.now() >= self.deadline:
                self.running = self.pending[1]
                self.record("timer-expired", self.pending[0])
                self.pending = None
            self.sync_routing()

    def sync_routing(self) -> None:
        """Hand a changed running config to the routing-state source (a lab restarts FRR on it)."""
        if self.routing is not None and self.running != self.applied:
            self.routing.apply(self)
            self.applied = self.running

    def commit_pending(self, name: str, previous: str, seconds: float) -> None:
        self.pending = (name, previous)
        self.deadline = self.clock.now() + seconds

    def confirms(self, body: dict[str, Any]) -> bool:
        """Whether this request would confirm the pending commit (EOS `configure session X commit`
        of the pending session, NX-OS `configure replace commit`)."""
        if self.pending is None:
            return False
        if "ins_api" in body:
            return "configure replace commit" in str(body["ins_api"].get("input", ""))
        commands = [c["cmd"] if isinstance(c, dict) else str(c) for c in body.get("params", {}).get("cmds", [])]
        return f"configure session {self.pending[0]} commit" in (c.strip() for c in commands)

    def users(self) -> dict[str, str]:
        """{user: cleartext secret} from the running config (`secret 0 X` / `password 0 X`)."""
        found = {}
        for match in re.finditer(r"(?m)^username (\S+)(?:.*?\b(?:secret|password) 0 (\S+))?", self.running):
            found[match.group(1)] = match.group(2) or ""
        return found

    # --- what the tests read ---------------------------------------------------------------

    def events(self, *kinds: str) -> list[str]:
        """Logged events (commit-timer, confirm, rollback, save, ...), optionally filtered."""
        return [kind for kind, _ in self.log if not kinds or kind in kinds]

    @property
    def changed(self) -> bool:
        return self.running != self.initial

    def record(self, kind: str, detail: str = "") -> None:
        self.log.append((kind, detail))

    # --- health ----------------------------------------------------------------------------

    def broken(self) -> bool:
        return self.fail_postcheck and self.pending is not None

    def error_counters(self) -> dict[str, int]:
        """Every fabric interface's error counter; while a commit is pending, `error_growth` is
        added at each read (a link that takes errors after the change)."""
        if self.pending is not None and self.error_growth and self.fabric_interfaces:
            first = self.fabric_interfaces[0]
            self.errors[first] = self.errors.get(first, 0) + self.error_growth
        return {name: self.errors.get(name, 0) for name in self.fabric_interfaces}

    def bgp_sessions(self) -> dict[str, tuple[str, int, str]]:
        """{neighbor: (state, prefixes, remote-as)} from the routing-state source."""
        found = dict(self.routing.bgp(self)) if self.routing else {a: ("Established", 1, "65000") for a in self.neighbors}
        if self.broken() and self.neighbors:
            first = self.neighbors[0]
            found[first] = ("Active", 0, found.get(first, ("", 0, "65000"))[2])
        return found


def _config_text(lines: Iterable[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def _strip_config(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip() and not line.strip().startswith("!") and line.strip() != "end"]


class EosApi:
    """STAND-IN for Arista eAPI `runCmds`: sessions, commit timer, confirm, abort."""

    def __init__(self, device: StandinDevice) -> None:
        self.device = device

    def run(self, commands: list[Any], fmt: str) -> list[Any]:
        device = self.device
        session: str | None = None
        results: list[Any] = []
        for item in commands:
            command = item["cmd"] if isinstance(item, dict) else str(item)
            stripped = command.strip()
            device.record("command", stripped)
            if session is not None:
                results.append(self._in_session(session, stripped, command))
                if stripped in ("end", "abort"):
                    session = None
                continue
            match = re.fullmatch(r"configure session (\S+)(.*)", stripped)
            if match:
                name, rest = match.group(1), match.group(2).strip()
                if not rest:
                    if name in device.completed_sessions:
                        raise CommandError(f"Cannot enter session {name} (session already completed)")
                    device.sessions.setdefault(name, _strip_config(device.running))
                    session = name
                    results.append({})
                    continue
                results.append(self._session_action(name, rest))
                continue
            results.append(self._exec(stripped, fmt))
        return results

    def _in_session(self, name: str, stripped: str, command: str) -> Any:
        device = self.device
        if stripped == "rollback clean-config":
            device.sessions[name] = []
        elif stripped == "end":
            pass
        elif stripped == "abort":
            device.sessions.pop(name, None)
            device.record("discard", name)
        else:
            device.sessions[name].append(command.rstrip())
        return {}

    def _session_action(self, name: str, rest: str) -> Any:
        device = self.device
        if name not in device.sessions and not (device.pending and device.pending[0] == name):
            raise CommandError(f"session {name} does not exist")
        timer = re.fullmatch(r"commit timer (\d\d):(\d\d):(\d\d)", rest)
        if timer:
            hours, minutes, secs = (int(g) for g in timer.groups())
            device.commit_pending(name, device.running, hours * 3600 + minutes * 60 + secs)
            device.running = _config_text(device.sessions.pop(name))
            device.completed_sessions.add(name)
            device.record("commit-timer", f"{name} {hours:02d}:{minutes:02d}:{secs:02d}")
        elif rest == "commit":
            if device.pending and device.pending[0] == name:
                device.pending = None
                device.record("confirm", name)
            else:
                device.running = _config_text(device.sessions.pop(name))
                device.completed_sessions.add(name)
                device.record("commit", name)
        elif rest == "abort":
            if device.pending and device.pending[0] == name:
                device.running = device.pending[1]
                device.pending = None
                device.record("rollback", name)
            else:
                device.sessions.pop(name, None)
                device.record("discard", name)
        else:
            raise CommandError(f"invalid input: configure session {name} {rest}")
        return {}

    def _exec(self, command: str, fmt: str) -> Any:
        device = self.device
        if command == "enable":
            return {}
        if command == "show version":
            return {"version": "4.32.0F-standin", "modelName": "STAND-IN"}
        if command == "show hostname":
            return {"hostname": device.name, "fqdn": device.name}
        if command.startswith("show configuration sessions"):
            sessions: dict[str, Any] = {name: {"state": "pending"} for name in device.sessions}
            if device.pending is not None:
                sessions[device.pending[0]] = {"state": "pendingCommitTimer", "commitTimerRemaining": device.deadline - device.clock.now()}
            return {"sessions": sessions}
        if command.startswith("show running-config"):
            return {"output": device.running}
        match = re.fullmatch(r"show session-config named (\S+) diffs", command)
        if match:
            name = match.group(1)
            if name not in device.sessions:
                raise CommandError(f"session {name} does not exist")
            candidate = _config_text(device.sessions[name])
            diff = difflib.unified_diff(
                device.running.splitlines(), candidate.splitlines(), "system:/running-config", f"session:/{name}", lineterm=""
            )
            return {"output": "\n".join(diff)}
        if command == "copy running-config startup-config":
            device.startup = device.running
            device.record("save")
            return {"messages": ["Copy completed successfully."]}
        if command == "show ip bgp summary":  # shape: tests/data/show/eos_show_ip_bgp_summary.json
            peers = {a: _eos_peer(st, n, asn) for a, (st, n, asn) in device.bgp_sessions().items()}
            return {"vrfs": {"default": {"vrf": "default", "routerId": "10.0.0.1", "asn": "65000", "peers": peers}}}
        if command == "show interfaces status":
            states = device.routing.interfaces(device) if device.routing else {n: "up" for n in device.fabric_interfaces}
            return {
                "interfaceStatuses": {
                    n: {"linkStatus": "connected" if st == "up" else "notconnect", "lineProtocolStatus": st} for n, st in states.items()
                }
            }
        if command == "show lldp neighbors":  # shape: tests/data/show/eos_show_lldp_neighbors.json
            seen = device.routing.lldp(device) if device.routing else []
            return {
                "tablesLastChangeTime": 0.0,
                "tablesAgeOuts": 0,
                "tablesInserts": len(seen),
                "lldpNeighbors": [{"ttl": 120, "neighborDevice": b, "neighborPort": c, "port": a} for a, b, c in seen],
                "tablesDeletes": 0,
                "tablesDrops": 0,
            }
        if command == "show bfd peers":  # shape: ANTA's VerifyBFDPeersHealth unit data (tests/data/show/README.md)
            bfd = bool(re.search(r"(?m)^\s+neighbor \S+ bfd$", device.running))
            peers = {
                a: {"peerStats": {"": {"status": "up" if st == "Established" else "down", "l3intf": ""}}}
                for a, (st, _, _) in device.bgp_sessions().items()
            }
            return {"vrfs": {"default": {"ipv4Neighbors": peers if bfd else {}, "ipv6Neighbors": {}}}}
        if command.startswith(("show priority-flow-control", "show qos interfaces")) and "counters" not in command:
            return _eos_qos(command, device.running)
        if command == "show interfaces counters errors":
            counts = device.error_counters()
            return {"interfaceErrorCounters": {n: {"fcsErrors": c, "inErrors": c, "outErrors": 0} for n, c in counts.items()}}
        if command == "show priority-flow-control counters watchdog":
            return {"interfaces": {n: {"txQueues": {"3": {"stuckCount": 0, "droppedPackets": 0}}} for n in device.roce_interfaces}}
        raise CommandError(f"invalid command: {command}")


class NxosApi:
    """STAND-IN for Cisco NX-API `/ins`: checkpoints, configure replace with commit-timeout."""

    def __init__(self, device: StandinDevice) -> None:
        self.device = device

    def run(self, command: str) -> Any:
        device = self.device
        device.record("command", command)
        if command == "terminal dont-ask":
            return ""
        if command == "show version":
            return f"Cisco Nexus Operating System (NX-OS) Software STAND-IN\n  NXOS: version 10.4(3)\nHardware\n  cisco Nexus9000 C9364D-GX2A Chassis\n  Device name: {device.name}\n"
        if command == "show inventory":
            return 'NAME: "Chassis",  DESCR: "Nexus9000 C9364D-GX2A Chassis"\nPID: N9K-C9364D-GX2A     ,  VID: V01  ,  SN: STANDIN\n'
        if command.startswith("show running-config"):
            return device.running
        match = re.fullmatch(r"copy (\S+) bootflash:(\S+) vrf \S+", command)
        if match:
            with urllib.request.urlopen(match.group(1), timeout=10) as response:  # the test's own HTTP server on 127.0.0.1
                device.bootflash[match.group(2)] = response.read().decode()
            device.record("copy", match.group(2))
            return "Copy complete."
        match = re.fullmatch(r"show file bootflash:(\S+) md5sum", command)
        if match:
            return hashlib.md5(self._file(match.group(1)).encode()).hexdigest() + "\n"
        match = re.fullmatch(r"configure replace bootflash:(\S+) show-patch", command)
        if match:
            self._full_config(match.group(1))
            candidate = _strip_config(self._file(match.group(1)))
            current = _strip_config(device.running)
            patch = [f"no {line.strip()}" for line in current if line not in candidate] + [
                line for line in candidate if line not in current
            ]
            body = "\n".join(patch) if patch else "Rollback Patch is Empty"
            return f"Collecting Running-Config\n#Generating Rollback Patch\n{body}\n"
        match = re.fullmatch(r"checkpoint file (\S+)", command)
        if match:
            path = match.group(1)
            if not path.startswith("bootflash:"):  # NX-OS refuses a checkpoint file without its filesystem
                raise CommandError(f"% Invalid path: {path}: a checkpoint file needs a filesystem (bootflash:)")
            device.checkpoints[path.removeprefix("bootflash:")] = device.running
            device.record("checkpoint", path)
            return ""
        match = re.fullmatch(r"configure replace bootflash:(\S+) commit-timeout (\d+)", command)
        if match:
            self._full_config(match.group(1))
            device.commit_pending("replace", device.running, int(match.group(2)))
            device.running = _config_text(_strip_config(self._file(match.group(1))))
            device.record("commit-timer", f"{match.group(1)} {match.group(2)}")
            return "Configure replace completed successfully."
        if command == "configure replace commit":
            if device.pending is None:
                raise CommandError("no configure replace is pending")
            device.pending = None
            device.record("confirm", "replace")
            return ""
        match = re.fullmatch(r"rollback running-config file (\S+)", command)
        if match:
            name = match.group(1).removeprefix("bootflash:")
            if not match.group(1).startswith("bootflash:") or name not in device.checkpoints:
                raise CommandError(f"checkpoint {match.group(1)} does not exist")
            device.running = device.checkpoints[name]
            device.pending = None
            device.record("rollback", match.group(1))
            return "Rollback completed successfully."
        if command == "copy running-config startup-config":
            device.startup = device.running
            device.record("save")
            return "Copy complete."
        match = re.fullmatch(r"delete bootflash:(\S+) no-prompt", command)
        if match:
            if match.group(1) in device.bootflash:
                del device.bootflash[match.group(1)]
            elif match.group(1) in device.checkpoints:
                del device.checkpoints[match.group(1)]
            else:
                raise CommandError(f"bootflash:{match.group(1)}: No such file or directory")
            device.record("delete", match.group(1))
            return ""
        if command == "show lldp neighbors":  # shape: tests/data/show/nxos_show_lldp_neighbors.json
            seen = device.routing.lldp(device) if device.routing else []
            rows = [_nxos_lldp_row(local, system, far) for local, system, far in seen]
            return {"neigh_hdr": "neigh_hdr", "TABLE_nbor": {"ROW_nbor": _rows(rows)}, "neigh_count": str(len(rows))}
        if command == "show interface counters errors":
            counts = device.error_counters()
            return {"TABLE_interface": {"ROW_interface": [{"interface": n, "eth-fcs-err": c} for n, c in counts.items()]}}
        if command == "show queuing pfc-queue detail":
            return {"TABLE_pfcwd": {"ROW_pfcwd": [{"interface": n, "drop-count": 0} for n in device.roce_interfaces]}}
        if command == "show ip bgp summary":  # shape: tests/data/show/nxos_show_ip_bgp_summary.json
            rows = [_nxos_bgp_row(a, st, n, asn) for a, (st, n, asn) in device.bgp_sessions().items()]
            saf = {"ROW_saf": {"safi": "1", "af-name": "IPv4 Unicast", "TABLE_neighbor": {"ROW_neighbor": _rows(rows)}}}
            af = {"ROW_af": {"af-id": "1", "TABLE_saf": saf}}
            vrf = {"vrf-name-out": "default", "vrf-router-id": "10.0.0.1", "vrf-local-as": "65000", "TABLE_af": af}
            return {"TABLE_vrf": {"ROW_vrf": vrf}}
        if command == "show interface brief":
            states = device.routing.interfaces(device) if device.routing else {n: "up" for n in device.fabric_interfaces}
            return {"TABLE_interface": {"ROW_interface": [{"interface": n, "state": st} for n, st in states.items()]}}
        if command in ("show interface priority-flow-control", "show policy-map interface brief", "show queuing interface"):
            return _nxos_qos(command, device.running)
        raise CommandError(f"% Invalid command: {command}")

    def _full_config(self, name: str) -> None:
        """Refuse a replace file that is not a complete running configuration. Cisco's guide
        ("Performing Configuration Replace", Nexus 9000 NX-OS System Management Configuration
        Guide) says the file must be a valid running configuration taken from the device, not a
        partial one; it does not say how a device detects one. The stand-in's rule (its own, not
        NX-OS's): the file has the `version` and `hostname` lines every running-config starts
        with, and every `boot` line the running config has (a replace would otherwise remove the
        boot variables). The message is the stand-in's own wording, not the device's."""
        lines = {line.strip() for line in self._file(name).splitlines()}
        missing = [
            what
            for what, present in (
                ("a 'version' line", any(line.startswith("version ") for line in lines)),
                ("a 'hostname' line", any(line.startswith("hostname ") for line in lines)),
            )
            if not present
        ]
        missing += [f"'{line}'" for line in _strip_config(self.device.running) if line.startswith("boot ") and line.strip() not in lines]
        if missing:
            raise CommandError(
                f"Configure replace failed: bootflash:{name} is not a complete running configuration "
                f"(no {', no '.join(missing)}); provide a running configuration taken from the switch, not a partial one"
            )

    def _file(self, name: str) -> str:
        if name not in self.device.bootflash:
            raise CommandError(f"bootflash:{name}: No such file or directory")
        return self.device.bootflash[name]


def _eos_qos(command: str, running: str) -> dict[str, Any]:
    """EOS PFC, QoS policy and ECN per port, derived from the config (INVENTED shapes: no public
    capture found; tests/data/show/README.md)."""
    ports = port_qos("eos", running)
    if command == "show priority-flow-control":
        return {"interfaceStatuses": {n: {"enabled": q.pfc_on, "priorities": sorted(q.pfc_priorities)} for n, q in ports.items()}}
    if command == "show qos interfaces":
        return {"interfaces": {n: {"serviceProfile": q.policy, "trustMode": "dscp" if q.policy else "cos"} for n, q in ports.items()}}
    if command == "show qos interfaces ecn":
        return {
            "interfaces": {
                n: {
                    "txQueues": {
                        str(tc): {"ecnEnabled": True, "minThreshold": lo, "maxThreshold": hi, "unit": unit}
                        for tc, (lo, hi, unit) in q.ecn.items()
                    }
                }
                for n, q in ports.items()
            }
        }
    raise CommandError(f"invalid command: {command}")


def _nxos_qos(command: str, running: str) -> dict[str, Any]:
    """NX-OS PFC, QoS policy and ECN per port, derived from the config (INVENTED shapes)."""
    ports = port_qos("nxos", running)
    if command == "show interface priority-flow-control":
        rows = [
            {
                "intf-name": n,
                "mode": "On" if q.pfc_on else "Off",
                "oper": "On" if q.pfc_on else "Off",
                "vl-bmap": f"{sum(1 << c for c in q.pfc_priorities):x}",
            }
            for n, q in ports.items()
        ]
        return {"TABLE_entry": {"ROW_entry": _rows(rows)}}
    if command == "show policy-map interface brief":
        return {"TABLE_intf": {"ROW_intf": _rows([{"intf-name": n, "in-qos-policy": q.policy} for n, q in ports.items()])}}
    egress = [
        {
            "if_name_str": n,
            "TABLE_qosgrp_egress": {
                "ROW_qosgrp_egress": _rows(
                    [
                        {
                            "eq-qosgrp": str(tc),
                            "eq-wred-ecn": "enabled",
                            "eq-wred-min-thresh": str(lo),
                            "eq-wred-max-thresh": str(hi),
                            "eq-wred-unit": unit,
                        }
                        for tc, (lo, hi, unit) in q.ecn.items()
                    ]
                )
            },
        }
        for n, q in ports.items()
    ]
    return {"TABLE_queuing_interface": {"ROW_queuing_interface": _rows(egress)}}


def _eos_peer(state: str, prefixes: int, asn: str) -> dict[str, Any]:
    """One EOS `show ip bgp summary` peer, every field a real EOS shows (numbers as numbers)."""
    return {
        "version": 4,
        "msgReceived": 0,
        "msgSent": 0,
        "inMsgQueue": 0,
        "outMsgQueue": 0,
        "asn": str(asn),
        "prefixAccepted": prefixes,
        "prefixReceived": prefixes,
        "upDownTime": 0.0,
        "underMaintenance": False,
        "peerState": state,
    }


def _rows(rows: list[dict[str, Any]]) -> Any:
    """NX-API prints a table of one row as that row, not as a list of one."""
    return rows[0] if len(rows) == 1 else rows


def _nxos_short(name: str) -> str:
    """NX-OS's short interface name in LLDP's local port column: Ethernet1/1 -> Eth1/1."""
    return re.sub(r"^Ethernet", "Eth", name)


def _nxos_lldp_row(local: str, system: str, far: str) -> dict[str, Any]:
    return {
        "chassis_type": "Locally Assigned",
        "chassis_id": system,
        "l_port_id": _nxos_short(local),
        "hold_time": "120",
        "system_capability": "BR",
        "enabled_capability": "BR",
        "port_type": "Interface Name",
        "port_id": far,
        "mgmt_addr_type": "IPV4",
        "mgmt_addr": "192.0.2.1",
        "mgmt_addr_ipv6_type": "802",
        "mgmt_addr_ipv6": "0200.0000.0001",
    }


def _nxos_bgp_row(address: str, state: str, prefixes: int, asn: str) -> dict[str, Any]:
    """One NX-OS neighbor row: NX-API prints its counters as strings."""
    return {
        "neighborid": address,
        "neighborversion": "4",
        "msgrecvd": "0",
        "msgsent": "0",
        "neighbortableversion": "0",
        "inq": "0",
        "outq": "0",
        "neighboras": str(asn),
        "time": "00:00:01",
        "state": state,
        "prefixreceived": str(prefixes),
    }


def _handler(device: StandinDevice) -> type[BaseHTTPRequestHandler]:
    eos, nxos = EosApi(device), NxosApi(device)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

        def _authorised(self) -> bool:
            header = self.headers.get("Authorization", "")
            if not header.startswith("Basic "):
                return False
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
            known = device.users()
            return user in known and known[user] == password

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            device.expire()
            if not self._authorised():
                device.record("auth-refused")
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="stand-in"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            gate = device.confirm_gate
            if gate is not None and device.confirms(body):
                device.record("confirm-held")
                gate.reached.set()
                gate.release.wait(timeout=600)
                device.confirm_gate = None
                self.close_connection = True
                return  # no reply: the controller that sent it is gone
            with device.lock:
                if self.path == "/command-api":
                    reply = self._eos(body)
                elif self.path == "/ins":
                    reply = self._nxos(body)
                else:
                    self.send_error(404)
                    return
                device.sync_routing()
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _eos(self, body: dict[str, Any]) -> dict[str, Any]:
            params = body.get("params", {})
            try:
                return {"jsonrpc": "2.0", "id": body.get("id"), "result": eos.run(params.get("cmds", []), params.get("format", "json"))}
            except CommandError as exc:
                return {
                    "jsonrpc": "2.0",
                    "id": body.get("id"),
                    "error": {"code": 1002, "message": str(exc), "data": [{"errors": [str(exc)]}]},
                }

        def _nxos(self, body: dict[str, Any]) -> dict[str, Any]:
            request = body["ins_api"]
            commands = [c.strip() for c in str(request.get("input", "")).split(" ;") if c.strip()]
            outputs: list[dict[str, Any]] = []
            for command in commands:
                try:
                    outputs.append({"code": "200", "msg": "Success", "input": command, "body": nxos.run(command)})
                except CommandError as exc:
                    outputs.append({"code": "400", "msg": "Input CLI command error", "input": command, "clierror": str(exc)})
                    break
            output: Any = outputs[0] if len(outputs) == 1 else outputs
            return {"ins_api": {"type": request.get("type"), "version": "1.0", "sid": "eoc", "outputs": {"output": output}}}

    return Handler


class StandinFabric:
    """A set of STAND-IN devices, each an HTTP server on its own port of 127.0.0.1."""

    def __init__(self) -> None:
        self.devices: dict[str, StandinDevice] = {}
        self.servers: dict[str, ThreadingHTTPServer] = {}
        self.threads: list[threading.Thread] = []

    def add(self, device: StandinDevice) -> int:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(device))
        thread = threading.Thread(target=server.serve_forever, name=f"standin-{device.name}", daemon=True)
        thread.start()
        self.devices[device.name] = device
        self.servers[device.name] = server
        self.threads.append(thread)
        return int(server.server_address[1])

    def port(self, name: str) -> int:
        return int(self.servers[name].server_address[1])

    def close(self) -> None:
        for server in self.servers.values():
            server.shutdown()
            server.server_close()
        for thread in self.threads:
            thread.join(timeout=5)
