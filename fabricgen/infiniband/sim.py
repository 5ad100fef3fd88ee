"""Run a simulated InfiniBand fabric: ibsim plus a real OpenSM, and the diag tools against it.

Everything runs in user space and unprivileged (see docs/infiniband.md): ibsim serves the
fabric of a net file on abstract Unix sockets named by a unique `IBSIM_SOCKNAME`; OpenSM and
the infiniband-diags tools reach it through the `libumad2sim.so` preload, which fakes
`/sys/class/infiniband` and `/dev/infiniband` under `sys-<pid>/` in the working directory.

Every process is started here, every wait is bounded, and `close()` stops OpenSM before ibsim
(the other order makes OpenSM log `sim_ctl: ctl failed`). A diag tool blocks forever when no
ibsim listens, hence the timeout on every call.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

PRELOAD_CANDIDATES = ("/usr/lib/*/umad2sim/libumad2sim.so", "/usr/lib/umad2sim/libumad2sim.so", "/usr/lib*/libumad2sim.so")
TOOLS = ("ibsim", "opensm", "ibnetdiscover", "ibtracert", "smpquery")
DEBIAN_PACKAGES = "opensm ibsim-utils infiniband-diags"


class SimulationError(Exception):
    """The simulation could not be set up (tools missing, ibsim did not start, ...)."""


def find_preload() -> str:
    for pattern in PRELOAD_CANDIDATES:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise SimulationError(f"libumad2sim.so not found; install the Debian packages: apt-get install {DEBIAN_PACKAGES}")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


@dataclass(frozen=True, slots=True)
class DiagResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe(self) -> str:
        what = "timed out" if self.timed_out else f"exit {self.returncode}"
        return f"{' '.join(self.args)}: {what}: {(self.stderr or self.stdout).strip()[:300]}"


class Simulation:
    """ibsim serving `net_file`, OpenSM on node `sm_node`; use as a context manager."""

    def __init__(self, workdir: Path, net_file: Path, sm_node: str, *, nodes: int = 0, switches: int = 0, ports: int = 0) -> None:
        self.workdir = workdir
        self.net_file = net_file
        self.sm_node = sm_node
        self.sockname = f"fabricgen-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.preload = find_preload()
        self.limits = (max(nodes + 16, 2048), max(switches + 16, 256), max(ports + 64, 13312))
        self.ibsim: subprocess.Popen[bytes] | None = None
        self.opensm: subprocess.Popen[bytes] | None = None
        self.standbys: list[subprocess.Popen[bytes]] = []
        self.log_file = workdir / "opensm.log"
        self._outputs: list[object] = []

    # -- environment -------------------------------------------------------------------
    def env(self, sim_host: str | None = None) -> dict[str, str]:
        """A minimal environment: nothing from the caller leaks into the simulation."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
            "HOME": str(self.workdir),
            "LANG": "C",
            "IBSIM_SOCKNAME": self.sockname,
            "OSM_CACHE_DIR": str(self.workdir),
            "OSM_TMP_DIR": str(self.workdir),
        }
        if sim_host is not None:
            env["LD_PRELOAD"] = self.preload
            env["SIM_HOST"] = sim_host
        return env

    # -- lifecycle -------------------------------------------------------------------
    def start_ibsim(self, timeout: float = 30.0) -> None:
        out = (self.workdir / "ibsim.out").open("wb")
        self._outputs.append(out)
        nodes, switches, ports = self.limits
        # The console reads a pipe we keep open: at EOF on stdin ibsim spins at 100 % CPU.
        self.ibsim = subprocess.Popen(
            ["ibsim", "-s", "-N", str(nodes), "-S", str(switches), "-P", str(ports), str(self.net_file)],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=self.env(),
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ibsim.poll() is not None:
                raise SimulationError(f"ibsim exited with {self.ibsim.returncode}: {self.ibsim_output()[-800:]}")
            if self._socket_listening():
                return
            time.sleep(0.02)
        raise SimulationError(f"ibsim did not listen on @{self.sockname}:ctl within {timeout:g} s")

    def _socket_listening(self) -> bool:
        try:
            return f"@{self.sockname}:ctl" in Path("/proc/net/unix").read_text()
        except OSError:  # no procfs: trust a running ibsim after its start-up time
            time.sleep(0.5)
            return True

    def start_opensm(self, config: Path, extra: tuple[str, ...] = ()) -> None:
        out = (self.workdir / "opensm.out").open("wb")
        self._outputs.append(out)
        self.opensm = subprocess.Popen(
            ["opensm", "-F", str(config), "-f", str(self.log_file), *extra],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=self.env(self.sm_node),
            start_new_session=True,
        )

    def start_standby(self, config: Path, node: str, folder: Path) -> Path:
        """Another OpenSM (an HA peer) on HCA `node`, with its own cache, log and working folder; returns its log."""
        folder.mkdir(parents=True, exist_ok=True)
        out = (folder / "opensm.out").open("wb")
        self._outputs.append(out)
        env = self.env(node) | {"OSM_CACHE_DIR": str(folder), "OSM_TMP_DIR": str(folder), "HOME": str(folder)}
        log = folder / "opensm.log"
        self.standbys.append(
            subprocess.Popen(
                ["opensm", "-F", str(config), "-f", str(log)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=folder,
                env=env,
                start_new_session=True,
            )
        )
        return log

    def stop_standbys(self) -> None:
        for standby in self.standbys:
            _stop(standby, standby.terminate)
        self.standbys.clear()

    def restart_opensm(self, config: Path, timeout: float) -> bool:
        """Stop the master OpenSM and start it again on the same port; True once it logs SUBNET UP anew.

        umad2sim has no MAD timeouts: an SMP lost while a standby binds its port leaves the
        master waiting for it forever, and no sweep runs again (seen under load)."""
        if self.opensm is not None:
            opensm = self.opensm
            _stop(opensm, opensm.terminate)
        before = self.log().count("SUBNET UP")
        self.start_opensm(config)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log().count("SUBNET UP") > before:
                return True
            time.sleep(0.05)
        return False

    def resweep(self) -> None:
        """SIGHUP the master OpenSM: re-read its files and run a heavy sweep now."""
        if self.opensm is not None and self.opensm.poll() is None:
            self.opensm.send_signal(signal.SIGHUP)

    def wait_for_log(self, needles: tuple[str, ...], timeout: float, log: Path | None = None) -> str | None:
        """The first of `needles` that appears in the OpenSM log (default: the master's) within `timeout`, else None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log() if log is None else _read(log)
            for needle in needles:
                if needle in text:
                    return needle
            if self.opensm is not None and self.opensm.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def ibsim_output(self) -> str:
        try:
            return (self.workdir / "ibsim.out").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def opensm_output(self) -> str:
        try:
            return (self.workdir / "opensm.out").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def diag(self, *args: str, timeout: float = 30.0) -> DiagResult:
        """Run one diag tool on the SM's node; ibsim serves at most 10 clients, so one at a time."""
        try:
            done = subprocess.run(
                list(args),
                capture_output=True,
                text=True,
                cwd=self.workdir,
                env=self.env(self.sm_node),
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return DiagResult(tuple(args), -1, stdout, "", timed_out=True)
        return DiagResult(tuple(args), done.returncode, done.stdout, done.stderr)

    def console(self, command: str) -> None:
        """Send one ibsim console command (e.g. `Unlink "leaf1"[2]`)."""
        if self.ibsim is not None and self.ibsim.stdin is not None and self.ibsim.poll() is None:
            self.ibsim.stdin.write(command.encode() + b"\n")
            self.ibsim.stdin.flush()

    def close(self) -> None:
        """Stop OpenSM, then ibsim; escalate to SIGKILL when a process ignores the polite way."""
        self.stop_standbys()
        if self.opensm is not None:
            _stop(self.opensm, lambda: self.opensm.terminate() if self.opensm else None)
            self.opensm = None
        if self.ibsim is not None:
            ibsim = self.ibsim

            def polite() -> None:
                with contextlib.suppress(OSError, ValueError):
                    if ibsim.stdin is not None:
                        ibsim.stdin.write(b"quit\n")
                        ibsim.stdin.close()

            _stop(ibsim, polite)
            self.ibsim = None
        for out in self._outputs:
            with contextlib.suppress(Exception):
                out.close()  # type: ignore[attr-defined]
        self._outputs.clear()

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _stop(process: subprocess.Popen[bytes], polite: Callable[[], object]) -> None:
    if process.poll() is None:
        with contextlib.suppress(OSError):
            polite()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, 9)
            process.wait(timeout=10)
    if process.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
