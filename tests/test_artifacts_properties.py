"""Invariants of the artifacts on generated fabrics (hypothesis): one cable row per link, BOM
counts consistent with the cables, one host row per NIC, a schema-valid containerlab file whose
interfaces are all distinct."""

from __future__ import annotations

import csv
import io
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricgen.artifacts import bom, cabling, hosts, lab
from fabricgen.plan.media import cage_facts, keys, link_ends
from fabricgen.render import RenderContext
from tests.test_artifacts_lab import _errors
from tests.test_properties import fabrics, plan_of

LENGTHS = st.sampled_from(["1m", "3m", "5m", "7m", "30m", "100m", "150m", "500m", "1500m", "9000m"])

MIN_VALID = 25
"""Generated inventories that must pass the pipeline for the property test to count."""


@st.composite
def cabled_fabrics(draw: st.DrawFn) -> dict[str, Any]:
    doc = draw(fabrics())
    doc["cabling"] = {"length": {"leaf-spine": draw(LENGTHS), "server-leaf": draw(LENGTHS)}}
    return doc


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_artifact_invariants() -> None:
    """Invariants of every generated inventory the pipeline accepts; fails when too few of
    them were valid, so the test cannot pass by rejecting everything."""
    valid: list[dict[str, Any]] = []

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(cabled_fabrics())
    def check(doc: dict[str, Any]) -> None:
        plan = plan_of(doc)
        if plan is None:
            return
        valid.append(doc)
        context = RenderContext()
        assert len(_rows(cabling(plan, context)["cabling.csv"])) == len(plan.links)

        hardware = cage_facts(plan.devices, plan.models)
        fibre = [(link, *link_ends(link, hardware)) for link in plan.links if link.media and link.media.kind == "fibre"]
        copper = [link for link in plan.links if link.media and link.media.kind == "copper"]
        assert len(fibre) + len(copper) == len(plan.links)
        counts: dict[str, int] = {}
        for row in _rows(bom(plan, context)["bom.csv"]):
            counts[row["category"]] = counts.get(row["category"], 0) + int(row["count"])
            assert int(row["count"]) > 0
        assert counts.get("fibre", 0) == len(fibre)
        # Two transceivers per fibre link, less those a broken-out cage shares.
        shared = {key for _, a, z in fibre for key, end in zip(keys("fibre", a, z)[1:], (a, z), strict=True) if end.shared > 1}
        unshared = sum((a.shared == 1) + (z.shared == 1) for _, a, z in fibre)
        assert counts.get("transceiver", 0) == unshared + len(shared)
        assert len(copper) >= counts.get("cable", 0) >= (1 if copper else 0)

        host_rows = _rows(hosts(plan, context).get("hosts.csv", "server\n"))
        assert len(host_rows) == sum(len(s.nics) for s in plan.servers)

        (text,) = lab(plan, context).values()
        document = yaml.safe_load(text)
        assert _errors(document) == []
        endpoints = [e for link in document["topology"].get("links", []) for e in link["endpoints"]]
        assert len(endpoints) == len(set(endpoints))

    check()
    assert len(valid) >= MIN_VALID, f"only {len(valid)} generated inventories were valid; the strategy needs fixing"
