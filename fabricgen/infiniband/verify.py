"""`fabricgen ib verify`: bring the planned fabric up in ibsim, run the real OpenSM with the
rendered configuration, and check what it programmed.

SUBNET UP is not success (OpenSM silently falls back to minhop, and to an open Default
partition on a partitions.conf parse error), so each check looks at what OpenSM logged and
what the diag tools read back from the simulated switches and HCAs:

1. opensm.conf passes OpenSM's own parser (`opensm -c`), partitions.conf passes ours;
2. `<engine> tables configured on all switches` for the planned engine, with a diagnosis from
   the log when another engine ran; for ftree no ftree error (`ERR AB24` for a root GUID that
   is not in the fabric, ...) and as many rank-0 switches as planned spines (verify_routing);
3. the SM is MASTER on the planned port GUID (`sminfo`), every other planned SM STANDBY;
4. every planned switch, HCA and cable is discovered, nothing unplanned (`ibnetdiscover`);
5. paths between HCA ports on different leaves cross exactly one spine (`ibtracert`, a bounded,
   deterministic sample of port pairs, every NIC of every server, rail leaves included);
6. every leaf's forwarding table sends leaf-to-leaf routes over every planned spine, evenly
   (`dump_lfts`: the whole table, not a sample);
7. every HCA port holds exactly its planned P_Keys, and the rendered members are the plan's and
   the fabric's (`smpquery pkeys` on every port; verify_partitions);
8. with QoS, SL2VL and VL arbitration tables as planned (`smpquery sl2vl / vlarb`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from fabricgen.core.model import Plan, SubnetManager
from fabricgen.infiniband.ibnet import IbFabric, norm_guid, parse_ibnet
from fabricgen.infiniband.partitions import check_partitions
from fabricgen.infiniband.pkeys import planned_master
from fabricgen.infiniband.sim import Simulation, SimulationError, missing_tools
from fabricgen.infiniband.topology import hca_id, host_end, ib_port_numbers
from fabricgen.infiniband.verify_partitions import check_partition_tables
from fabricgen.infiniband.verify_report import Check, Report
from fabricgen.infiniband.verify_routing import check_spine_routes, check_tree

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


@dataclass(frozen=True, slots=True)
class Options:
    sm_host: str | None = None
    pairs: int = 64
    sample: int = 16
    """Ignored (kept for callers): every HCA port's P_Key table is checked."""
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
    return planned_master(ib)


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
        check_tree(report, plan, log)
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
        check_spine_routes(report, plan, sim, discovered)
        rendered = conf_dir / "partitions.conf"
        check_partition_tables(report, plan, sim, lids, sm, rendered.read_text() if rendered.is_file() else None, discovered)
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
    _wait_quiet(sim)
    evidence, bad = _standby_attempt(plan, files, sim, fabric, others, workdir / "standby")
    for attempt in range(2, STANDBY_ATTEMPTS + 1):
        if not any("not listed" in line or "STANDBY state" in line for line in bad):
            break
        # A master that lost one SMP to a binding standby never sweeps again in the simulator
        # (umad2sim has no MAD timeouts): restart the master (same port, same files) and the
        # standbys, and judge the next attempt.
        sim.stop_standbys()
        if not sim.restart_opensm(workdir / "opensm.conf", 60):
            break
        _wait_quiet(sim)
        first = [f"attempt {attempt - 1} (then the master was restarted): {line}" for line in bad]
        evidence, bad = _standby_attempt(plan, files, sim, fabric, others, workdir / f"standby-{attempt}")
        evidence = first + evidence
    wanted = [sm for sm in others if not any(line.startswith(sm.host) for line in bad)]
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
STANDBY_ATTEMPTS = 3


def _wait_quiet(sim: Simulation, quiet: float = 1.0, limit: float = 15.0) -> None:
    """Wait until the master's log has not grown for `quiet` seconds (its start-up sweeps are
    done): a standby that binds during a sweep can lose the master's SMInfo query in ibsim."""
    deadline = time.monotonic() + limit
    size, since = len(sim.log()), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now_size = len(sim.log())
        if now_size != size:
            size, since = now_size, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


