"""One lab-backed fabric of STAND-IN devices for the end-to-end deploy tests (root only).

A real lab (`fabricgen lab`: FRR + lldpd in network namespaces) runs the fabric's routing; each
stand-in device (tests/standins/device_api.py) hands the routing part of every config it
commits, as the vendors' own parsers read it, to its switch's FRR (tests/standins/lab_routing.py)
and answers `show ip bgp summary`, `show lldp neighbors`, `show interfaces` from FRR, lldpd and
the kernel. deploy.yml runs against the stand-ins with ansible-playbook.

One lab serves a whole test module (the scenarios run in sequence on it): building it is the
costly part. `reset` puts every stand-in back on its pre-fabricgen config between scenarios.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fabricgen.lab.lab import Lab as FrrLab
from fabricgen.lab.report import Check
from fabricgen.lab.topology import LabTopology, lab_topology
from fabricgen.lab.verify import poll
from fabricgen.pipeline import load_and_plan
from tests.lab_helpers import leftovers, own_lab
from tests.standin_switches import Lab, _devices, _serve
from tests.standins.device_api import StandinClock, StandinDevice, StandinFabric
from tests.standins.lab_routing import LabRouting
from tests.standins.runner import PlaybookRunner, controller_address, marked_pids, render

POSTCHECK = {"retries": 20, "delay": 3}
"""Post-check polls on the lab: FRR needs a few seconds to bring a restarted session up, more
beside a CPU hog or another lab; a check that passes stops polling at once, so only a scenario
whose post-check must fail waits the whole minute."""


@dataclass
class LabDeploy:
    """The stand-ins (`deploy`), the real lab behind them (`frr`) and the inventory folder."""

    deploy: Lab
    frr: FrrLab
    topology: LabTopology
    inventory: Path

    def render(self, fabric_yaml: str) -> LabTopology:
        """Write the inventory and render it into the same build folder; the new plan's topology."""
        (self.inventory / "fabric.yml").write_text(fabric_yaml)
        render(self.inventory, self.deploy.build)
        return lab_topology(own_lab(load_and_plan(self.inventory).plan))

    def devices(self) -> dict[str, StandinDevice]:
        return self.deploy.fabric.devices

    def reset(self) -> None:
        """Every stand-in back on its pre-fabricgen config (FRR follows), logs and backups cleared."""
        for device in self.devices().values():
            with device.lock:
                device.running = device.startup = device.initial
                device.pending = None
                device.sessions.clear()
                device.completed_sessions.clear()
                device.bootflash.clear()
                device.checkpoints.clear()
                device.log.clear()
            device.sync_routing()
        self.deploy.order.clear()
        shutil.rmtree(self.deploy.build / "deployed", ignore_errors=True)
        shutil.rmtree(self.deploy.runner.backups, ignore_errors=True)

    def sessions(self, switch: str) -> dict[str, tuple[str, str]]:
        """FRR's own view of `switch`'s BGP sessions: {peer: (state, remote AS)}."""
        summary = self.frr.bgp_summary(switch)
        peers: dict[str, Any] = summary.get("peers", {}) if isinstance(summary, dict) else {}
        return {address: (str(peer.get("state")), str(peer.get("remoteAs"))) for address, peer in peers.items()}


def wait_for(check: Callable[[], Check], timeout: float = 120) -> Check:
    """Poll a lab check until it passes (FRR converging after restarts) or the deadline passes."""
    return poll(check, timeout, interval=2)


@contextlib.contextmanager
def lab_deploy(workdir: Path, fabric_yaml: str, name: str) -> Iterator[LabDeploy]:
    """Render `fabric_yaml`, start its lab (under this test run's own fabric name) and one
    stand-in per switch, yield; tear down what was started, in reverse order."""
    inventory = workdir / "inv"
    inventory.mkdir()
    (inventory / "fabric.yml").write_text(fabric_yaml)
    build = workdir / "build" / name
    render(inventory, build)
    topology = lab_topology(own_lab(load_and_plan(inventory).plan))
    stage = workdir / "stage"
    stage.mkdir(mode=0o700)
    with FrrLab(topology) as frr, contextlib.ExitStack() as started:
        routing = LabRouting(frr, topology)
        fabric, clock, order = StandinFabric(), StandinClock(), []  # type: ignore[var-annotated]
        started.callback(fabric.close)
        files_server, files_thread = _serve(stage)
        started.callback(files_thread.join, timeout=5)
        started.callback(files_server.server_close)  # type: ignore[attr-defined]
        started.callback(files_server.shutdown)  # type: ignore[attr-defined]
        hosts, controller = {}, controller_address(inventory)
        for device in _devices(build, clock, routing, order):  # type: ignore[arg-type]
            device.sync_routing()  # FRR starts from the switch's pre-change config: no BGP yet
            port = fabric.add(device)
            hosts[device.name] = {
                "ansible_host": "127.0.0.1",
                "ansible_port": port,
                "ansible_httpapi_port": port,
                "ansible_httpapi_use_ssl": False,
                "nxos_deploy_transfer": "pull",
                "nxos_deploy_pull_url": f"http://127.0.0.1:{files_server.server_address[1]}",  # type: ignore[attr-defined]
                "fabricgen_stage_dir": str(stage),
                "fabricgen_controller_address": controller,  # where a real switch would see the push come from
                **{f"{p}_deploy_postcheck_{k}": v for p in ("eos", "nxos") for k, v in POSTCHECK.items()},
            }
        (workdir / "standin.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
        env = {"FABRICGEN_NET_USER": "standin", "FABRICGEN_NET_PASSWORD": "standin", "FABRICGEN_CHANGE_ID": "LAB1"}
        runner = PlaybookRunner(workdir, [build / "ansible" / "hosts.yml", workdir / "standin.yml"], env)
        started.callback(_no_processes_left, runner)
        yield LabDeploy(Lab(build, stage, fabric, clock, runner, order), frr, topology, inventory)
    assert leftovers(topology.fabric) == []


def _no_processes_left(runner: PlaybookRunner) -> None:
    runner.stop_leftovers()
    assert marked_pids(runner.marker) == [], "processes left behind"
