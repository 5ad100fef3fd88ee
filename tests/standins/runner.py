"""Run ansible-playbook from the tests and stop, by PID, every process it left behind.

Persistent connections (httpapi's `ansible-connection`, SSH ControlMaster muxes) detach from
ansible-playbook and outlive it. Every run gets a marker in its environment; `stop_marked`
finds the processes carrying that marker (our own, and nothing else) and ends them by PID.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MARKER_VAR = "FABRICGEN_TEST_RUN"


@dataclass
class PlaybookRunner:
    """ansible-playbook with the project's ansible.cfg, a private ANSIBLE_HOME and a marker."""

    workdir: Path
    inventories: Sequence[Path]
    env_extra: dict[str, str] = field(default_factory=dict)
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def backups(self) -> Path:
        """The backup folder (FABRICGEN_BACKUP_DIR) of this run: <it>/<fabric>/running/ etc."""
        return self.workdir / "backups"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
        env.update(
            {
                "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
                "ANSIBLE_HOME": str(self.workdir / "ansible-home"),
                "ANSIBLE_LOCAL_TEMP": str(self.workdir / "ansible-tmp"),
                "ANSIBLE_PERSISTENT_CONTROL_PATH_DIR": str(self.workdir / "pc"),
                "ANSIBLE_SSH_CONTROL_PATH_DIR": str(self.workdir / "cp"),
                "ANSIBLE_NOCOLOR": "1",
                "ANSIBLE_FORCE_COLOR": "0",
                "ANSIBLE_DEPRECATION_WARNINGS": "0",
                "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                MARKER_VAR: self.marker,
                # backups hold full running configs: in the test's own folder, never under build/
                "FABRICGEN_BACKUP_DIR": str(self.backups),
            }
        )
        env.update(self.env_extra)
        return env

    def command(self, playbook: str, *args: str) -> list[str]:
        command = [str(BIN / "ansible-playbook"), str(ROOT / "playbooks" / playbook)]
        for inventory in self.inventories:
            command += ["-i", str(inventory)]
        return command + list(args)

    def run(self, playbook: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(playbook, *args), cwd=ROOT, env=self.env(), capture_output=True, text=True, timeout=timeout, check=False
        )

    def start(self, playbook: str, *args: str, output: Path | None = None) -> subprocess.Popen[str]:
        """ansible-playbook in its own session, so a test can take the controller away mid-change
        (`os.killpg` on this process's id). `output`: a file for stdout and stderr (a pipe nobody
        reads would stall the run once it fills)."""
        sink = output.open("w") if output is not None else subprocess.PIPE
        try:
            return subprocess.Popen(
                self.command(playbook, *args),
                cwd=ROOT,
                env=self.env(),
                stdout=sink,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        finally:
            if output is not None:
                sink.close()  # type: ignore[union-attr]

    def stop_leftovers(self) -> list[int]:
        """End our ControlMasters (`ssh -O exit`), then every process still carrying our marker."""
        for socket in sorted((self.workdir / "cp").glob("*")) if (self.workdir / "cp").is_dir() else []:
            subprocess.run(["ssh", "-o", f"ControlPath={socket}", "-O", "exit", "dummy"], capture_output=True, check=False, timeout=10)
        return stop_marked(self.marker)


def render(inventory: Path, out: Path) -> None:
    """`fabricgen render INVENTORY -o OUT` as an operator runs it before a push (the installed
    command, a process of its own); a refusal fails the test with fabricgen's own message."""
    done = subprocess.run([str(BIN / "fabricgen"), "render", str(inventory), "-o", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def controller_address(inventory: Path) -> str:
    """The address a STAND-IN switch is told the controller comes from
    (`fabricgen_controller_address`): the stand-ins listen on 127.0.0.1, which no real switch
    sees, so the push is declared to come from the last address of the fabric's first allowed
    management source, as a controller on the management network would. Empty: no ACL."""
    import ipaddress

    from fabricgen.pipeline import load_and_plan

    acls = load_and_plan(inventory).plan.control_plane
    if not acls:
        return ""
    network = ipaddress.IPv4Network(acls[0].allowed_sources[0])
    return str(network.broadcast_address - 1)


def marked_pids(marker: str) -> list[int]:
    needle = f"{MARKER_VAR}={marker}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            pids.append(int(entry.name))
    return pids


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line mentions `text` (a test's temporary folder): what must be gone."""
    needle = text.encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def stop_marked(marker: str) -> list[int]:
    pids = marked_pids(marker)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    return pids


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"
