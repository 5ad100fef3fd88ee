"""`fabricgen ib verify`: bring the planned fabric up in ibsim, run the real OpenSM with the
rendered configuration, and check what it programmed.

SUBNET UP is not success (OpenSM silently falls back to minhop, and to an open Default
partition on a partitions.conf parse error), so each check looks at what OpenSM logged and
what the diag tools read back from the simulated switches and HCAs:

1. opensm.conf passes OpenSM's own parser (`opensm -c`), partitions.conf passes ours;
2. `<engine> tables configured on all switches` for the planned engine, with a diagnosis from
   the log when another engine ran;
3. the SM is MASTER on the planned port GUID (`sminfo`);
4. every planned switch, HCA and cable is discovered, nothing unplanned (`ibnetdiscover`);
5. paths between hosts on different leaves cross exactly one spine (`ibtracert`, a bounded,
   deterministic sample of pairs);
6. each tenant P_Key is on its members' ports and not on others (`smpquery pkeys`, sampled);
7. with QoS, SL2VL and VL arbitration tables as planned (`smpquery sl2vl / vlarb`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.infiniband.ibnet import IbFabric, norm_guid, parse_ibnet
from fabricgen.infiniband.partitions import check_partitions
from fabricgen.infiniband.sim import Simulation, SimulationError, missing_tools
from fabricgen.infiniband.topology import ib_port_numbers
from fabricgen.model import Plan, SubnetManager

PATH_OPTIONS = (
    "root_guid_file",
    "cn_guid_file",
    "io_guid_file",
    "guid_routing_order_file",
    "partition_config_file",
    "qos_policy_file",
    "node_name_map_name",
)
LINT_FAILURES = ("Unrecognized token", "Invalid Cached Option Value", "Parsing error")
ENGINE_LINE = re.compile(r"(\S+) tables configured on all switches")
DIAGNOSES = (
    ("Fabric rank is 1", "root_guids.conf must list the top tier (the spine node GUIDs); it lists switches of the leaf tier"),
    ("Root switch GUID", "root_guids.conf holds GUIDs that are not in the fabric: import the real GUIDs (fabricgen ib import-guids)"),
    ("No valid roots supplied", "none of the root GUIDs is in the fabric: import the real GUIDs (fabricgen ib import-guids)"),
    ("Fabric has no valid compute nodes", "cn_guids.conf must list HCA port GUIDs (not node GUIDs) of hosts in the fabric"),
    ("Different number of", "the cabling is not a symmetric fat tree: a cable is missing or extra (see the cabling check)"),
    ("hasn't been identified as FatTree", "the cabling is not a fat tree ftree accepts: compare the cabling check with the plan"),
    ("LMC > 0 is not supported", "ftree needs routing.lmc 0"),
    ("PARSE ERROR", "partitions.conf has a syntax error: OpenSM fell back to the open Default partition (every port a full member)"),
    ("Failed parsing QoS policy", "qos-policy.conf has a syntax error: OpenSM ignores the QoS policy (SL 0 everywhere)"),
    ("No routing engine able", "no routing engine could route the fabric (no_fallback): the subnet stays down"),
)


@dataclass(slots=True)
class Check:
    name: str
    ok: bool
    summary: str
    evidence: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    fabric: str
    sm: str
    checks: list[Check] = field(default_factory=list)
    workdir: str = ""

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def format(self) -> str:
        lines = [f"fabricgen ib verify: fabric {self.fabric}, OpenSM on {self.sm}"]
        for check in self.checks:
            lines.append(f"{'PASS' if check.ok else 'FAIL'} {check.name}: {check.summary}")
            lines += [f"     {line}" for line in check.evidence]
            lines += [f"  -> {hint}" for hint in check.hints]
        failed = [c.name for c in self.checks if not c.ok]
        lines.append(f"{'FAILED: ' + ', '.join(failed) if failed else 'PASSED'} ({len(self.checks)} checks)")
        if self.workdir:
            lines.append(f"files, logs and dumps kept in {self.workdir}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Options:
    sm_host: str | None = None
    pairs: int = 64
    sample: int = 16
    timeout: float = 120.0
    keep: Path | None = None
    standby: bool = True
    """Also start the other planned SMs and check they are STANDBY."""


def master(plan: Plan, host: str | None = None) -> SubnetManager:
    ib = plan.infiniband
    assert ib is not None
    if host:
        for sm in ib.subnet_managers:
            if sm.host == host:
                return sm
        raise SimulationError(f"unknown subnet manager '{host}'; the plan has {', '.join(s.host for s in ib.subnet_managers)}")
    return sorted(ib.subnet_managers, key=lambda s: (-s.priority, int(s.port_guid, 16)))[0]


def relocate_config(text: str, conf_dir: Path, run_dir: Path) -> str:
    """opensm.conf with every file option pointing into the verify folder (basenames kept)."""
    out = []
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        value = value.strip().split(" ")[0] if value.strip() else ""
        if key in PATH_OPTIONS and value and value != "(null)":
            line = f"{key} {conf_dir / Path(value).name}"
        elif key == "log_file":
            line = f"log_file {run_dir / 'opensm.log'}"
        elif key == "dump_files_dir":
            line = f"dump_files_dir {run_dir}/"
        elif key == "force_log_flush":
            line = "force_log_flush TRUE"
        out.append(line)
    out.append("force_log_flush TRUE")
    return "\n".join(out) + "\n"


def verify(plan: Plan, files: dict[str, str], options: Options = Options()) -> Report:
    """Run every check; `files` holds the rendered `opensm/<host>/*` and `ib/ibsim.net` texts."""
    ib = plan.infiniband
    if ib is None:
        raise SimulationError(f"fabric {plan.name} is not an InfiniBand fabric")
    missing = missing_tools()
    if missing:
        raise SimulationError(f"missing tools: {', '.join(missing)}; install the Debian packages opensm ibsim-utils infiniband-diags")
    sm = master(plan, options.sm_host)
    report = Report(plan.name, f"{sm.host} (port GUID {sm.port_guid}, priority {sm.priority})")
    workdir = Path(tempfile.mkdtemp(prefix="fabricgen-ib-verify-"))
    try:
        _run(plan, files, sm, options, report, workdir)
    finally:
        if options.keep is not None:
            options.keep.mkdir(parents=True, exist_ok=True)
            shutil.copytree(workdir, options.keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("sys-*", "*.fifo"))
            report.workdir = str(options.keep)
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _run(plan: Plan, files: dict[str, str], sm: SubnetManager, options: Options, report: Report, workdir: Path) -> None:
    ib = plan.infiniband
    assert ib is not None
    prefix = f"opensm/{sm.host}/"
    conf_dir = workdir / "conf"
    conf_dir.mkdir()
    for path, text in files.items():
        if path.startswith(prefix):
            (conf_dir / path.removeprefix(prefix)).write_text(text)
    if not (conf_dir / "opensm.conf").is_file():
        raise SimulationError(f"no {prefix}opensm.conf among the rendered files")
    config = workdir / "opensm.conf"
    config.write_text(relocate_config((conf_dir / "opensm.conf").read_text(), conf_dir, workdir))
    net = workdir / "ibsim.net"
    net.write_text(files["ib/ibsim.net"])

    _check_files(report, conf_dir, config, workdir)
    fabric_plan = parse_ibnet(files["ib/ibsim.net"])
    sm_node = _sim_node_of(fabric_plan, sm.port_guid)
    if sm_node is None:
        report.add(Check("subnet manager", False, f"no HCA port with GUID {sm.port_guid} in the topology: OpenSM cannot be attached"))
        return
    ports = sum(len(n.ports) for n in fabric_plan.nodes.values())
    switches = sum(1 for n in fabric_plan.nodes.values() if n.kind == "switch")
    with Simulation(workdir, net, sm_node, nodes=len(fabric_plan.nodes), switches=switches, ports=ports * 2) as sim:
        sim.start_ibsim()
        sim.start_opensm(config)
        scale = 1 + len(fabric_plan.nodes) / 500
        up = sim.wait_for_log(("SUBNET UP",), options.timeout)
        if up is None:
            # With no_fallback a failed engine never reaches SUBNET UP: give it one more sweep to log why.
            sim.wait_for_log(("No routing engine able",), 2.0)
        log = sim.log()
        _check_engine(report, plan, log, up is not None, conf_dir, options.timeout)
        _check_log_errors(report, log)
        if up is None:
            report.add(Check("diagnostics", False, "skipped: the subnet is not up", [sim.opensm_output().strip()[-500:]]))
            return
        _check_sm(report, sim, sm)
        if options.standby:
            _check_standby(report, plan, files, sim, fabric_plan, sm, workdir)
        discovered = _check_cabling(report, plan, sim, fabric_plan, timeout=30 * scale)
        if discovered is None:
            return
        lids = {p.port_guid: p.lid for n in discovered.nodes.values() if n.kind == "ca" for p in n.ports.values()}
        _check_paths(report, plan, sim, lids, options.pairs)
        _check_pkeys(report, plan, sim, lids, sm, options.sample)
        _check_qos(report, plan, sim, lids, discovered)


def _sim_node_of(fabric: IbFabric, port_guid: str) -> str | None:
    for node in fabric.nodes.values():
        if node.kind == "ca" and port_guid in node.port_guids():
            return node.node_id
    return None


def _check_files(report: Report, conf_dir: Path, config: Path, workdir: Path) -> None:
    try:
        done = subprocess.run(
            ["opensm", "-F", str(config), "-c", str(workdir / "opensm.conf.dump")],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=workdir,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(workdir), "LANG": "C"},
            check=False,
            stdin=subprocess.DEVNULL,
        )
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        output = "Parsing error: opensm -c timed out"
    bad = [line.strip() for line in output.splitlines() if any(f in line for f in LINT_FAILURES)]
    report.add(
        Check(
            "opensm.conf",
            not bad,
            "OpenSM's parser (opensm -c) accepts every option" if not bad else "OpenSM's parser rejects options",
            bad,
            ["fix the option names/values in templates/opensm/opensm.conf.j2 or the inventory"] if bad else [],
        )
    )
    partitions = conf_dir / "partitions.conf"
    if partitions.is_file():
        problems, rules = check_partitions(partitions.read_text())
        errors = [p for p in problems if p.error]
        report.add(
            Check(
                "partitions.conf",
                not errors,
                f"{len(rules)} partition definition(s), syntax valid" if not errors else f"{len(errors)} syntax error(s)",
                [p.format("partitions.conf") for p in problems],
                ["OpenSM ignores a partitions.conf with a parse error and opens the Default partition to every port: fix the file"]
                if errors
                else [],
            )
        )


def _check_engine(report: Report, plan: Plan, log: str, up: bool, conf_dir: Path, timeout: float) -> None:
    ib = plan.infiniband
    assert ib is not None
    engines = ENGINE_LINE.findall(log)
    lines = [line.split("-> ", 1)[-1] for line in log.splitlines() if "tables configured on all switches" in line]
    expected = ib.routing_engine
    ok = up and bool(engines) and engines[-1] == expected
    evidence = [*lines[-1:], f"SUBNET UP: {'yes' if up else f'no (waited {timeout:g} s)'}"]
    rank = [line.split("-> ", 1)[-1] for line in log.splitlines() if "FatTree rank" in line or "Fabric rank" in line]
    evidence += rank[-1:]
    hints = []
    if not ok:
        evidence += _error_lines(log)
        hints = [hint for needle, hint in DIAGNOSES if needle in log and "partitions" not in hint and "QoS" not in hint]
        hints += _root_file_hint(plan, conf_dir)
    summary = (
        f"'{expected} tables configured on all switches'"
        if ok
        else f"expected '{expected} tables configured on all switches', got "
        + (f"'{engines[-1]} tables configured' ({expected} failed, OpenSM fell back)" if engines else "no routing")
    )
    report.add(Check("routing engine", ok, summary, evidence, hints))


def _root_file_hint(plan: Plan, conf_dir: Path) -> list[str]:
    ib = plan.infiniband
    assert ib is not None
    path = conf_dir / "root_guids.conf"
    if not path.is_file():
        return []
    roles = {d.guid: (d.name, d.role) for d in plan.devices}
    listed = [norm_guid(word) for word in path.read_text().split() if re.fullmatch(r"0x[0-9A-Fa-f]+", word)]
    wrong = [
        f"{roles[g][0]} ({roles[g][1]})" if g in roles else f"{g} (not in the plan)" for g in listed if roles.get(g, ("", ""))[1] != "spine"
    ]
    if not wrong:
        return []
    return [f"root_guids.conf lists {', '.join(wrong[:6])}{' ...' if len(wrong) > 6 else ''}: it must list the spine node GUIDs"]


def _error_lines(log: str, limit: int = 8) -> list[str]:
    found = []
    for line in log.splitlines():
        text = line.split("-> ", 1)[-1].strip()
        if ("ERR " in line or "PARSE ERROR" in line or "Fabric rank" in line or "cannot build" in line) and text not in found:
            found.append(text)
    return found[:limit]


def _check_log_errors(report: Report, log: str) -> None:
    findings = [hint for needle, hint in DIAGNOSES if needle in log and ("partitions" in hint or "QoS" in hint)]
    evidence = [line.split("-> ", 1)[-1].strip() for line in log.splitlines() if "PARSE ERROR" in line or "AC0" in line][:5]
    if "Partition configuration in error" in log:
        evidence.append("Partition configuration in error; retrying with default config")
    report.add(
        Check(
            "OpenSM log",
            not findings,
            "partitions.conf and the QoS policy loaded without errors" if not findings else "OpenSM rejected a policy file",
            evidence,
            findings,
        )
    )


def _check_sm(report: Report, sim: Simulation, sm: SubnetManager) -> None:
    result = sim.diag("sminfo", timeout=30)
    text = result.stdout.strip()
    match = re.search(r"sm guid (0x[0-9a-fA-F]+).*priority (\d+) state (\d+) (\S+)", text)
    ok = bool(match) and norm_guid(match.group(1)) == sm.port_guid and match.group(4) == "SMINFO_MASTER" if match else False
    hints = [] if ok else [f"expected MASTER on port {sm.port_guid} with priority {sm.priority}; {result.describe()}"]
    report.add(Check("subnet manager", ok, f"MASTER on {sm.host}" if ok else "OpenSM is not MASTER on the planned port", [text], hints))


def _check_standby(
    report: Report, plan: Plan, files: dict[str, str], sim: Simulation, fabric: IbFabric, master_sm: SubnetManager, workdir: Path
) -> None:
    """Start every other planned SM with its own rendered opensm.conf; each must enter STANDBY
    and be listed by the master's SA (`saquery SMIR`) with its priority."""
    ib = plan.infiniband
    assert ib is not None
    others = [sm for sm in ib.subnet_managers if sm.host != master_sm.host]
    if not others:
        return
    evidence: list[str] = []
    bad: list[str] = []
    logs = {}
    for sm in others:
        node = _sim_node_of(fabric, sm.port_guid)
        prefix = f"opensm/{sm.host}/"
        if node is None or f"{prefix}opensm.conf" not in files:
            bad.append(f"{sm.host}: no HCA port {sm.port_guid} in the topology or no rendered opensm.conf")
            continue
        folder = workdir / "standby" / sm.host
        conf_dir = folder / "conf"
        conf_dir.mkdir(parents=True)
        for path, text in files.items():
            if path.startswith(prefix):
                (conf_dir / path.removeprefix(prefix)).write_text(text)
        config = folder / "opensm.conf"
        config.write_text(relocate_config(files[f"{prefix}opensm.conf"], conf_dir, folder))
        logs[sm.host] = sim.start_standby(config, node, folder)
    for sm in others:
        if sm.host in logs and sim.wait_for_log(("Entering STANDBY state",), 30, logs[sm.host]) is None:
            bad.append(f"{sm.host}: no 'Entering STANDBY state' in its log within 30 s")
    # The master refreshes its SMInfo records on a sweep: force one, then read them back.
    sim.resweep()
    wanted = {sm.port_guid: sm for sm in others if sm.host in logs}
    records: dict[str, tuple[int, int]] = {}
    for _ in range(20):
        result = sim.diag("saquery", "SMIR", timeout=30)
        records = {
            norm_guid(g): (int(p), int(s))
            for g, p, s in re.findall(r"GUID\.+(0x[0-9a-fA-F]+).*?Priority\.+(\d+)\s+SMState\.+(\d+)", result.stdout, re.S)
        }
        if all(records.get(g, (0, 0))[1] == 2 for g in wanted):
            break
        time.sleep(0.5)
    for guid, sm in wanted.items():
        priority, state = records.get(guid, (-1, -1))
        line = f"{sm.host} ({guid}): priority {priority}, SMState {state} ({SM_STATES.get(state, 'not listed')})"
        if state != 2 or priority != sm.priority:
            bad.append(line + f", planned STANDBY with priority {sm.priority}")
        else:
            evidence.append(line)
    ok = not bad
    report.add(
        Check(
            "standby",
            ok,
            f"{len(wanted)} standby SM(s) in STANDBY under the master" if ok else "a planned standby SM is not STANDBY",
            evidence + bad,
            [] if ok else ["check the standby's port GUID (subnet_managers[].guid) and that its priority is below the master's"],
        )
    )