def _standby_attempt(
    plan: Plan, files: dict[str, str], sim: Simulation, fabric: IbFabric, others: list[SubnetManager], root: Path
) -> tuple[list[str], list[str]]:
    """Start the standbys with their rendered files under `root`; (evidence, problems)."""
    ib = plan.infiniband
    assert ib is not None
    evidence: list[str] = []
    bad: list[str] = []
    logs = {}
    for sm in others:
        node = _sim_node_of(fabric, sm.port_guid)
        prefix = f"opensm/{sm.host}/"
        if node is None or f"{prefix}opensm.conf" not in files:
            bad.append(f"{sm.host}: no HCA port {sm.port_guid} in the topology or no rendered opensm.conf")
            continue
        folder = root / sm.host
        conf_dir = folder / "conf"
        conf_dir.mkdir(parents=True)
        for path, text in files.items():
            if path.startswith(prefix):
                (conf_dir / path.removeprefix(prefix)).write_text(text)
        config = folder / "opensm.conf"
        config.write_text(relocate_config(files[f"{prefix}opensm.conf"], conf_dir, folder))
        logs[sm.host] = sim.start_standby(config, node, folder)
    # A standby enters STANDBY once it has seen the master's SMInfo; allow two sweep intervals.
    wait = max(30.0, 2.0 * ib.sweep_interval + 10.0)
    for sm in others:
        if sm.host in logs and sim.wait_for_log(("Entering STANDBY state",), wait, logs[sm.host]) is None:
            bad.append(f"{sm.host}: no 'Entering STANDBY state' in its log within {wait:g} s")
    wanted = {sm.port_guid: sm for sm in others if sm.host in logs}
    records = _standby_records(sim, wanted, wait, ib.sweep_interval)
    for guid, sm in wanted.items():
        priority, state = records.get(guid, (-1, -1))
        line = f"{sm.host} ({guid}): priority {priority}, SMState {state} ({SM_STATES.get(state, 'not listed')})"
        if state != 2 or priority != sm.priority:
            bad.append(line + f", planned STANDBY with priority {sm.priority}")
        else:
            evidence.append(line)
    return evidence, bad


def _standby_records(sim: Simulation, wanted: dict[str, SubnetManager], wait: float, sweep_interval: int) -> dict[str, tuple[int, int]]:
    """The master's SMInfo records (`saquery SMIR`): port GUID -> (priority, state).

    The master refreshes them on a sweep, and a loaded machine may miss one: force a heavy
    sweep (SIGHUP) now and again every sweep interval, polling until every wanted SM is
    STANDBY or `wait` seconds (at least two sweep intervals) have passed."""
    records: dict[str, tuple[int, int]] = {}
    deadline = time.monotonic() + wait
    resweep_every = max(2.0, float(sweep_interval or 10))
    last_sweep = -resweep_every
    log_size = 0
    while True:
        now = time.monotonic()
        if now - last_sweep >= resweep_every:
            log_size = len(sim.log())
            sim.resweep()
            last_sweep = now
            time.sleep(0.5)
        elif now - last_sweep > 3.0 and len(sim.log()) == log_size:
            return records  # the forced heavy sweep logged nothing: the master is stuck, waiting longer will not help
        result = sim.diag("saquery", "SMIR", timeout=30)
        records = {
            norm_guid(g): (int(p), int(s))
            for g, p, s in re.findall(r"GUID\.+(0x[0-9a-fA-F]+).*?Priority\.+(\d+)\s+SMState\.+(\d+)", result.stdout, re.S)
        }
        if all(records.get(g, (0, 0))[1] == 2 for g in wanted) or time.monotonic() >= deadline:
            return records
        time.sleep(0.5)


def _planned_links(plan: Plan) -> tuple[dict[str, str], set[tuple[tuple[str, int], tuple[str, int]]]]:
    """Planned name by GUID (switch node GUID, HCA port-1 GUID) and cables by planned names; a
    server's HCAs are its adapters, one per NIC (`<server>/mlx5_N`)."""
    ib = plan.infiniband
    assert ib is not None
    name_of = {d.guid: d.name for d in plan.devices}
    for server in plan.servers:
        for nic in server.nics:
            name_of[nic.port_guid] = hca_id(server.name, nic)
    links = set()
    _per_cage, numbers = ib_port_numbers(plan)
    for link in plan.links:
        # Dedicated SM hosts' cables are plan links (kind sm-leaf): expected and traced like a server's.
        a_end = host_end(link) if link.to_host else (link.a.device, numbers[(link.a.device, link.a.interface)])
        ends = sorted((a_end, (link.z.device, numbers[(link.z.device, link.z.interface)])))
        links.add((ends[0], ends[1]))
    for sm in ib.subnet_managers:
        if not sm.server:
            name_of[sm.port_guid] = sm.host
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
    hcas = {hca_id(s.name, n) for s in plan.servers for n in s.nics}
    hcas |= {sm.host for sm in plan.infiniband.subnet_managers if not sm.server} if plan.infiniband else set()
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


