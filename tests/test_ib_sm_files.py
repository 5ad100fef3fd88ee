"""The subnet manager's files on its host, as rendered: one OpenSM per planned port (Debian's
/etc/default/opensm with PORTS= that port, not the package's PORTS=ALL), the lines the unit
overrides gone from opensm.conf, the planned SM software named in the header and handed to the
deploy role, and the partition header's SL and MTU decided by the plan.

Before: no default-opensm file, `log_file` in opensm.conf (overridden by opensm@.service's
--log_file), no SM software in the files or host_vars, `sl=` decided in the template and no
`mtu=` for Default's IPoIB group (OpenSM's default 4 = 2048 on a 4K fabric)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from fabricgen.pipeline import load_and_plan
from tests.ib_helpers import IB_HDR, RAIL_SM_ON_SERVER, cli, render_cli, write_inventory
from tests.test_ib_sm_software import NDR


def _render_hdr(tmp_path: Path) -> Path:
    out = tmp_path / "build"
    result = cli("render", str(IB_HDR), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_default_opensm_lists_only_the_planned_port_of_each_sm_host(tmp_path: Path) -> None:
    out = _render_hdr(tmp_path)
    inventory = yaml.safe_load((IB_HDR / "fabric.yml").read_text())
    hosts = sorted(sm["host"] for sm in inventory["subnet_managers"])
    planned = {
        sm["host"]: sm["port_guid"] for sm in json.loads((out / "plan" / "fabric.json").read_text())["infiniband"]["subnet_managers"]
    }
    assert sorted(planned) == hosts
    for host in hosts:
        text = (out / "opensm" / host / "default-opensm").read_text()
        settings = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert settings == [f'PORTS="{planned[host]}"'], text
        conf = (out / "opensm" / host / "opensm.conf").read_text()
        options = {line.split()[0]: line.split()[1] for line in conf.splitlines() if line and not line.startswith("#")}
        # opensm@.service passes --guid %I --log_file /var/log/opensm.%I.log: no log_file to contradict it.
        assert "log_file" not in options and options["guid"] == planned[host]
        assert "--log_file /var/log/opensm.<GUID>.log" in conf


def test_the_planned_sm_software_is_in_the_header_and_the_host_vars(tmp_path: Path) -> None:
    out = _render_hdr(tmp_path)
    conf = (out / "opensm" / "ib1-sm1" / "opensm.conf").read_text()
    assert "# Subnet manager: opensm (version not stated: the distribution's); HDR links need upstream OpenSM 3.3.21 or later.\n" in conf
    host_vars = yaml.safe_load((out / "ansible" / "host_vars" / "ib1-sm1.yml").read_text())
    assert host_vars["opensm_implementation"] == "opensm"
    assert host_vars["opensm_minimum_version"] == "3.3.21" and host_vars["opensm_link_generation"] == "HDR"

    (tmp_path / "ndr").mkdir()
    result, ndr = render_cli(tmp_path / "ndr", NDR + "opensm: {implementation: mlnx-opensm}\n")
    assert result.exit_code == 0, result.output
    sm_host = next((ndr / "opensm").iterdir()).name
    assert "# Subnet manager: mlnx-opensm (version not stated" in (ndr / "opensm" / sm_host / "opensm.conf").read_text()
    # No upstream minimum applies to an NVIDIA SM: the role checks nothing.
    assert yaml.safe_load((ndr / "ansible" / "host_vars" / f"{sm_host}.yml").read_text())["opensm_minimum_version"] == ""


def test_partition_sl_is_decided_by_the_plan_and_default_ipoib_runs_at_4k(tmp_path: Path) -> None:
    plan = load_and_plan(write_inventory(tmp_path, RAIL_SM_ON_SERVER)).plan
    assert plan.infiniband is not None
    assert {p.name: p.traffic_sl for p in plan.infiniband.partitions} == {"t1": 0, "t2": 0, "t3": 2}
    assert plan.infiniband.default_mtu_code == 5  # IBTA code of 4096, the fabric's MTU
    no_qos = load_and_plan(
        write_inventory(tmp_path, RAIL_SM_ON_SERVER.replace("qos: {enabled: true, max_vls: 4}", "qos: {enabled: false}"))
    ).plan
    assert no_qos.infiniband is not None
    assert {p.name: (p.sl, p.traffic_sl) for p in no_qos.infiniband.partitions}["t3"] == (2, 0)

    (tmp_path / "r").mkdir()
    result, out = render_cli(tmp_path / "r", RAIL_SM_ON_SERVER)
    assert result.exit_code == 0, result.output
    partitions = (out / "opensm" / "ibr-su1-gpu01" / "partitions.conf").read_text()
    assert "Default=0x7fff, ipoib, mtu=5 : ALL_CAS=limited" in partitions
    assert "t3=0x0a03, ipoib, mtu=5, sl=2, defmember=full :" in partitions


def test_protection_is_rendered_without_any_key(tmp_path: Path) -> None:
    """The rendered files say how the subnet is protected and hold no key: m_key, sm_key and
    sa_key come at push time (tests/test_playbooks_opensm.py checks them on the SM host)."""
    out = _render_hdr(tmp_path)
    for path in sorted((out / "opensm").rglob("*")):
        if path.is_file():
            keys = [line for line in path.read_text().splitlines() if line.split()[:1] in (["m_key"], ["sm_key"], ["sa_key"])]
            assert keys == [], path
    conf = (out / "opensm" / "ib1-sm1" / "opensm.conf").read_text()
    assert "m_key_protection_level 1\nm_key_lease_period 60\n" in conf  # the schema's defaults
    assert yaml.safe_load((out / "ansible" / "host_vars" / "ib1-sm1.yml").read_text())["opensm_protection"] is True

    result, off = render_cli(tmp_path, RAIL_SM_ON_SERVER + "opensm: {protection: {enabled: false}}\n")
    assert result.exit_code == 0, result.output
    assert "opensm.protection.enabled: without M_Key protection (m_key 0) root on any host can rewrite" in " ".join(result.output.split())
    text = (off / "opensm" / "ibr-su1-gpu01" / "opensm.conf").read_text()
    assert "m_key_protection_level" not in text and "# Off (opensm.protection.enabled: false)" in text


def test_a_lease_period_opensm_would_rewrite_is_refused(tmp_path: Path) -> None:
    """OpenSM raises a lease period not above sweep_interval to sweep_interval + 1 and turns a
    sweep_interval of 0 back on (osm_subnet.c): the plan would not be what runs."""
    cases = {
        "opensm: {sweep_interval: 30, protection: {m_key_lease_period: 30}}\n": (
            "opensm.protection.m_key_lease_period: m_key_lease_period 30 is not above sweep_interval 30: OpenSM raises it to 31"
        ),
        "opensm: {sweep_interval: 0}\n": "opensm.sweep_interval: sweep_interval 0 with an M_Key lease: OpenSM turns sweeping back on at 59 s",
    }
    for extra, message in cases.items():
        path = write_inventory(tmp_path, RAIL_SM_ON_SERVER + extra)
        result = cli("validate", path)
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.output.split()), result.output
    never = cli("validate", write_inventory(tmp_path, RAIL_SM_ON_SERVER + "opensm: {protection: {m_key_lease_period: 0}}\n"))
    assert never.exit_code == 0, never.output
    assert "m_key_lease_period 0: a port whose M_Key is lost never drops its protection" in " ".join(never.output.split())