SM_STATES = {0: "NOTACTIVE", 1: "DISCOVERING", 2: "STANDBY", 3: "MASTER"}


def _planned_links(plan: Plan) -> tuple[dict[str, str], set[tuple[tuple[str, int], tuple[str, int]]]]:
    """Planned name by GUID (switch node GUID, HCA port-1 GUID) and cables by planned names."""
    ib = plan.infiniband
    assert ib is not None
    name_of = {d.guid: d.name for d in plan.devices}
    for server in plan.servers:
        for nic in server.nics:
            name_of[nic.port_guid] = server.name
    links = set()
    per_cage, numbers = ib_port_numbers(plan)
    for link in plan.links:
        a_port = int(link.a.interface.removeprefix("nic")) if link.kind == "server-leaf" else numbers[(link.a.device, link.a.interface)]
        ends = sorted(((link.a.device, a_port), (link.z.device, numbers[(link.z.device, link.z.interface)])))
        links.add((ends[0], ends[1]))
    for sm in ib.subnet_managers:
        if not sm.server:
            name_of[sm.port_guid] = sm.host
            ends = sorted(((sm.host, 1), (sm.leaf, (sm.leaf_port - 1) * per_cage[sm.leaf] + 1)))
            links.add((ends[0], ends[1]))
    return name_of, links


