"""deploy.yml / rollback.yml on EOS and NX-OS, end to end against STAND-IN device APIs.

The stand-ins (tests/standins/device_api.py) speak eAPI and NX-API over HTTP on 127.0.0.1 and
record what they are asked to do. They prove the playbooks' logic: order (canary spine, canary
leaf, batches), check mode changing nothing, commit timer + confirm, rollback on a failed
post-check, the rollout stopping before the next batch, --limit and tags. They do not prove
EOS or NX-OS CLI syntax: only a real device or a vendor VM can.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.standins.device_api import INITIAL_CONFIG, StandinDevice, StandinFabric
from tests.standins.runner import BIN, PlaybookRunner, marked_pids

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(BIN)) is None, reason="needs the deploy extra (ansible)")

FABRIC = """\
fabric: {name: lab1, description: deploy test fabric for the stand-in devices, transport: roce}
spines: {count: 2, model: arista-7060x6-64pe, platform: eos, name: "lab1-spine{index:02d}"}
leaves: {count: 2, model: cisco-n9k-9364d-gx2a, platform: nxos, name: "lab1-leaf{index:02d}"}
uplinks: {per_spine: 2, speed: 400G}
servers: {per_leaf: 1, ports_per_server: 4, speed: 400G}
addressing: {loopbacks: 10.20.0.0/24, fabric: 10.21.0.0/22, servers: 10.22.0.0/16, management: 192.168.20.0/24}
bgp: {spine_asn: 65000, leaf_asn: 65101}
"""


@dataclass
class Lab:
    build: Path
    fabric: StandinFabric
    runner: PlaybookRunner
    order: list[str]

    def device(self, name: str) -> StandinDevice:
        return self.fabric.devices[name]

    def run(self, playbook: str, *args: str) -> subprocess.CompletedProcess[str]:
        result = self.runner.run(playbook, *args)
        self.runner.stop_leftovers()
        return result


def _serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, threading.Thread]:
    """The HTTP server the NX-OS stand-ins pull configs from (`nxos_deploy_transfer: pull`)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "fabric.yml").write_text(FABRIC)
    build = tmp_path / "build" / "lab1"
    subprocess.run([str(BIN / "fabricgen"), "render", str(tmp_path / "inv"), "-o", str(build)], check=True, capture_output=True)
    fabric = StandinFabric()
    files_server, files_thread = _serve(build)
    order: list[str] = []
    overrides: dict[str, dict[str, object]] = {}
    hosts = yaml.safe_load((build / "ansible" / "hosts.yml").read_text())["all"]["children"]
    platform_of = {name: group for group in ("eos", "nxos") for name in hosts[group]["hosts"]}
    for name, platform in sorted(platform_of.items()):
        host_vars = yaml.safe_load((build / "ansible" / "host_vars" / f"{name}.yml").read_text())
        device = StandinDevice(
            name,
            platform,
            neighbors=[n["address"] for n in host_vars["fabricgen_bgp_neighbors"]],
            fabric_interfaces=host_vars["fabricgen_fabric_interfaces"],
            roce_interfaces=host_vars["fabricgen_roce_interfaces"],
        )
        device.record = _ordered(device, order)  # type: ignore[method-assign]
        port = fabric.add(device)
        overrides[name] = {"ansible_host": "127.0.0.1", "ansible_httpapi_port": port, "ansible_httpapi_use_ssl": False}
    standin_inventory = tmp_path / "standin.yml"
    standin_inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": overrides,
                    "vars": {
                        "nxos_deploy_transfer": "pull",
                        "nxos_deploy_pull_url": f"http://127.0.0.1:{files_server.server_address[1]}",
                        "eos_deploy_postcheck_retries": 1,
                        "eos_deploy_postcheck_delay": 0,
                        "nxos_deploy_postcheck_retries": 1,
                        "nxos_deploy_postcheck_delay": 0,
                    },
                }
            }
        )
    )
    env = {"FABRICGEN_NET_USER": "standin", "FABRICGEN_NET_PASSWORD": "standin", "FABRICGEN_CHANGE_ID": "CHG1"}
    runner = PlaybookRunner(tmp_path, [build / "ansible" / "hosts.yml", standin_inventory], env)
    try:
        yield Lab(build, fabric, runner, order)
    finally:
        runner.stop_leftovers()
        fabric.close()
        files_server.shutdown()
        files_server.server_close()
        files_thread.join(timeout=5)
        assert marked_pids(runner.marker) == [], "processes left behind"


def _ordered(device: StandinDevice, order: list[str]):  # type: ignore[no-untyped-def]
    original = device.record

    def record(kind: str, detail: str = "") -> None:
        original(kind, detail)
        if kind != "command":
            order.append(f"{device.name}:{kind}")

    return record


def _recap(output: str) -> dict[str, dict[str, int]]:
    recap = {}
    for match in re.finditer(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M):
        recap[match.group(1)] = {"ok": int(match.group(2)), "changed": int(match.group(3)), "failed": int(match.group(5))}
    return recap


SWITCHES = ["lab1-leaf01", "lab1-leaf02", "lab1-spine01", "lab1-spine02"]


