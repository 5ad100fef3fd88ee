"""The platform registry: one folder per switch OS, inheritance with `parent:`, and what is
generated from it (the schema's platform enum). A toy platform that inherits from EOS is added
as one folder and a fabric renders with it."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabricgen import platforms as registry
from fabricgen.core import catalog
from fabricgen.core.diagnostics import FabricError
from fabricgen.diffing import running
from fabricgen.inventory import schema
from fabricgen.inventory.schemafile import SCHEMA_FILE, published, read_published, write
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.push import ownership
from fabricgen.render.context import RenderContext
from tests.conftest import ROOT

TINY_EOS = ROOT / "tests" / "goldens" / "inventories" / "tiny-eos" / "fabric.yml"
clab_artifact = importlib.import_module("fabricgen.artifacts.lab")  # the package exports a producer of that name
PLATFORM_NAMES = re.compile(r"\b(eos|nxos|sonic)\b")


def _forget() -> None:
    """Every cache that holds what the registry said."""
    registry.reload()
    for cached in (
        catalog.platforms,
        schema.fabric_schema,
        schema._validator,
        clab_artifact.lab_platforms,
        running.hier_platforms,
        ownership._table,
    ):
        cached.cache_clear()


@pytest.fixture
def extra_platforms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder of platform folders the registry reads besides fabricgen/platforms/."""
    folder = tmp_path / "platforms"
    folder.mkdir()
    monkeypatch.setattr(registry, "FOLDERS", [*registry.FOLDERS, folder])
    _forget()
    yield folder
    monkeypatch.undo()
    _forget()


def _platform(folder: Path, name: str, text: str) -> None:
    (folder / name).mkdir()
    (folder / name / "platform.yml").write_text(text, encoding="utf-8")


# --- the registry ------------------------------------------------------------------------------


def test_the_registry_lists_one_folder_per_platform() -> None:
    folders = {p.name for p in registry.HERE.iterdir() if (p / "platform.yml").is_file()}
    assert folders == {"eos", "nxos", "opensm", "frr", "sonic"}
    assert registry.inventory_platforms() == ["eos", "infiniband", "nxos", "sonic"]  # frr is the lab's, not an inventory's
    assert registry.template_folder("infiniband") == "opensm" and registry.template_folder("eos") == "eos"


def test_each_platform_has_a_template_folder_and_its_collection_in_requirements() -> None:
    requirements = (ROOT / "requirements.yml").read_text(encoding="utf-8")
    for name, data in registry.registry().items():
        assert (ROOT / "templates" / data["templates"]).is_dir(), name
        collection = data.get("ansible", {}).get("collection")
        if collection:
            assert f"- name: {collection}\n" in requirements, name


