"""containerlab topology: valid against containerlab's published schema (pinned copy in
tests/data/containerlab.schema.json, validated with the `regex` module because the schema's
`\\p{...}` patterns are not Python `re` syntax), interface names mapped to front-panel ports,
startup configs pointing at the rendered configs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import regex
import yaml
from click.testing import CliRunner
from jsonschema import Draft7Validator, ValidationError, validators

from fabricgen.artifacts.lab import _topology_text, lab, topology
from fabricgen.cli import main
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from fabricgen.render.yamlemit import yaml_text
from tests.conftest import EXAMPLES, ROOT, example_plan

SCHEMA = ROOT / "tests" / "data" / "containerlab.schema.json"


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not regex.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


ClabValidator = validators.extend(Draft7Validator, {"pattern": _pattern})


def _errors(document: Any) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in ClabValidator(schema).iter_errors(document)]


@pytest.mark.parametrize("name", ["pod-roce-400g", "pod-mixed"])
def test_topology_is_valid_containerlab(name: str) -> None:
    plan = example_plan(name)
    files = lab(plan, RenderContext())
    (text,) = files.values()
    document = yaml.safe_load(text)
    assert _errors(document) == []
    assert set(document["topology"]["nodes"]) == {d.name for d in plan.devices}
    assert len(document["topology"]["links"]) == sum(1 for link in plan.links if link.kind == "leaf-spine")


def test_schema_rejects_a_wrong_kind() -> None:
    """The validator really validates: containerlab's schema knows `arista_ceos`, not `ceos`."""
    document, _ = topology(example_plan("pod-roce-400g"))
    first = next(iter(document["topology"]["nodes"].values()))
    first["kind"] = "ceos"
    assert any("ceos" in e for e in _errors(document))


def test_interface_names_map_front_panel_ports() -> None:
    plan = example_plan("pod-mixed")
    document, left_out = topology(plan)
    assert left_out == 0
    endpoints = {e for link in document["topology"]["links"] for e in link["endpoints"]}
    for link in plan.links:
        if link.kind != "leaf-spine":
            continue
        # Cisco leaf Ethernet1/33 -> n9kv eth33; Arista spine cage 1 as 2x400G: Ethernet1/5 -> cEOS eth1_5.
        cisco_port = int(link.a.interface.rsplit("/", 1)[1])
        cage, lane = link.z.interface.removeprefix("Ethernet").split("/")
        assert f"{link.a.device}:eth{cisco_port}" in endpoints
        assert f"{link.z.device}:eth{cage}_{lane}" in endpoints
    assert "pod2-spine01:eth1_5" in endpoints


def test_rendered_lab_points_at_rendered_configs(tmp_path: Path) -> None:
    out = tmp_path / "pod1"
    result = CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    clab = out / "lab" / "pod1.clab.yml"
    document = yaml.safe_load(clab.read_text(encoding="utf-8"))
    for name, node in document["topology"]["nodes"].items():
        assert (clab.parent / node["startup-config"]).resolve() == (out / "configs" / f"{name}.cfg").resolve()
        assert (clab.parent / node["startup-config"]).is_file()


def test_infiniband_has_no_lab() -> None:
    assert lab(example_plan("ib-hdr"), RenderContext()) == {}


def test_breakouts_a_kind_cannot_emulate_are_left_out_and_counted(tmp_path: Path) -> None:
    """Cisco leaves with 100G uplinks break their 400G cages out; n9kv has no breakouts."""
    from tests.fabrics import fabric, write

    doc = fabric(
        spines={"count": 2, "model": "cisco-n9k-9364d-gx2a", "platform": "nxos"},
        leaves={"count": 2, "model": "cisco-n9k-9364d-gx2a", "platform": "nxos"},
        uplinks={"per_spine": 2, "speed": "100G"},
        servers={"per_leaf": 1, "ports_per_server": 1, "speed": "400G"},
    )
    plan = load_and_plan(write(tmp_path, doc)).plan
    document, left_out = topology(plan)
    assert left_out == sum(1 for link in plan.links if link.kind == "leaf-spine") == 8
    assert "links" not in document["topology"]
    (text,) = lab(plan, RenderContext()).values()
    assert "# 8 switch-to-switch link(s) left out" in text
    assert _errors(yaml.safe_load(text)) == []


@pytest.mark.parametrize("name", ["pod-roce-400g", "pod-mixed"])
def test_topology_written_directly_equals_the_general_writer(name: str) -> None:
    """lab() writes the topology's fixed shape without yaml_text; the general writer must give the same bytes."""
    plan = example_plan(name)
    document, _ = topology(plan)
    (text,) = lab(plan, RenderContext()).values()
    body = text[text.index("name: ") :]
    assert body == yaml_text(document, width=200, sort_keys=False)


def test_topology_with_a_name_the_direct_writer_cannot_take_falls_back() -> None:
    """A space in a name needs the general writer: the text is then yaml_text's, and it loads back."""
    document, _ = topology(example_plan("pod-roce-400g"))
    document["name"] = "lab with spaces"
    assert _topology_text(document) is None
    document["name"] = "lab-without-spaces"
    assert _topology_text(document) == yaml_text(document, width=200, sort_keys=False)
