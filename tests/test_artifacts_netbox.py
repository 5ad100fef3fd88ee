"""A NetBox import round trip: every file in the documented order, checked the way NetBox's import
forms check it (columns, required fields, choices; pinned copy in tests/data/netbox_import_forms.json
with its source), and every name resolved against what the files before it created, as NetBox
resolves them (device type by manufacturer and model, interfaces by device and name, a cable end
free before it is cabled)."""

from __future__ import annotations

import csv
import io
import json
from functools import cache
from typing import Any

import pytest

from fabricgen.artifacts import cabling, netbox
from fabricgen.core.model import Plan
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, ROOT, example_plan

EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "fabric.yml").is_file())
FORMS: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "netbox_import_forms.json").read_text(encoding="utf-8"))["forms"]
ORDER = (
    ("netbox-manufacturers.csv", "manufacturer"),
    ("netbox-device-roles.csv", "devicerole"),
    ("netbox-sites.csv", "site"),
    ("netbox-device-types.csv", "devicetype"),
    ("devices.csv", "device"),
    ("interfaces.csv", "interface"),
    ("cabling.csv", "cable"),
)


def _rows(text: str, form: str) -> list[dict[str, str]]:
    """The rows, after the checks NetBox's import form makes before it looks anything up."""
    reader = csv.DictReader(io.StringIO(text))
    spec = FORMS[form]
    assert reader.fieldnames is not None
    unknown = set(reader.fieldnames) - set(spec["fields"])
    assert not unknown, f"{form}: NetBox rejects unknown columns {sorted(unknown)}"
    rows = list(reader)
    for row in rows:
        for field in spec["required"]:
            assert row.get(field), f"{form}: required field {field} empty in {row}"
        for field, choices in spec["choices"].items():
            if row.get(field):
                assert row[field] in choices, f"{form}: {field}={row[field]!r} is not a NetBox choice"
    return rows


class NetBox:
    """Just enough of NetBox's object store to resolve what each import refers to."""

    def __init__(self) -> None:
        self.manufacturers: set[str] = set()
        self.roles: set[str] = set()
        self.sites: set[str] = set()
        self.device_types: set[tuple[str, str]] = set()
        self.devices: set[str] = set()
        self.interfaces: dict[tuple[str, str], str] = {}
        self.cabled: set[tuple[str, str]] = set()
        self.cables = 0

    def load(self, form: str, rows: list[dict[str, str]]) -> None:
        getattr(self, f"_{form}")(rows)

    def _manufacturer(self, rows: list[dict[str, str]]) -> None:
        self.manufacturers |= {r["name"] for r in rows}

    def _devicerole(self, rows: list[dict[str, str]]) -> None:
        self.roles |= {r["name"] for r in rows}

    def _site(self, rows: list[dict[str, str]]) -> None:
        self.sites |= {r["name"] for r in rows}

    def _devicetype(self, rows: list[dict[str, str]]) -> None:
        for r in rows:
            assert r["manufacturer"] in self.manufacturers
            self.device_types.add((r["manufacturer"], r["model"]))

    def _device(self, rows: list[dict[str, str]]) -> None:
        for r in rows:
            assert r["role"] in self.roles and r["site"] in self.sites
            assert (r["manufacturer"], r["device_type"]) in self.device_types
            assert r["name"] not in self.devices
            self.devices.add(r["name"])

    def _interface(self, rows: list[dict[str, str]]) -> None:
        for r in rows:
            assert r["device"] in self.devices
            assert (r["device"], r["name"]) not in self.interfaces, f"duplicate interface {r['device']} {r['name']}"
            self.interfaces[(r["device"], r["name"])] = r["type"]

    def connect(self, a: list[tuple[str, str]], b: list[tuple[str, str]]) -> None:
        for end in (*a, *b):
            assert end in self.interfaces, f"termination not found: {end}"
            assert end not in self.cabled, f"{end} is already connected"
            self.cabled.add(end)
        self.cables += 1

    def _cable(self, rows: list[dict[str, str]]) -> None:
        for r in rows:
            assert r["side_a_type"] == r["side_b_type"] == "dcim.interface"
            self.connect([(r["side_a_device"], r["side_a_name"])], [(r["side_b_device"], r["side_b_name"])])


def _files(plan: Plan) -> dict[str, str]:
    context = RenderContext()
    return {**cabling(plan, context), **netbox(plan, context)}


def _import(plan: Plan) -> NetBox:
    files = _files(plan)
    box = NetBox()
    for name, form in ORDER:
        box.load(form, _rows(files[name], form))
    breakouts = json.loads(files.get("netbox-breakout-cables.json", '{"cables": []}'))["cables"]
    for cable in breakouts:
        for side in ("a_terminations", "b_terminations"):
            assert {t["object_type"] for t in cable[side]} == {"dcim.interface"}  # one type per side
        assert cable["type"] in FORMS["cable"]["choices"]["type"]
        box.connect(
            [(t["device"], t["name"]) for t in cable["a_terminations"]], [(t["device"], t["name"]) for t in cable["b_terminations"]]
        )
    return box


@cache
def _imported(name: str) -> NetBox:
    """The NetBox store after importing example NAME's files (built once; the tests only read it)."""
    return _import(example_plan(name))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_netbox_import_round_trip(name: str) -> None:
    plan = example_plan(name)
    box = _imported(name)
    # Every link's two ends exist and are cabled, once.
    ends = {(e.device, e.interface) for link in plan.links for e in (link.a, link.z)}
    assert ends <= set(box.interfaces)
    assert box.cabled == ends
    # Dedicated subnet-manager hosts are devices too (their cables are plan links).
    sm_hosts = {sm.host for sm in plan.infiniband.subnet_managers if not sm.server} if plan.infiniband else set()
    assert box.devices == {d.name for d in plan.devices} | {s.name for s in plan.servers} | sm_hosts


def test_breakout_halves_and_server_nics_are_created() -> None:
    """cluster-3tier spines run 800G cages as 2 x 400G: the second half is `EthernetN/5`, which the
    community device type does not define; servers' ports are nic1..nic8."""
    box = _imported("cluster-3tier")
    assert ("cl1-p1-spine01", "Ethernet1/5") in box.interfaces
    assert box.interfaces[("cl1-p1-spine01", "Ethernet1/5")] == "400gbase-x-osfp"
    assert ("cl1-p1-leaf01-srv01", "nic8") in box.interfaces


def test_one_netbox_cable_per_physical_cable_on_ndr() -> None:
    """ib-ndr: 4 leaves x 28 HCAs on 1:2 splitter DACs = 56 physical cables (one NetBox cable each,
    two terminations per side), plus 120 leaf-spine links, plus one splitter DAC per dedicated
    subnet-manager host (2 in the inventory; each on a twin-port cage of its own)."""
    box = _imported("ib-ndr")
    assert box.cables == 56 + 120 + 2