def _fresh(device: StandinDevice) -> bool:
    return device.running == INITIAL_CONFIG.format(name=device.name)


def test_check_deploy_rerun_and_rollback(lab: Lab) -> None:
    # --check --diff: each device shows its own diff, nothing is committed, sessions are discarded.
    check = lab.run("deploy.yml", "--check", "--diff", "--limit", "lab1-spine01:lab1-leaf02")
    assert check.returncode == 0, check.stdout + check.stderr
    for name in ("lab1-spine01", "lab1-leaf02"):
        device = lab.device(name)
        assert _fresh(device), name
        assert device.events("commit-timer", "commit", "confirm", "checkpoint", "save") == [], name
        assert f"--- {name} running-config -> {name}.cfg" in check.stdout
    assert lab.device("lab1-spine01").events("discard") == ["discard"]
    assert _recap(check.stdout)["lab1-spine01"]["changed"] == 1  # "would change"
    lab.order.clear()

    # The push: canary spine, canary leaf, then the batches; commit timer -> confirm -> save.
    push = lab.run("deploy.yml", "--diff")
    assert push.returncode == 0, push.stdout + push.stderr
    timers = [entry.split(":")[0] for entry in lab.order if entry.endswith(":commit-timer")]
    assert timers == ["lab1-spine01", "lab1-leaf01", "lab1-spine02", "lab1-leaf02"]
    for name in SWITCHES:
        device = lab.device(name)
        expected = ["commit-timer", "confirm", "save"] if device.platform == "eos" else ["checkpoint", "commit-timer", "confirm", "save"]
        assert device.events("commit-timer", "confirm", "save", "checkpoint", "rollback") == expected, name
        assert not _fresh(device) and device.pending is None and device.startup == device.running
        # the pre-change running-config was backed up first, in running/ and in the change's archive
        assert (lab.build / "running" / f"{name}.cfg").read_text().rstrip() == INITIAL_CONFIG.format(name=name).rstrip()
        assert (lab.build / "backups" / "CHG1" / f"{name}.cfg").is_file()
    # post-checks asked for BGP, interfaces and PFC before the confirm
    spine = [detail for kind, detail in lab.device("lab1-spine01").log if kind == "command"]
    assert (
        spine.index("show ip bgp summary")
        < spine.index("show priority-flow-control")
        < max(i for i, c in enumerate(spine) if c.endswith(" commit"))
    )

    # A second run (one switch of each platform) changes nothing: no commit, changed=0 in the recap.
    before = {name: len(lab.device(name).events("commit-timer")) for name in SWITCHES}
    again = lab.run("deploy.yml", "--limit", "lab1-spine02:lab1-leaf02")
    assert again.returncode == 0, again.stdout + again.stderr
    assert {name: len(lab.device(name).events("commit-timer")) for name in SWITCHES} == before
    assert sorted(_recap(again.stdout)) == ["lab1-leaf02", "lab1-spine02"]
    assert all(host["changed"] == 0 for host in _recap(again.stdout).values()), again.stdout

    # rollback.yml --limit one switch restores it from running/ (the pre-change backup); the others stay.
    back = lab.run("rollback.yml", "--limit", "lab1-spine01:lab1-leaf01")
    assert back.returncode == 0, back.stdout + back.stderr
    for name in ("lab1-spine01", "lab1-leaf01"):
        device = lab.device(name)
        assert "stand-in initial config" not in device.running  # comments are not config
        assert "username admin privilege 15" in device.running and device.pending is None
    assert "username admin privilege 15" not in lab.device("lab1-spine02").running


def test_failed_postcheck_rolls_back_and_stops_the_rollout(lab: Lab) -> None:
    lab.device("lab1-spine02").fail_postcheck = True
    result = lab.run("deploy.yml")
    assert result.returncode != 0
    spine = lab.device("lab1-spine02")
    assert spine.events("commit-timer", "confirm", "rollback", "save") == ["commit-timer", "rollback"]
    assert _fresh(spine) and spine.pending is None
    assert "bgp: 10.21." in result.stdout and "(Active)" in result.stdout
    # the canaries went through; the next batch (leaf02) was never touched
    assert lab.device("lab1-spine01").events("confirm") == ["confirm"]
    assert lab.device("lab1-leaf01").events("confirm") == ["confirm"]
    assert lab.device("lab1-leaf02").log == []


def test_nxos_canary_failure_rolls_back_to_the_checkpoint_with_tags(lab: Lab) -> None:
    lab.device("lab1-leaf01").fail_postcheck = True
    result = lab.run("deploy.yml", "--tags", "leaves")
    assert result.returncode != 0
    leaf = lab.device("lab1-leaf01")
    assert leaf.events("checkpoint", "commit-timer", "confirm", "rollback", "save") == ["checkpoint", "commit-timer", "rollback"]
    assert _fresh(leaf)
    assert lab.device("lab1-leaf02").log == []  # the rollout stopped at the canary
    assert lab.device("lab1-spine01").log == [] and lab.device("lab1-spine02").log == []  # --tags leaves