def test_a_child_inherits_and_overrides(extra_platforms: Path) -> None:
    _platform(extra_platforms, "toy", "parent: eos\nfacts:\n  title: Toy OS\n  names: {route_map: RM-TOY}\nhier_config: GENERIC\n")
    toy, eos = registry.entry("toy"), registry.entry("eos")
    assert toy["lineage"] == ("toy", "eos") and toy["folder"] == str(extra_platforms / "toy")
    assert toy["facts"]["title"] == "Toy OS" and toy["facts"]["mtu_max"] == eos["facts"]["mtu_max"] == 9214
    assert toy["facts"]["names"] == {**eos["facts"]["names"], "route_map": "RM-TOY"}
    assert toy["hier_config"] == "GENERIC" and toy["templates"] == "eos"
    assert registry.ownership_tables()["toy"] == registry.ownership_tables()["eos"]
    assert "toy" in registry.inventory_platforms()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"toy": "parent: nonesuch\n"}, r"toy/platform.yml: parent: no platform 'nonesuch'"),
        ({"a": "parent: b\n", "b": "parent: a\n"}, r"/b/platform.yml: parent: a -> b -> a is a circle"),
        ({"twin": "name: eos\n"}, r"twin/platform.yml: platform 'eos' is defined twice"),
    ],
)
def test_a_broken_lineage_is_refused_with_its_file(extra_platforms: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        _platform(extra_platforms, name, text)
    with pytest.raises(ValueError, match=message):
        registry.registry()


# --- generated from the registry ----------------------------------------------------------------


def _platform_enums(node: Any) -> list[list[str]]:
    """Every enum in the schema that holds a platform name."""
    if isinstance(node, list):
        return [found for item in node for found in _platform_enums(item)]
    if not isinstance(node, dict):
        return []
    own = [node["enum"]] if isinstance(node.get("enum"), list) and any(v in ("eos", "nxos") for v in node["enum"]) else []
    return own + [found for value in node.values() for found in _platform_enums(value)]


def test_the_published_schema_is_the_generated_one() -> None:
    """Regenerate with `python -m fabricgen.inventory.schemafile` after adding a platform. The
    data is compared, not the text: a hand edit may keep a short list on one line."""
    document = read_published()
    assert document == published(document)
    assert (ROOT / "schemas" / "fabric.schema.json").read_text(encoding="utf-8") == SCHEMA_FILE.read_text(encoding="utf-8")


def test_the_schema_names_each_platform_once() -> None:
    text = (ROOT / "schemas" / "fabric.schema.json").read_text(encoding="utf-8")
    assert sorted(PLATFORM_NAMES.findall(text)) == ["eos", "nxos", "sonic"]  # `infiniband` is also a transport and a cable kind
    assert _platform_enums(json.loads(text)) == [["eos", "infiniband", "nxos", "sonic"]]
    checked = schema.fabric_schema()  # what the checks read: the seven places the enum applies
    assert len(_platform_enums(checked)) == 7 and "$defs" not in checked


def test_the_tiers_share_their_definitions() -> None:
    tiers = read_published()["properties"]
    for tier in ("spines", "leaves", "superspines"):
        properties = tiers[tier]["properties"]
        assert properties["platform"] == {"$ref": "#/$defs/tier_platform"}
        assert properties["model"] == {"$ref": "#/$defs/switch_model"}
        assert properties["count"]["$ref"] == "#/$defs/tier_count"
    assert tiers["spines"]["properties"]["nodes"] == tiers["leaves"]["properties"]["nodes"] == {"$ref": "#/$defs/pod_nodes"}


def test_a_stale_schema_fails_the_generator_check(extra_platforms: Path, tmp_path: Path) -> None:
    """The check above can fail: with one more platform folder the file is stale until rewritten."""
    _platform(extra_platforms, "toy", "parent: eos\n")
    document = read_published()
    assert published(document)["$defs"]["platform"]["enum"] == ["eos", "infiniband", "nxos", "sonic", "toy"]
    assert document != published(document)
    written = tmp_path / "fabric.schema.json"
    written.write_text(SCHEMA_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    assert write(written) and json.loads(written.read_text(encoding="utf-8")) == published(document)
    assert not write(written)


# --- a toy platform, end to end ------------------------------------------------------------------


def _toy_inventory(folder: Path, platform: str) -> Path:
    """tiny-eos with its spines on `platform` (their model, from the inventory, runs it)."""
    text = TINY_EOS.read_text(encoding="utf-8")
    text = text.replace("    platforms: [eos]\n", f"    platforms: [{platform}]\n").replace(
        '  platform: eos\n  name: "teos-spine', f'  platform: {platform}\n  name: "teos-spine'
    )
    target = folder / platform
    target.mkdir()
    (target / "fabric.yml").write_text(text, encoding="utf-8")
    return target


def test_a_toy_platform_inheriting_from_eos_renders_a_fabric(extra_platforms: Path, tmp_path: Path) -> None:
    """One folder, nothing else: the toy's spines render with EOS's templates and the toy's own
    facts, and every other tool (Ansible inventory, push ownership, containerlab) knows it."""
    _platform(
        extra_platforms, "toy", "parent: eos\nfacts:\n  title: Toy OS\n  management_interface: Management0\n  names: {route_map: RM-TOY}\n"
    )
    inventories = tmp_path / "inventories"
    inventories.mkdir()
    files = {}
    for platform in ("eos", "toy"):
        plan = load_and_plan(_toy_inventory(inventories, platform)).plan
        files[platform] = render_files(plan, RenderContext())
    spine_eos, spine_toy = files["eos"]["configs/teos-spine1.cfg"], files["toy"]["configs/teos-spine1.cfg"]
    assert "RM-ADVERTISE" in spine_eos and "interface Management1" in spine_eos
    assert spine_toy == spine_eos.replace("RM-ADVERTISE", "RM-TOY").replace("Management1", "Management0")
    assert files["toy"]["configs/teos-leaf1.cfg"] == files["eos"]["configs/teos-leaf1.cfg"]
    assert "  toy:\n      hosts:\n        teos-spine1:" in files["toy"]["ansible/hosts.yml"]
    assert ownership.ownership("toy").owned == ownership.ownership("eos").owned
    assert clab_artifact.lab_platforms()["toy"]["kind"] == "arista_ceos"


def test_an_unknown_platform_is_refused_at_its_key(tmp_path: Path) -> None:
    """Without the folder, `platform: toy` is a schema error at its key (the enum is the registry's)."""
    with pytest.raises(FabricError) as caught:
        load_and_plan(_toy_inventory(tmp_path, "toy"))
    messages = [d.format() for d in caught.value.diagnostics]
    assert any("spines.platform: expected one of eos, infiniband, nxos, sonic; got 'toy'" in m for m in messages), messages


# --- Ansible group variables from the registry ----------------------------------------------------


def _vars_plugin() -> Any:
    pytest.importorskip("ansible")
    spec = importlib.util.spec_from_file_location(
        "fabricgen_platforms_vars", ROOT / "playbooks" / "vars_plugins" / "fabricgen_platforms.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _group_vars(group: str, path: Path) -> dict[str, Any]:
    from ansible.inventory.group import Group

    found: dict[str, Any] = _vars_plugin().VarsModule().get_vars(None, str(path), [Group(group), Group("spines")])
    return found


def test_each_platform_group_gets_its_connection_and_role() -> None:
    """What playbooks/group_vars/eos.yml and nxos.yml said, now from the platform folders."""
    eos, nxos = _group_vars("eos", ROOT / "playbooks"), _group_vars("nxos", ROOT / "playbooks")
    assert (eos["fabricgen_deploy_role"], eos["ansible_connection"], eos["ansible_network_os"]) == (
        "eos_deploy",
        "ansible.netcommon.httpapi",
        "arista.eos.eos",
    )
    assert (eos["ansible_become"], eos["ansible_become_method"], eos["ansible_httpapi_validate_certs"]) == (True, "enable", True)
    assert "FABRICGEN_EOS_OVERLAY" in eos["fabricgen_overlay"]
    from ansible.template import is_trusted_as_template

    assert is_trusted_as_template(eos["fabricgen_overlay"])  # templated, as a group_vars file's value is
    assert (nxos["fabricgen_deploy_role"], nxos["ansible_network_os"], nxos["ansible_httpapi_use_ssl"]) == (
        "nxos_deploy",
        "cisco.nxos.nxos",
        True,
    )
    assert "ansible_become" not in nxos and "FABRICGEN_NXOS_OVERLAY" in nxos["fabricgen_overlay"]
    assert _group_vars("eos", ROOT / "inventories") == {}  # only at the playbooks' group_vars precedence


def test_a_child_platform_group_gets_its_parents_variables(extra_platforms: Path) -> None:
    _platform(extra_platforms, "toy", "parent: eos\nfacts:\n  ansible_network_os: toy.os.os\n")
    toy = _group_vars("toy", ROOT / "playbooks")
    assert toy == {**_group_vars("eos", ROOT / "playbooks"), "ansible_network_os": "toy.os.os"}


def test_ansible_reads_the_group_variables_through_the_plugin(tmp_path: Path) -> None:
    """ansible-inventory with the playbooks folder: the rendered inventory's hosts get their
    platform's variables (the plugin is found and run by Ansible itself)."""
    binary = Path(sys.executable).parent / "ansible-inventory"
    if not binary.exists():
        pytest.skip("needs the deploy extra (ansible)")
    plan = load_and_plan(ROOT / "inventories" / "pod-mixed").plan
    hosts = tmp_path / "hosts.yml"
    hosts.write_text(render_files(plan, RenderContext())["ansible/hosts.yml"], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update({"ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_HOME": str(tmp_path / "ansible-home")})
    seen = {}
    for host in ("pod2-spine01", "pod2-leaf01"):  # an EOS spine and an NX-OS leaf
        command = [str(binary), "-i", str(hosts), "--playbook-dir", str(ROOT / "playbooks"), "--host", host]
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert result.returncode == 0, result.stderr
        seen[host] = json.loads(result.stdout)
    assert (seen["pod2-spine01"]["fabricgen_deploy_role"], seen["pod2-spine01"]["ansible_connection"]) == (
        "eos_deploy",
        "ansible.netcommon.httpapi",
    )
    assert (seen["pod2-leaf01"]["fabricgen_deploy_role"], seen["pod2-leaf01"]["ansible_network_os"]) == ("nxos_deploy", "cisco.nxos.nxos")


# --- device drivers --------------------------------------------------------------------------------

SHOW = ROOT / "tests" / "data" / "show"


def _show(name: str) -> Any:
    return json.loads((SHOW / name).read_text(encoding="utf-8"))


def test_each_pushed_platform_has_a_driver_and_a_child_inherits_it(extra_platforms: Path) -> None:
    _platform(extra_platforms, "toy", "parent: eos\n")
    found = registry.drivers()
    assert sorted(found) == ["eos", "nxos", "toy"]  # infiniband and frr: nothing is pushed to a switch
    assert found["toy"] is found["eos"]
    assert registry.driver("cisco.nxos.nxos") is found["nxos"]
    with pytest.raises(KeyError, match="no device driver for platform 'infiniband'"):
        registry.driver("infiniband")


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_a_driver_reads_its_platforms_captured_bgp_summary(platform: str) -> None:
    """Expected values read from the fixture's JSON here, by the shape its README documents."""
    raw = _show(f"{platform}_show_ip_bgp_summary.json")
    if platform == "eos":
        peers = {a: (p["peerState"], int(p["prefixReceived"])) for vrf in raw["vrfs"].values() for a, p in vrf["peers"].items()}
    else:
        saf = raw["TABLE_vrf"]["ROW_vrf"]["TABLE_af"]["ROW_af"]["TABLE_saf"]["ROW_saf"]
        peers = {r["neighborid"]: (r["state"], int(r["prefixreceived"])) for r in saf["TABLE_neighbor"]["ROW_neighbor"]}
    sessions = registry.driver(platform).bgp_sessions(raw)
    assert peers and {a: (s.state, s.prefixes) for a, s in sessions.items()} == peers
    assert registry.driver(platform).bgp_sessions({"result": []}) == {}  # an unknown shape reads as nothing


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_a_driver_reads_its_platforms_captured_lldp_neighbors(platform: str) -> None:
    neighbors = registry.driver(platform).lldp_neighbors(_show(f"{platform}_show_lldp_neighbors.json"))
    first = ("ethernet1/1", ("lab1-leaf01", "ethernet1/1")) if platform == "eos" else ("ethernet1/1", ("lab1-spine01", "ethernet1/1"))
    assert neighbors[first[0]] == first[1]
    assert "ethernet1/2" in neighbors or "ethernet2/1" in neighbors


def test_the_other_platforms_driver_reads_nothing_of_a_shape() -> None:
    """Baseline picks the host's driver: an NX-OS output read as EOS gives nothing (the checks
    then fail closed), instead of two parsers' results merged."""
    eos, nxos = registry.driver("eos"), registry.driver("nxos")
    assert nxos.bgp_sessions(_show("eos_show_ip_bgp_summary.json")) == {}
    assert eos.bgp_sessions(_show("nxos_show_ip_bgp_summary.json")) == {}
    assert eos.lldp_neighbors(_show("nxos_show_lldp_neighbors.json")) == {}


def test_the_filter_table_is_generated_from_the_registry(extra_platforms: Path) -> None:
    """Each platform with a driver gets its post-check and device-diff filters, a child through
    its parent's driver: nothing in push/ lists platforms."""
    from fabricgen.push.filters import ansible_filters

    _platform(extra_platforms, "toy", "parent: eos\n")
    filters = ansible_filters()
    for name in ("eos", "nxos", "toy"):
        assert {f"fabricgen_{name}_problems", f"fabricgen_{name}_bgp_problems", f"fabricgen_{name}_pfc_problems"} <= set(filters)
    assert filters["fabricgen_toy_session_diff_lines"] is filters["fabricgen_eos_session_diff_lines"]
    summary = {"vrfs": {"default": {"peers": {"10.0.0.0": {"peerState": "Idle"}}}}}
    assert filters["fabricgen_toy_bgp_problems"](summary, ["10.0.0.0"]) == ["10.0.0.0 (Idle)"]
    assert "fabricgen_infiniband_problems" not in filters
