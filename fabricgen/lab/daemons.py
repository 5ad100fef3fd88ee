"""FRR and lldpd inside one namespace: start, stop, query.

FRR daemons run with their own path space (`-N <namespace>`: sockets and pid files under
`/var/run/frr/<namespace>/`) and the switch's rendered config (`-f`); lldpd runs in the
foreground of its own session with its own control socket. Every process is stopped by its
pid: those recorded when started, and then whatever is still inside the lab's namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from fabricgen.lab.kernel import LabError, in_namespace, namespace_pids

FRR_BIN = Path("/usr/lib/frr")
FRR_RUN = Path("/var/run/frr")
FRR_DAEMONS = ("zebra", "bgpd", "bfdd")
LLDPD_CHROOT = Path("/run/lldpd")


def frr_installed() -> bool:
    return all((FRR_BIN / d).exists() for d in FRR_DAEMONS) and shutil.which("vtysh") is not None


def lldpd_installed() -> bool:
    return shutil.which("lldpd") is not None and shutil.which("lldpcli") is not None


def _frr_ids() -> tuple[int, int]:
    entry = pwd.getpwnam("frr")
    return entry.pw_uid, entry.pw_gid


def start_frr(namespace: str, config: Path, work: Path, timeout: float = 20, before: Path | None = None) -> None:
    """zebra, bgpd and bfdd daemonised inside `namespace` with path space `namespace`, then the
    integrated config applied through vtysh (which sends each command to the daemon that owns
    it; a daemon reading the integrated file itself stops at the first block it does not know).
    `before`: the lab's own lines (log file), applied first, so `config` runs as written."""
    uid, gid = _frr_ids()
    run_dir = FRR_RUN / namespace
    run_dir.mkdir(parents=True, exist_ok=True)
    empty = work / "empty.conf"
    empty.write_text("")
    for path in (run_dir, work, config, empty, *([before] if before else [])):
        os.chown(path, uid, gid)
    for daemon in FRR_DAEMONS:
        argv = [str(FRR_BIN / daemon), "-d", "-N", namespace, "-f", str(empty), "-i", str(run_dir / f"{daemon}.pid"), "-P", "0"]
        if daemon == "zebra":
            argv += ["-s", "16777216"]
        in_namespace(namespace, argv, timeout=30)
    if before:
        apply_config(namespace, before, timeout)
    apply_config(namespace, config, timeout)


def apply_config(namespace: str, config: Path, timeout: float = 20) -> None:
    """`vtysh -f CONFIG` against the namespace's FRR, retried until its daemons answer."""
    deadline = time.monotonic() + timeout
    while True:
        done = in_namespace(namespace, ["vtysh", "-N", namespace, "-f", str(config)], timeout=60, check=False)
        problems = [line for line in (done.stdout + done.stderr).splitlines() if line.strip() and not _notice(line)]
        if done.returncode == 0 and not problems:
            return
        if time.monotonic() > deadline:
            raise LabError(f"{namespace}: FRR refused {config}: exit {done.returncode}: " + " | ".join(problems[:5]))
        time.sleep(0.3)


FRR_NOTICES = (
    "vtysh.conf",
    # FRR 8.4 prints this on `bgp graceful-restart-disable` and applies it (exit 0); the lab
    # starts the daemons with no peers, so there is nothing to reset.
    "Graceful restart configuration changed, reset all peers to take effect",
)


def _notice(line: str) -> bool:
    """An informational line of vtysh, not a refused command."""
    return any(notice in line for notice in FRR_NOTICES)


def remove_frr_paths(namespace: str) -> None:
    """The FRR path space of a namespace (its processes are stopped with the namespace's)."""
    shutil.rmtree(FRR_RUN / namespace, ignore_errors=True)


def start_lldpd(namespace: str, work: Path, config: Path, ports: str = "swp*") -> int:
    """lldpd in the foreground of its own session (no shared /run/lldpd.pid) on the ports whose
    names match `ports`; returns its pid."""
    LLDPD_CHROOT.mkdir(parents=True, exist_ok=True)
    log = (work / "lldpd.log").open("ab")
    argv = ["ip", "netns", "exec", namespace, "lldpd", "-d", "-u", str(work / "lldpd.sock"), "-O", str(config), "-I", ports]
    process = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    log.close()
    (work / "lldpd.pid").write_text(f"{process.pid}\n")
    return process.pid


def kill_remaining(namespace: str, grace: float = 3.0) -> None:
    """Whatever still runs inside the lab's namespace (started by the lab): TERM, then KILL."""
    deadline = time.monotonic() + grace
    pids = namespace_pids(namespace)
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    while pids and time.monotonic() < deadline:
        time.sleep(0.1)
        pids = namespace_pids(namespace)
    for pid in pids:
        _signal(pid, signal.SIGKILL)


def pause(namespace: str, resume: bool = False) -> None:
    """Freeze (SIGSTOP) or thaw (SIGCONT) every process of a namespace."""
    for pid in namespace_pids(namespace):
        _signal(pid, signal.SIGCONT if resume else signal.SIGSTOP)


def vtysh_json(namespace: str, command: str, daemon: str = "bgpd", timeout: float = 60) -> Any:
    """One `show ... json` of the switch's FRR (vtysh -N talks to that path space only)."""
    done = in_namespace(namespace, ["vtysh", "-N", namespace, "-d", daemon, "-c", command], timeout=timeout, check=False)
    if done.returncode != 0:
        raise LabError(f"{namespace}: vtysh {command!r}: {done.stderr.strip() or done.stdout.strip()}")
    try:
        return json.loads(done.stdout or "{}")
    except json.JSONDecodeError as exc:
        raise LabError(f"{namespace}: vtysh {command!r}: not JSON: {done.stdout[:200]!r}") from exc


def vtysh(namespace: str, *commands: str, timeout: float = 30) -> str:
    """Run vtysh commands (`-c` each, in order) against the switch's FRR; returns the output."""
    argv = ["vtysh", "-N", namespace]
    for command in commands:
        argv += ["-c", command]
    return in_namespace(namespace, argv, timeout=timeout).stdout


def lldp_neighbors(namespace: str, work: Path) -> Any:
    done = in_namespace(namespace, ["lldpcli", "-u", str(work / "lldpd.sock"), "-f", "json", "show", "neighbors"], timeout=60, check=False)
    if done.returncode != 0:
        raise LabError(f"{namespace}: lldpcli show neighbors: {done.stderr.strip()}")
    return json.loads(done.stdout or "{}")


def _read_pid(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