def _check_cabling(report: Report, plan: Plan, sim: Simulation, planned_fabric: IbFabric, timeout: float) -> IbFabric | None:
    result = sim.diag("ibnetdiscover", timeout=timeout)
    if not result.ok:
        report.add(Check("cabling", False, "ibnetdiscover failed", [result.describe()]))
        return None
    (sim.workdir / "ibnetdiscover.out").write_text(result.stdout)
    found = parse_ibnet(result.stdout)
    name_of, planned = _planned_links(plan)
    names: dict[str, str] = {}
    for node in found.nodes.values():
        keys = [node.node_guid] if node.kind == "switch" else node.port_guids()
        names[node.node_id] = next(
            (name_of[k] for k in keys if k in name_of), f"unplanned {node.kind} {node.description!r} {node.node_guid}"
        )
    discovered = {((names[a], ap), (names[b], bp)) for (a, ap), (b, bp) in found.links()}
    discovered = {tuple(sorted(link)) for link in discovered}  # type: ignore[misc]
    switches = {d.name for d in plan.devices}
    seen = set(names.values())
    missing_switches = sorted(switches - seen)
    hcas = (
        {s.name for s in plan.servers} | {sm.host for sm in plan.infiniband.subnet_managers if not sm.server} if plan.infiniband else set()
    )
    missing_hcas = sorted(hcas - seen)
    missing = sorted(planned - discovered)
    extra = sorted(discovered - planned)
    evidence = [
        f"discovered {sum(1 for n in found.nodes.values() if n.kind == 'switch')}/{len(switches)} switches, "
        f"{sum(1 for n in found.nodes.values() if n.kind == 'ca')}/{len(hcas)} HCAs, {len(discovered)}/{len(planned)} cables"
    ]
    evidence += [f"missing switch: {name}" for name in missing_switches[:10]]
    evidence += [f"missing HCA: {name}" for name in missing_hcas[:10]]
    evidence += [f"missing cable: {a} port {ap} <-> {b} port {bp}" for (a, ap), (b, bp) in missing[:20]]
    evidence += [f"unplanned cable: {a} port {ap} <-> {b} port {bp}" for (a, ap), (b, bp) in extra[:20]]
    ok = not (missing_switches or missing_hcas or missing or extra)
    hints = [] if ok else ["re-seat or replace the cables listed (or fix the plan), then run verify again with a fresh ibnetdiscover"]
    report.add(
        Check(
            "cabling",
            ok,
            "every planned switch, HCA and cable discovered, nothing else" if ok else "the fabric differs from the plan",
            evidence,
            hints,
        )
    )
    return found


