"""A small fabric of STAND-IN switches for the playbook tests (no lab): 2 EOS spines, 2 NX-OS
leaves, each a stand-in device API on 127.0.0.1 (tests/standins/device_api.py) whose BGP comes
from both ends' committed configs (tests/standins/routing.py), and an ansible-playbook runner
pointed at them. `standin_switches` renders the fabric, starts them and stops exactly what it
started; tests/lab_deploy.py backs the same stand-ins with a real FRR lab instead.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.standins.device_api import StandinClock, StandinDevice, StandinFabric
from tests.standins.routing import ConfigRouting
from tests.standins.runner import PlaybookRunner, controller_address, marked_pids, render

FABRIC = """\
fabric: {name: lab1, description: deploy test fabric for the stand-in devices, transport: roce}
spines: {count: 2, model: arista-7060x6-64pe, platform: eos, name: "lab1-spine{index:02d}"}
leaves: {count: 2, model: cisco-n9k-9364d-gx2a, platform: nxos, name: "lab1-leaf{index:02d}"}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 1, ports_per_server: 2, speed: 400G}
addressing: {loopbacks: 10.20.0.0/24, fabric: 10.21.0.0/22, servers: 10.22.0.0/16, management: 192.168.20.0/24}
bgp: {spine_asn: 65000, leaf_asn: 65101}
oversubscription: {during_change: false}  # two spines: one out leaves a leaf at 2:1
"""
SWITCHES = ["lab1-leaf01", "lab1-leaf02", "lab1-spine01", "lab1-spine02"]
SECRETS = ("secret 0 standin", "password 0 standin", "secret 0 factory", "password 0 factory", "Tq7-tacacs", "Sn9-community")


@dataclass
class Lab:
    build: Path
    stage: Path
    fabric: StandinFabric
    clock: StandinClock
    runner: PlaybookRunner
    order: list[str]

    def device(self, name: str) -> StandinDevice:
        return self.fabric.devices[name]

    def run(self, playbook: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        saved = dict(self.runner.env_extra)
        self.runner.env_extra.update(env or {})
        try:
            return self.runner.run(playbook, *args, timeout=1200)  # the CI machine may be loaded
        finally:
            self.runner.env_extra = saved
            self.runner.stop_leftovers()

    def commits(self) -> list[str]:
        return [entry.split(":")[0] for entry in self.order if entry.endswith(":commit-timer")]


def _serve(directory: Path) -> tuple[object, threading.Thread]:
    """The HTTP server the NX-OS stand-ins pull staged files from: it serves the stage folder
    only (never build/)."""
    import functools
    import http.server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def _ordered(device: StandinDevice, order: list[str]):  # type: ignore[no-untyped-def]
    original = device.record

    def record(kind: str, detail: str = "") -> None:
        original(kind, detail)
        if kind != "command":
            order.append(f"{device.name}:{kind}")

    return record


def _devices(build: Path, clock: StandinClock, routing: ConfigRouting, order: list[str]) -> list[StandinDevice]:
    hosts = yaml.safe_load((build / "ansible" / "hosts.yml").read_text())["all"]["children"]
    platform_of = {name: group for group in ("eos", "nxos") for name in (hosts.get(group) or {}).get("hosts") or {}}
    devices = []
    for name, platform in sorted(platform_of.items()):
        host_vars = yaml.safe_load((build / "ansible" / "host_vars" / f"{name}.yml").read_text())
        device = StandinDevice(
            name,
            platform,
            neighbors=[n["address"] for n in host_vars["fabricgen_bgp_neighbors"]],
            fabric_interfaces=host_vars["fabricgen_fabric_interfaces"],
            roce_interfaces=host_vars["fabricgen_roce_interfaces"],
            cabling=[(link["interface"], link["peer"], link["peer_interface"]) for link in host_vars["fabricgen_lldp_plan"]],
            clock=clock,
            routing=routing,
        )
        device.record = _ordered(device, order)  # type: ignore[method-assign]
        routing.devices[name] = device
        devices.append(device)
    return devices


@contextlib.contextmanager
def standin_switches(tmp_path: Path) -> Iterator[Lab]:
    """Render FABRIC into `tmp_path`, start one stand-in per switch and the file server the NX-OS
    stand-ins pull from, yield them with a runner; stop them all, and no process may be left."""
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "fabric.yml").write_text(FABRIC)
    build = tmp_path / "build" / "lab1"
    render(tmp_path / "inv", build)
    stage = tmp_path / "stage"
    stage.mkdir(mode=0o700)
    fabric, clock, routing, order = StandinFabric(), StandinClock(), ConfigRouting(), []  # type: ignore[var-annotated]
    files_server, files_thread = _serve(stage)
    overrides = {}
    for device in _devices(build, clock, routing, order):
        port = fabric.add(device)
        # ansible_port too: the persistent connection socket is keyed by host, port and user
        overrides[device.name] = {
            "ansible_host": "127.0.0.1",
            "ansible_port": port,
            "ansible_httpapi_port": port,
            "ansible_httpapi_use_ssl": False,
        }
    standin_inventory = tmp_path / "standin.yml"
    variables = {
        "nxos_deploy_transfer": "pull",
        "nxos_deploy_pull_url": f"http://127.0.0.1:{files_server.server_address[1]}",  # type: ignore[attr-defined]
        "fabricgen_stage_dir": str(stage),
        "eos_deploy_postcheck_retries": 2,
        "eos_deploy_postcheck_delay": 0,
        "nxos_deploy_postcheck_retries": 2,
        "nxos_deploy_postcheck_delay": 0,
        # where a real switch would see the push come from: the control-plane ACL is judged against it
        "fabricgen_controller_address": controller_address(tmp_path / "inv"),
    }
    # per host: inline host vars outrank the playbooks' group_vars (fabricgen_stage_dir is one)
    hosts = {name: {**host, **variables} for name, host in overrides.items()}
    standin_inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    env = {"FABRICGEN_NET_USER": "standin", "FABRICGEN_NET_PASSWORD": "standin", "FABRICGEN_CHANGE_ID": "CHG1"}
    runner = PlaybookRunner(tmp_path, [build / "ansible" / "hosts.yml", standin_inventory], env)
    try:
        yield Lab(build, stage, fabric, clock, runner, order)
    finally:
        runner.stop_leftovers()
        fabric.close()
        files_server.shutdown()  # type: ignore[attr-defined]
        files_server.server_close()  # type: ignore[attr-defined]
        files_thread.join(timeout=5)
        assert marked_pids(runner.marker) == [], "processes left behind"


@dataclass
class Day0Fabric:
    """One stand-in fabric shared by a module's scenarios that start from day 0 (each a test, run
    in file order on it), and which switches are known to run the day-0 config pushed in this
    module. A scenario asks for the switches it needs on day 0 (`start`); they are pushed only
    where not known to be (a scenario run alone with -k, or after one that failed), so each still
    starts where it was written to start, and the module pays for day 0 once."""

    lab: Lab
    on_day0: set[str] = field(default_factory=set)

    def start(self, *needed: str) -> Lab:
        """The lab with `needed` on day 0 (pushed here if not known to be); what it runs after
        the scenario is unknown until the scenario says (`leaves`)."""
        missing = sorted(set(needed) - self.on_day0)
        if missing:
            limit = ["--limit", ":".join(missing)] if len(missing) < len(SWITCHES) else []
            pushed = self.lab.run("deploy.yml", *limit)
            assert pushed.returncode == 0, pushed.stdout[-4000:] + pushed.stderr[-2000:]
        self.on_day0 = set()
        return self.lab

    def leaves(self, *on_day0: str) -> None:
        """What a scenario that passed leaves on day 0, for the next one."""
        self.on_day0 = set(on_day0)