def _pairs(plan: Plan, count: int) -> list[tuple[str, str, str, str, str, str]]:
    """(src name, src port GUID, src leaf, dst name, dst port GUID, dst leaf): HCA ports on
    different leaves, deterministic and spread over every NIC of every server.

    Ports, not servers: a rail-optimised server has one port on each rail leaf, and on a leaf
    the n-th NICs of all servers sit at the same offset, where ftree gives them the same spine."""
    by_leaf: dict[str, list[tuple[str, str]]] = {}
    for server in plan.servers:
        for nic in server.nics:
            by_leaf.setdefault(nic.leaf, []).append((f"{server.name}/{nic.nic}" if len(server.nics) > 1 else server.name, nic.port_guid))
    leaves = sorted(by_leaf)
    if len(leaves) < 2:
        return []
    pairs = []
    for k in range(count):
        src_leaf = leaves[k % len(leaves)]
        dst_leaf = leaves[(k % len(leaves) + 1 + (k // len(leaves)) % (len(leaves) - 1)) % len(leaves)]
        src = by_leaf[src_leaf][(k // len(leaves)) % len(by_leaf[src_leaf])]
        dst = by_leaf[dst_leaf][(k * 7 + 3) % len(by_leaf[dst_leaf])]
        pairs.append((src[0], src[1], src_leaf, dst[0], dst[1], dst_leaf))
    return pairs


def _check_paths(report: Report, plan: Plan, sim: Simulation, lids: dict[str, int], count: int) -> None:
    role = {d.guid: (d.name, d.role) for d in plan.devices}
    bad: list[str] = []
    shown: list[str] = []
    spines: Counter[str] = Counter()
    pairs = _pairs(plan, count)
    for src, src_guid, src_leaf, dst, dst_guid, dst_leaf in pairs:
        if src_guid not in lids or dst_guid not in lids:
            bad.append(f"{src} -> {dst}: no LID (port not discovered)")
            continue
        result = sim.diag("ibtracert", str(lids[src_guid]), str(lids[dst_guid]), timeout=30)
        hops = [norm_guid(g) for g in re.findall(r"-> switch port \{(0x[0-9a-fA-F]+)\}", result.stdout)]
        path = [role.get(g, (g, "?")) for g in hops]
        text = " -> ".join([src, *(name for name, _ in path), dst])
        if not result.ok:
            bad.append(f"{src} -> {dst}: {result.describe()}")
        elif [r for _, r in path] != ["leaf", "spine", "leaf"] or path[0][0] != src_leaf or path[-1][0] != dst_leaf:
            bad.append(f"{text} (expected {src_leaf} -> one spine -> {dst_leaf})")
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
    if not pairs:
        hints = ["the plan has HCA ports on fewer than two leaves: there is no leaf-to-leaf path to trace"]
    elif bad:
        hints = [
            "check root_guids.conf and the routing engine; a path through two spines or back through a leaf means the tree is not routed as a fat tree"
        ]
    else:
        hints = []
    summary = (
        f"{len(pairs)} HCA port pairs on different leaves, each through exactly one spine"
        if ok
        else "no HCA port pairs on different leaves to trace"
        if not pairs
        else f"{len(bad)} of {len(pairs)} paths wrong"
    )
    report.add(Check("paths", ok, summary, evidence, hints))


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
        for table, text in (("low", ib.qos_vlarb_low), ("high", ib.qos_vlarb_high)):
            programmed = _vlarb(result.stdout, table)
            planned = [(int(a), int(b)) for a, b in (pair.split(":") for pair in text.split(",")) if int(b)]
            if programmed != planned:
                bad.append(f"{server.name}: {table} VL arbitration {programmed} (planned {planned})")
            else:
                evidence.append(
                    f"{server.name}: {table} VL arbitration {', '.join(f'{v}:{w}' for v, w in programmed) or 'empty (every weight 0)'}"
                )
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


def _vlarb(text: str, table: str) -> list[tuple[int, int]]:
    """(VL, weight) entries with a weight of a `smpquery vlarb` table ("low" or "high").

    >>> _vlarb("# Low priority VL Arbitration Table:\\nVL    : |0x0 |0x1 |\\nWEIGHT: |0x40|0x0 |\\n"
    ...        "# High priority VL Arbitration Table:\\nVL    : |0x0 |\\nWEIGHT: |0x4 |\\n", "low")
    [(0, 64)]
    """
    marker = "# Low priority VL Arbitration Table:" if table == "low" else "# High priority VL Arbitration Table:"
    section = text.split(marker, 1)[-1] if marker in text else ""
    if table == "low":
        section = section.split("# High priority", 1)[0]
    vls = re.findall(r"0x([0-9a-fA-F]+)", section.split("WEIGHT:", 1)[0])
    weights = re.findall(r"0x([0-9a-fA-F]+)", section.split("WEIGHT:", 1)[-1]) if "WEIGHT:" in section else []
    return [(int(v, 16), int(w, 16)) for v, w in zip(vls, weights, strict=False) if int(w, 16)]
