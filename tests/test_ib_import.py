"""`fabricgen ib import-guids`: real GUIDs from ibnetdiscover output into the inventory, matched
by node description, comments kept; the imported inventory still verifies."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.infiniband.guids import candidates
from fabricgen.infiniband.verify import Options, verify
from fabricgen.pipeline import load_and_plan
from tests.ib_helpers import HGX, HGX_DISCOVERY, copy_example, needs_sim, plan_and_files, write_inventory


def real_looking(net: str) -> str:
    """The planned topology as a real fabric might report it: other GUIDs, NVIDIA-style switch descriptions."""
    net = net.replace("0x02fab000", "0xb8cef600")
    return re.sub(r'# "(ib1-(?:spine|leaf)\d+)"', r'# "MF0;\1:MQM8790/U1"', net)


def test_candidates() -> None:
    assert candidates("MF0;ib1-leaf01:MQM8790/U1") == ["MF0;ib1-leaf01:MQM8790/U1", "MF0;ib1-leaf01:MQM8790/U1", "ib1-leaf01"]
    assert candidates("gpu0101 mlx5_0") == ["gpu0101 mlx5_0", "gpu0101"]


def test_import_writes_guids_and_keeps_comments(tmp_path: Path) -> None:
    inventory = copy_example(tmp_path)
    _, files = plan_and_files(inventory)
    discovered = tmp_path / "fabric.ibnet"
    text = real_looking(files["ib/ibsim.net"])
    # One switch the plan does not know, and one planned host missing.
    text = text.replace('Hca\t1 "ib1-gpu0818/mlx5_0"\t# "ib1-gpu0818 mlx5_0"', 'Hca\t1 "ib1-gpu0818/mlx5_0"\t# "stray-host mlx5_0"')
    discovered.write_text(text)
    before = inventory.read_text()
    result = CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(discovered)])
    assert result.exit_code == 1, result.output  # one planned host was not discovered
    assert "not discovered: ib1-gpu0818" in result.output
    assert "not in the plan: ca 'stray-host mlx5_0'" in result.output
    after = inventory.read_text()
    assert after.startswith(before.rstrip("\n"))  # the user's text and comments are untouched
    assert "# one HCA port per GPU; ports 19-20 stay free for SM/storage hosts" in after
    assert 'ib1-leaf01: {node: "0xb8cef60020000010"}' in after
    assert 'ib1-gpu0101: {node: "0xb8cef60030008020", ports: ["0xb8cef60030008021"]}' in after
    checked = load_and_plan(inventory)
    plan = checked.plan
    assert plan.device("ib1-spine01").guid == "0xb8cef60010000010"
    assert not any(d.guid_is_placeholder for d in plan.devices)
    assert plan.infiniband is not None
    assert plan.infiniband.placeholder_hosts == ("ib1-gpu0818",)
    assert any("GUIDs of 1 server HCA node(s) are placeholders" in d.message for d in checked.warnings)
    again = CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(discovered)])
    assert "changed 0" in again.output
    assert inventory.read_text() == after


def test_import_rejects_non_ibnetdiscover_input(tmp_path: Path) -> None:
    inventory = copy_example(tmp_path)
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    result = CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(junk)])
    assert result.exit_code == 2
    assert "no switch or HCA records" in result.output


@needs_sim
def test_imported_guids_verify(tmp_path: Path) -> None:
    inventory = copy_example(tmp_path)
    _, files = plan_and_files(inventory)
    discovered = tmp_path / "fabric.ibnet"
    discovered.write_text(real_looking(files["ib/ibsim.net"]))
    assert CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(discovered)]).exit_code == 0
    plan, files = plan_and_files(inventory)
    assert plan.infiniband is not None
    assert plan.infiniband.root_guids[0] == "0xb8cef60010000010"
    report = verify(plan, files, Options(pairs=8, sample=4))
    assert report.ok, report.format()


def connectx_style(ibnetdiscover: str) -> str:
    """ibnetdiscover output as a real fabric prints it: port 1 GUID = node GUID, other GUID prefix."""
    out, node_guid = [], ""
    for line in ibnetdiscover.splitlines():
        match = re.match(r"caguid=0x([0-9a-f]+)", line)
        if match:
            node_guid = match.group(1)
        elif line.startswith("[1](") and node_guid:
            line = re.sub(r"^\[1\]\([0-9a-f]+\)", f"[1]({node_guid})", line)
        out.append(line)
    return real_looking("\n".join(out).replace("2fab000", "b8cef60")) + "\n"


@needs_sim
def test_verify_against_discovered_fabric_with_real_style_guids(tmp_path: Path) -> None:
    runner = CliRunner()
    inventory = copy_example(tmp_path)
    keep = tmp_path / "run"
    result = runner.invoke(main, ["ib", "verify", str(inventory), "--pairs", "2", "--sample", "2", "--keep", str(keep)])
    assert result.exit_code == 0, result.output
    discovered = tmp_path / "fabric.ibnet"
    discovered.write_text(connectx_style((keep / "ibnetdiscover.out").read_text()))
    assert "MF0;ib1-spine01:MQM8790/U1" in discovered.read_text()
    result = runner.invoke(main, ["ib", "import-guids", str(inventory), str(discovered)])
    assert result.exit_code == 0, result.output
    plan = load_and_plan(inventory).plan
    gpu = plan.servers[0]
    assert gpu.nics[0].port_guid == gpu.node_guid  # as a ConnectX reports it
    result = runner.invoke(main, ["ib", "verify", str(inventory), "--net", str(discovered), "--pairs", "8", "--sample", "4"])
    assert result.exit_code == 0, result.output
    assert "discovered 12/12 switches, 146/146 HCAs, 306/306 cables" in result.output


def _discovered_adapters() -> dict[str, str]:
    """ "<host> mlx5_N" -> node GUID, read straight from the ibnetdiscover file."""
    found = re.findall(r'^caguid=0x([0-9a-f]+)\nCa\t1 "H-[0-9a-f]+"\t\t# "([^"]+)"', HGX_DISCOVERY.read_text(), re.M)
    return {description: f"0x{int(guid, 16):016x}" for guid, description in found}


def test_import_gives_every_adapter_its_own_node_guid(tmp_path: Path) -> None:
    """8 single-port CAs per server, each its own node GUID (port GUID = node GUID, as ConnectX)."""
    adapters = _discovered_adapters()
    assert len(adapters) == 6 * 8 + 2
    inventory = write_inventory(tmp_path, HGX)
    result = CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(HGX_DISCOVERY)])
    assert result.exit_code == 0, result.output
    checked = load_and_plan(inventory)
    assert not [d for d in checked.warnings if "placeholders" in d.message]
    for server in checked.plan.servers:
        assert [(n.node_guid, n.port_guid) for n in server.nics] == [
            (adapters[f"{server.name} mlx5_{k}"], adapters[f"{server.name} mlx5_{k}"]) for k in range(8)
        ]
    _, files = plan_and_files(inventory)
    name_map = files["opensm/ibh-sm1/node-name-map"]
    assert f'{adapters["ibh-gpu23 mlx5_7"]} "ibh-gpu23 mlx5_7"' in name_map
    assert sum(1 for line in name_map.splitlines() if " mlx5_" in line) == 50
    assert CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(HGX_DISCOVERY)]).output.count("changed 0") == 1


@needs_sim
def test_verify_against_a_discovery_of_eight_adapters_per_server(tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, HGX)
    assert CliRunner().invoke(main, ["ib", "import-guids", str(inventory), str(HGX_DISCOVERY)]).exit_code == 0
    result = CliRunner().invoke(main, ["ib", "verify", str(inventory), "--net", str(HGX_DISCOVERY), "--pairs", "8", "--no-standby"])
    assert result.exit_code == 0, result.output
    assert "discovered 4/4 switches, 50/50 HCAs, 98/98 cables" in result.output
    assert "P_Key tables of 50 HCA port(s) read back" in result.output