def _pairs(plan: Plan, count: int) -> list[tuple[str, str, str, str]]:
    """(src host, src port GUID, dst host, dst port GUID) on different leaves, deterministic and spread."""
    by_leaf: dict[str, list[tuple[str, str]]] = {}
    for server in plan.servers:
        by_leaf.setdefault(server.leaf, []).append((server.name, server.nics[0].port_guid))
    leaves = sorted(by_leaf)
    if len(leaves) < 2:
        return []
    pairs = []
    for k in range(count):
        src_leaf = leaves[k % len(leaves)]
        dst_leaf = leaves[(k % len(leaves) + 1 + (k // len(leaves)) % (len(leaves) - 1)) % len(leaves)]
        src = by_leaf[src_leaf][k % len(by_leaf[src_leaf])]
        dst = by_leaf[dst_leaf][(k * 7 + 3) % len(by_leaf[dst_leaf])]
        pairs.append((src[0], src[1], dst[0], dst[1]))
    return pairs


def _check_paths(report: Report, plan: Plan, sim: Simulation, lids: dict[str, int], count: int) -> None:
    role = {d.guid: (d.name, d.role) for d in plan.devices}
    leaf_of = {s.name: s.leaf for s in plan.servers}
    bad: list[str] = []
    shown: list[str] = []
    spines: Counter[str] = Counter()
    pairs = _pairs(plan, count)
    for src, src_guid, dst, dst_guid in pairs:
        if src_guid not in lids or dst_guid not in lids:
            bad.append(f"{src} -> {dst}: no LID (port not discovered)")
            continue
        result = sim.diag("ibtracert", str(lids[src_guid]), str(lids[dst_guid]), timeout=30)
        hops = [norm_guid(g) for g in re.findall(r"-> switch port \{(0x[0-9a-fA-F]+)\}", result.stdout)]
        path = [role.get(g, (g, "?")) for g in hops]
        text = " -> ".join([src, *(name for name, _ in path), dst])
        if not result.ok:
            bad.append(f"{src} -> {dst}: {result.describe()}")
        elif [r for _, r in path] != ["leaf", "spine", "leaf"] or path[0][0] != leaf_of[src] or path[-1][0] != leaf_of[dst]:
            bad.append(f"{text} (expected {leaf_of[src]} -> one spine -> {leaf_of[dst]})")
        else:
            spines[path[1][0]] += 1
            if len(shown) < 3:
                shown.append(text)
    total_spines = sum(1 for d in plan.devices if d.role == "spine")
    ok = not bad and bool(pairs)
    evidence = [
        *shown,
        f"spines used: {len(spines)}/{total_spines} ({', '.join(f'{k} {v}' for k, v in sorted(spines.items()))})",
        *bad[:10],
    ]
    report.add(
        Check(
            "paths",
            ok,
            f"{len(pairs)} host pairs on different leaves, each through exactly one spine"
            if ok
            else f"{len(bad)} of {len(pairs)} paths wrong",
            evidence,
            []
            if ok
            else [
                "check root_guids.conf and the routing engine; a path through two spines or back through a leaf means the tree is not routed as a fat tree"
            ],
        )
    )


def _spread(items: list[str], count: int) -> list[str]:
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def _pkeys(sim: Simulation, lid: int) -> set[int] | None:
    result = sim.diag("smpquery", "pkeys", str(lid), timeout=30)
    if not result.ok:
        return None
    return {int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]{4}\b", result.stdout)} - {0}


def _check_pkeys(report: Report, plan: Plan, sim: Simulation, lids: dict[str, int], sm: SubnetManager, sample: int) -> None:
    ib = plan.infiniband
    assert ib is not None
    host_of = {n.port_guid: s.name for s in plan.servers for n in s.nics}
    # The SM's own port is a full member of every partition (SELF=full): not a sample.
    everyone = [n.port_guid for s in plan.servers for n in s.nics if n.port_guid != sm.port_guid]
    default = 0xFFFF if ib.default_membership == "full" else 0x7FFF
    cache: dict[str, set[int] | None] = {}

    def table(guid: str) -> set[int] | None:
        if guid not in cache:
            cache[guid] = _pkeys(sim, lids[guid]) if guid in lids else None
        return cache[guid]

    bad: list[str] = []
    evidence: list[str] = []
    for part in ib.partitions:
        full, limited = 0x8000 | part.pkey, part.pkey
        want = full if part.membership == "full" else limited
        members = set(part.port_guids)
        checked_in = _spread(sorted(members), sample)
        checked_out = _spread([g for g in everyone if g not in members], sample)
        for guid in checked_in:
            keys = table(guid)
            if keys is None or want not in keys:
                bad.append(f"{part.name}: member {host_of.get(guid, guid)} lacks P_Key 0x{want:04x} (has {_fmt(keys)})")
        for guid in checked_out:
            keys = table(guid)
            if keys is None or full in keys or limited in keys:
                bad.append(f"{part.name}: non-member {host_of.get(guid, guid)} has P_Key 0x{part.pkey:04x} (has {_fmt(keys)})")
        evidence.append(
            f"{part.name} 0x{want:04x}: on {len(checked_in)} sampled member(s), absent on {len(checked_out)} sampled other host(s)"
        )
    for guid in _spread(everyone, min(sample, 4)):
        keys = table(guid)
        if keys is None or default not in keys:
            bad.append(f"Default: {host_of.get(guid, guid)} lacks 0x{default:04x} ({ib.default_membership} member) (has {_fmt(keys)})")
    if everyone:
        evidence.append(f"{host_of[everyone[0]]}: {_fmt(table(everyone[0]))}")
    ok = not bad
    report.add(
        Check(
            "partitions",
            ok,
            f"{len(ib.partitions)} tenant P_Key(s) on members only, Default 0x{default:04x}"
            if ok
            else f"{len(bad)} port(s) with wrong P_Keys",
            evidence + bad[:12],
            [] if ok else ["see the OpenSM log check: a partitions.conf parse error makes OpenSM fall back to an open Default partition"],
        )
    )


def _fmt(keys: set[int] | None) -> str:
    return "no answer" if keys is None else " ".join(f"0x{k:04x}" for k in sorted(keys)) or "none"


def _sl2vl_rows(text: str) -> list[list[int]]:
    return [[int(v) for v in re.findall(r"\|\s*(\d+)", line)] for line in text.splitlines() if line.startswith("ports:")]


def _check_qos(report: Report, plan: Plan, sim: Simulation, lids: dict[str, int], found: IbFabric) -> None:
    ib = plan.infiniband
    assert ib is not None
    if not ib.qos_enabled:
        report.add(Check("QoS", True, "qos.enabled is false: OpenSM's default tables (not checked)"))
        return
    want = list(ib.qos_sl2vl)
    bad: list[str] = []
    evidence: list[str] = []
    by_guid = found.by_node_guid()
    targets: list[tuple[str, list[str]]] = []
    server = plan.servers[0] if plan.servers else None
    if server and server.nics[0].port_guid in lids:
        targets.append((f"{server.name} port 1", ["sl2vl", str(lids[server.nics[0].port_guid])]))
    for role in ("leaf", "spine"):
        device = next((d for d in plan.devices if d.role == role), None)
        node = by_guid.get(device.guid) if device else None
        if device and node and node.lid and node.ports:
            port = max(node.ports)
            targets.append((f"{device.name} out port {port}", ["sl2vl", str(node.lid), str(port)]))
    for label, args in targets:
        result = sim.diag("smpquery", *args, timeout=30)
        rows = _sl2vl_rows(result.stdout)
        wrong = [row for row in rows if row != want]
        if not result.ok or not rows or wrong:
            bad.append(f"{label}: SL2VL {wrong[0] if wrong else result.describe()} (planned {want})")
        else:
            evidence.append(f"{label}: SL2VL {rows[0]} on {len(rows)} input port(s)")
    if server and server.nics[0].port_guid in lids:
        result = sim.diag("smpquery", "vlarb", str(lids[server.nics[0].port_guid]), timeout=30)
        low = _vlarb_low(result.stdout)
        planned = [(int(a), int(b)) for a, b in (pair.split(":") for pair in ib.qos_vlarb_low.split(","))]
        if low[: len(planned)] != planned:
            bad.append(f"{server.name}: low VL arbitration {low} (planned {planned})")
        else:
            evidence.append(f"{server.name}: low VL arbitration {ib.qos_vlarb_low}")
    ok = not bad and bool(targets)
    report.add(
        Check(
            "QoS",
            ok,
            "SL2VL and VL arbitration programmed as planned" if ok else "QoS tables differ from the plan",
            evidence + bad,
            [] if ok else ["check qos.* in the inventory and that opensm.conf has qos TRUE"],
        )
    )


def _vlarb_low(text: str) -> list[tuple[int, int]]:
    section = text.split("# Low priority VL Arbitration Table:", 1)[-1].split("# High priority", 1)[0]
    vls = re.findall(r"0x([0-9a-fA-F]+)", section.split("WEIGHT:", 1)[0])
    weights = re.findall(r"0x([0-9a-fA-F]+)", section.split("WEIGHT:", 1)[-1]) if "WEIGHT:" in section else []
    return [(int(v, 16), int(w, 16)) for v, w in zip(vls, weights, strict=False) if int(w, 16)]
