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

Health: every planned BGP neighbor is Established, every planned fabric interface up and PFC
on on every RoCE port, unless the test sets `fail_postcheck` on a device: then, while a
commit is pending (timer or commit-timeout not yet confirmed), the first planned neighbor is
reported `Active` and the checks fail, as if the new config had broken BGP.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import threading
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INITIAL_CONFIG = "hostname {name}\n! stand-in initial config\nusername admin privilege 15\n"


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
    running: str = ""
    startup: str = ""
    fail_postcheck: bool = False
    log: list[tuple[str, str]] = field(default_factory=list)
    sessions: dict[str, list[str]] = field(default_factory=dict)
    completed_sessions: set[str] = field(default_factory=set)
    pending: tuple[str, str] | None = None  # (session or "replace", config before the commit)
    bootflash: dict[str, str] = field(default_factory=dict)
    checkpoints: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if not self.running:
            self.running = INITIAL_CONFIG.format(name=self.name)
        self.startup = self.running

    # --- what the tests read ---------------------------------------------------------------

    def events(self, *kinds: str) -> list[str]:
        """Logged events (commit-timer, confirm, rollback, save, ...), optionally filtered."""
        return [kind for kind, _ in self.log if not kinds or kind in kinds]

    @property
    def changed(self) -> bool:
        return self.running != INITIAL_CONFIG.format(name=self.name)

    def record(self, kind: str, detail: str = "") -> None:
        self.log.append((kind, detail))

    # --- health ----------------------------------------------------------------------------

    def broken(self) -> bool:
        return self.fail_postcheck and self.pending is not None

    def peer_state(self, index: int) -> str:
        return "Active" if self.broken() and index == 0 else "Established"


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
        timer = re.fullmatch(r"commit timer (\d\d:\d\d:\d\d)", rest)
        if timer:
            device.pending = (name, device.running)
            device.running = _config_text(device.sessions.pop(name))
            device.completed_sessions.add(name)
            device.record("commit-timer", f"{name} {timer.group(1)}")
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
        if command == "show configuration sessions":
            return {"sessions": {name: {"state": "pending"} for name in device.sessions}}
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
        if command == "show ip bgp summary":
            peers = {address: {"peerState": device.peer_state(i), "asn": "65000"} for i, address in enumerate(device.neighbors)}
            return {"vrfs": {"default": {"routerId": "10.0.0.1", "asn": "65000", "peers": peers}}}
        if command == "show interfaces status":
            return {
                "interfaceStatuses": {name: {"linkStatus": "connected", "lineProtocolStatus": "up"} for name in device.fabric_interfaces}
            }
        if command == "show priority-flow-control":
            return {"interfaceStatuses": {name: {"enabled": True} for name in device.roce_interfaces}}
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
            candidate = _strip_config(self._file(match.group(1)))
            current = _strip_config(device.running)
            patch = [f"no {line.strip()}" for line in current if line not in candidate] + [
                line for line in candidate if line not in current
            ]
            body = "\n".join(patch) if patch else "Rollback Patch is Empty"
            return f"Collecting Running-Config\n#Generating Rollback Patch\n{body}\n"
        match = re.fullmatch(r"checkpoint file (\S+)", command)
        if match:
            device.checkpoints[match.group(1)] = device.running
            device.record("checkpoint", match.group(1))
            return ""
        match = re.fullmatch(r"configure replace bootflash:(\S+) commit-timeout (\d+)", command)
        if match:
            device.pending = ("replace", device.running)
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
            if match.group(1) not in device.checkpoints:
                raise CommandError(f"checkpoint {match.group(1)} does not exist")
            device.running = device.checkpoints[match.group(1)]
            device.pending = None
            device.record("rollback", match.group(1))
            return "Rollback completed successfully."
        if command == "copy running-config startup-config":
            device.startup = device.running
            device.record("save")
            return "Copy complete."
        if command == "show ip bgp summary":
            rows = [
                {"neighborid": address, "state": device.peer_state(i), "neighboras": "65000"} for i, address in enumerate(device.neighbors)
            ]
            neighbor_rows: Any = rows[0] if len(rows) == 1 else rows
            saf = {"ROW_saf": {"safi": "1", "TABLE_neighbor": {"ROW_neighbor": neighbor_rows}}}
            af = {"ROW_af": {"af-id": "1", "TABLE_saf": saf}}
            return {"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_af": af}}}
        if command == "show interface brief":
            return {"TABLE_interface": {"ROW_interface": [{"interface": name, "state": "up"} for name in device.fabric_interfaces]}}
        if command == "show interface priority-flow-control":
            return {"TABLE_entry": {"ROW_entry": [{"intf-name": name, "mode": "On", "oper": "On"} for name in device.roce_interfaces]}}
        raise CommandError(f"% Invalid command: {command}")

    def _file(self, name: str) -> str:
        if name not in self.device.bootflash:
            raise CommandError(f"bootflash:{name}: No such file or directory")
        return self.device.bootflash[name]


def _handler(device: StandinDevice) -> type[BaseHTTPRequestHandler]:
    eos, nxos = EosApi(device), NxosApi(device)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            with device.lock:
                if self.path == "/command-api":
                    reply = self._eos(body)
                elif self.path == "/ins":
                    reply = self._nxos(body)
                else:
                    self.send_error(404)
                    return
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
