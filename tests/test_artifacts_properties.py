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
from fabricgen.artifacts.common import csv_text, natural_key, natural_order
from fabricgen.render.context import RenderContext
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
    them were valid, so the test cannot pass by rejecting everything (a cable no catalog medium
    joins is refused when planning: exit 2, said so)."""
    valid: list[dict[str, Any]] = []

    @settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(cabled_fabrics())
    def check(doc: dict[str, Any]) -> None:
        plan = plan_of(doc)
        if plan is None:
            return
        valid.append(doc)
        context = RenderContext()
        chosen = plan.cables
        # Breakout and splitter copper cables (a shared cage) are NetBox API objects, not CSV rows.
        csv_links = sum(1 for c in chosen if c.choice.kind == "fibre" or (c.a.shared == 1 and c.z.shared == 1))
        assert len(_rows(cabling(plan, context)["cabling.csv"])) == csv_links

        fibre = [c for c in chosen if c.choice.kind == "fibre"]
        electrical = [c for c in chosen if c.choice.kind != "fibre"]
        assert len(fibre) + len(electrical) == len(plan.links)
        counts: dict[str, int] = {}
        for row in _rows(bom(plan, context)["bom.csv"]):
            counts[row["category"]] = counts.get(row["category"], 0) + int(row["count"])
            assert int(row["count"]) > 0
        # Cords: a 2x module's link on its own uses both optical ports; a link on one port of a
        # shared module one; links sharing one optical port one 1:N cord between them. Counted
        # from the part names and the plan's breakouts, not from the identities the code computes.
        cords = 0
        shared_ports: set[tuple[str, int, int]] = set()
        for c in fibre:
            ports_a = 2 if "-2x" in c.choice.a_optic else 1
            ports_z = 2 if "-2x" in c.choice.z_optic else 1
            per_link = min(ports_a // c.a.shared, ports_z // c.z.shared)
            if per_link:
                cords += per_link
            else:
                end, ports = (c.a, ports_a) if c.a.shared > ports_a else (c.z, ports_z)
                shared_ports.add((end.device, end.port, (end.sub - 1) // (end.shared // ports)))
        assert counts.get("fibre", 0) == cords + len(shared_ports)
        # Two transceivers per fibre link, less those a shared cage shares.
        shared = {(end.device, end.port) for c in fibre for end in (c.a, c.z) if end.shared > 1}
        unshared = sum((c.a.shared == 1) + (c.z.shared == 1) for c in fibre)
        assert counts.get("transceiver", 0) == unshared + len(shared)
        assert len(electrical) >= counts.get("cable", 0) >= (1 if electrical else 0)

        host_rows = _rows(hosts(plan, context).get("hosts.csv", "server\n"))
        assert len(host_rows) == sum(len(s.nics) for s in plan.servers)

        (text,) = lab(plan, context).values()
        document = yaml.safe_load(text)
        assert _errors(document) == []
        endpoints = [e for link in document["topology"].get("links", []) for e in link["endpoints"]]
        assert len(endpoints) == len(set(endpoints))

    check()
    assert len(valid) >= MIN_VALID, f"only {len(valid)} generated inventories were valid; the strategy needs fixing"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["leaf1", "leaf01", "leaf2", "leaf10", "spine1", "b2-p1", "b10-p1", ""]),
            st.sampled_from(["Ethernet1/1", "Ethernet01/1", "Ethernet2/1", "Ethernet10/1", "nic1"]),
            st.sampled_from(["spine2", "spine10", "leaf1"]),
        )
    )
)
def test_natural_order_is_the_one_sort(rows: list[tuple[str, str, str]]) -> None:
    """Ranked sorting gives the order of the one sort by the columns' natural keys, ties in input
    order (names such as leaf1 and leaf01 share a natural key: the rows of both interleave)."""
    expected = sorted(rows, key=lambda r: (natural_key(r[0]), natural_key(r[1]), natural_key(r[2])))
    columns = ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    assert [rows[i] for i in natural_order(*columns)] == expected


_CELLS = st.text(alphabet='ab1 ,"\n\r', max_size=4)


@settings(max_examples=300)
@given(st.lists(st.lists(_CELLS, min_size=1, max_size=4), max_size=6), st.booleans())
def test_csv_text_is_the_csv_module(rows: list[list[str]], plain: bool) -> None:
    """Whole-text joining (every row plain) or row by row: the csv module's text either way."""
    if plain:  # the fast path: cells without a character that needs quoting
        rows = [[cell.translate(str.maketrans('",\n\r', "abab")) for cell in row] for row in rows]
    expected = io.StringIO()
    csv.writer(expected, lineterminator="\n").writerows([("h", "i"), *rows])
    assert csv_text(("h", "i"), rows) == expected.getvalue()
