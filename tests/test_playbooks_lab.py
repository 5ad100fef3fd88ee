"""deploy.yml against STAND-IN device APIs whose routing state is the real lab (root only).

The stand-ins (tests/standins/device_api.py) hand every committed config's routing part, as the
vendors' parsers read it, to that switch's FRR in `fabricgen lab` (FRR + lldpd in network
namespaces; tests/standins/lab_routing.py), and answer `show ip bgp summary`, `show lldp
neighbors`, `show interfaces` from FRR, lldpd and the kernel. So a pushed config with a wrong
remote-as keeps BGP down in FRR, the canary's post-check sees it and the switch rolls back.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.lab_helpers import leftovers, needs_lab
from tests.standins.device_api import StandinClock, StandinFabric
from tests.standins.runner import BIN, PlaybookRunner, marked_pids
from tests.test_playbooks_switches import FABRIC, Lab, _devices, _serve

pytestmark = [needs_lab, pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="needs the deploy extra (ansible)")]


@pytest.fixture
def lab_backed(tmp_path: Path) -> Iterator[tuple[Lab, object]]:
    from fabricgen.lab.lab import Lab as FrrLab
    from fabricgen.lab.topology import lab_topology
    from fabricgen.pipeline import load_and_plan
    from tests.standins.lab_routing import LabRouting

    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "fabric.yml").write_text(FABRIC)
    build = tmp_path / "build" / "lab1"
    subprocess.run([str(BIN / "fabricgen"), "render", str(tmp_path / "inv"), "-o", str(build)], check=True, capture_output=True)
    plan = load_and_plan(tmp_path / "inv").plan
    topology = lab_topology(plan)
    stage = tmp_path / "stage"
    stage.mkdir(mode=0o700)
    with FrrLab(topology) as frr:
        routing = LabRouting(frr, topology)
        fabric, clock, order = StandinFabric(), StandinClock(), []  # type: ignore[var-annotated]
        files_server, files_thread = _serve(stage)
        hosts = {}
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
                "eos_deploy_postcheck_retries": 10,
                "eos_deploy_postcheck_delay": 3,
                "nxos_deploy_postcheck_retries": 10,
                "nxos_deploy_postcheck_delay": 3,
            }
        (tmp_path / "standin.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
        env = {"FABRICGEN_NET_USER": "standin", "FABRICGEN_NET_PASSWORD": "standin", "FABRICGEN_CHANGE_ID": "LAB1"}
        runner = PlaybookRunner(tmp_path, [build / "ansible" / "hosts.yml", tmp_path / "standin.yml"], env)
        try:
            yield Lab(build, stage, fabric, clock, runner, order), frr
        finally:
            runner.stop_leftovers()
            fabric.close()
            files_server.shutdown()  # type: ignore[attr-defined]
            files_server.server_close()  # type: ignore[attr-defined]
            files_thread.join(timeout=5)
            assert marked_pids(runner.marker) == [], "processes left behind"
    assert leftovers(plan.name) == []


def test_wrong_remote_as_fails_the_canary_with_bgp_state_from_frr_and_rolls_back(lab_backed: tuple[Lab, object]) -> None:
    lab, frr = lab_backed
    leaf = lab.build / "configs" / "lab1-leaf01.cfg"
    leaf.write_text(leaf.read_text().replace("remote-as 65000", "remote-as 65009"))
    result = lab.run("deploy.yml")
    assert result.returncode != 0
    assert lab.commits() == ["lab1-spine01", "lab1-leaf01"]
    # FRR's own state of the session, not a planned value: never Established with remote-as 65009
    states = re.findall(r"\(lab1-spine01, already on the new config\) is (\w+)", result.stdout)
    assert states and "Established" not in states, result.stdout[-3000:]
    assert "rolled back now and verified" in result.stdout
    device = lab.device("lab1-leaf01")
    assert not device.changed and device.pending is None
    assert frr.bgp_summary("lab1-leaf01").get("peers", {}) == {}  # type: ignore[attr-defined]  # FRR back on the old config
    assert lab.device("lab1-leaf02").events("commit-timer") == [] and lab.device("lab1-spine02").events("commit-timer") == []
