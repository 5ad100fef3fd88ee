"""deploy.yml / rollback.yml on an OpenSM host, for real over SSH.

The test starts its own sshd on 127.0.0.1 (a free port, key authentication only, throwaway
keys in the test's temporary folder, the current user), points the `opensm` group of a real
`fabricgen render` inventory at it and runs the playbooks. Checked: files installed and the
reload handler ran (SIGHUP) or the restart one (an option read at start changed); a second run
reports no change; --check --diff changes nothing; an invalid file is rejected and the live
config stays; rollback restores the backup.

There is no InfiniBand HCA in CI, so the service being reloaded is a STAND-IN
(tests/standins/opensm_standin.py) that runs OpenSM's real parser and records what it loaded.
Everything started here is stopped by PID: sshd, the stand-in daemon (from its pidfile), the
ControlMaster (`ssh -O exit`) and anything else carrying the run's marker.
"""

from __future__ import annotations

import contextlib
import getpass
import grp
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import wait_until
from tests.standins.runner import BIN, ROOT, PlaybookRunner, marked_pids, processes_mentioning

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
pytestmark = [
    pytest.mark.skipif(shutil.which("ansible-playbook", path=str(BIN)) is None, reason="needs the deploy extra (ansible)"),
    pytest.mark.skipif(not Path(SSHD).exists() or shutil.which("opensm") is None, reason="needs openssh-server and opensm"),
]

STANDINS = ROOT / "tests" / "standins"
# Restart-only option (read at start) absent from the rendered file: appending it forces a restart.
RESTART_ONLY = "max_reverse_hops 1\n"
# The subnet's protection keys, supplied at push time through the environment (never rendered).
KEYS = {"m_key": "0x5eed5eed0000a001", "sm_key": "0x5eed5eed0000b002", "sa_key": "0x5eed5eed0000c003"}
KEYS_ENV = {f"FABRICGEN_OPENSM_{name.upper()}": value for name, value in KEYS.items()}
KEY_LINES = "".join(f"{name} {value}\n" for name, value in KEYS.items())


def _without_keys(text: str) -> str:
    """A live opensm.conf without the block of keys the role adds (what was rendered)."""
    return text.split("\n# Protection keys:")[0].rstrip("\n") + "\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SmHost:
    build: Path
    rendered: Path  # build/<fabric>/opensm/<host>/
    live: Path  # the SM host's /etc/opensm stand-in folder
    default: Path  # the SM host's /etc/default/opensm stand-in file
    state: Path  # what the opensm stand-in loaded
    runner: PlaybookRunner

    def run(self, playbook: str, *args: str) -> subprocess.CompletedProcess[str]:
        result = self.runner.run(playbook, "--limit", self.rendered.name, *args)
        self.runner.stop_leftovers()
        return result

    def events(self) -> list[str]:
        path = self.state / "events"
        return path.read_text().split() if path.exists() else []

    def loaded(self) -> dict[str, str]:
        return dict(json.loads((self.state / "loaded.json").read_text()))

    def live_digests(self) -> dict[str, str]:
        return {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.live.iterdir())
            if p.is_file() and not p.name.endswith("~")
        }


def _render_ib(tmp: Path) -> tuple[Path, str]:
    """Render the bundled InfiniBand example: build/ib1/opensm/<sm host>/ and the inventory."""
    build = tmp / "build" / "ib1"
    command = [str(BIN / "fabricgen"), "render", str(ROOT / "inventories" / "ib-hdr"), "-o", str(build)]
    subprocess.run(command, check=True, capture_output=True)
    hosts = yaml.safe_load((build / "ansible" / "hosts.yml").read_text())["all"]["children"]["opensm"]["hosts"]
    host = sorted(hosts)[0]
    assert (build / "opensm" / host / "partitions.conf").is_file()
    return build, host


@pytest.fixture
def sm(tmp_path: Path) -> Iterator[SmHost]:
    user = getpass.getuser()
    keys = tmp_path / "keys"
    keys.mkdir()
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "client.pub").read_text())
    os.chmod(keys / "authorized_keys", 0o600)
    port = _free_port()
    config = tmp_path / "sshd_config"
    config.write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {keys / 'host'}\nPidFile {tmp_path / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nAllowUsers {user}\nPasswordAuthentication no\n"
        f"KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\n"
        "Subsystem sftp internal-sftp\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True) if os.geteuid() == 0 else None
    subprocess.run([SSHD, "-t", "-f", str(config)], check=True)
    sshd = subprocess.Popen([SSHD, "-D", "-f", str(config), "-E", str(tmp_path / "sshd.log")])
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(
        f"[127.0.0.1]:{port} {(keys / 'host.pub').read_text().split(' ', 2)[0]} {(keys / 'host.pub').read_text().split()[1]}\n"
    )

    build, host = _render_ib(tmp_path)
    live, state = tmp_path / "sm" / "etc-opensm", tmp_path / "sm" / "state"
    live.mkdir(parents=True)
    # The SM host before the change: the rendered files, but an older partitions.conf (the last
    # partition missing) and no QoS policy yet.
    rendered = build / "opensm" / host
    for path in rendered.iterdir():
        if path.name not in ("partitions.conf", "qos-policy.conf", "default-opensm"):
            shutil.copy(path, live / path.name)
    # The SM host's /etc/default/opensm (a stand-in path): already the planned PORTS=.
    shutil.copy(rendered / "default-opensm", tmp_path / "sm" / "etc-default-opensm")
    partitions = (rendered / "partitions.conf").read_text()
    (live / "partitions.conf").write_text(partitions[: partitions.rindex("\n#")] + "\n")
    control = [sys.executable, str(STANDINS / "opensm_standin.py")]
    subprocess.run([*control, "start", str(live), str(state)], check=True)

    inventory = tmp_path / "sshd-target.yml"
    host_vars = {
        "ansible_host": "127.0.0.1",
        "ansible_port": port,
        "ansible_user": user,
        "ansible_become": False,
        "ansible_ssh_private_key_file": str(keys / "client"),
        "ansible_ssh_common_args": f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes",
        "ansible_python_interpreter": sys.executable,
        "opensm_deploy_dir": str(live),
        "opensm_deploy_owner": user,
        "opensm_deploy_group": grp.getgrgid(os.getgid()).gr_name,
        "opensm_deploy_conf_validator": str(tmp_path / "sm" / "fabricgen-opensm-validate-conf"),
        "opensm_deploy_default_file": str(tmp_path / "sm" / "etc-default-opensm"),
        "opensm_deploy_ports_commands": [[*control, "stop", str(live), str(state)], [*control, "start", str(live), str(state)]],
        "opensm_deploy_reload_command": [*control, "reload", str(live), str(state)],
        "opensm_deploy_restart_command": [*control, "restart", str(live), str(state)],
        "opensm_deploy_status_command": [*control, "status", str(live), str(state)],
        "opensm_deploy_sminfo_command": [*control, "sminfo", str(live), str(state)],
        "opensm_deploy_subnet_up_command": ["grep", "-c", "SUBNET UP", str(state / "opensm.log")],
        "opensm_deploy_wait_delay": 1,
        "opensm_deploy_wait_retries": 2,
    }
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {host: host_vars}}}))
    runner = PlaybookRunner(tmp_path, [build / "ansible" / "hosts.yml", inventory], {"FABRICGEN_CHANGE_ID": "CHG7", **KEYS_ENV})
    try:
        assert wait_until(lambda: _listening(port), timeout=30, interval=0.02), "sshd never listened"
        yield SmHost(build, build / "opensm" / host, live, tmp_path / "sm" / "etc-default-opensm", state, runner)
    finally:
        runner.stop_leftovers()
        pidfile = state / "pid"
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
        sshd.terminate()
        sshd.wait(timeout=10)

        def left_nothing() -> bool:
            return marked_pids(runner.marker) == [] and processes_mentioning(str(tmp_path)) == []

        assert wait_until(left_nothing, timeout=10), "processes left behind"


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _changed(output: str) -> int:
    line = next(line for line in output.splitlines() if " : ok=" in line)
    return int(line.split("changed=")[1].split()[0])


def test_opensm_push_over_ssh(sm: SmHost) -> None:
    old_partitions = (sm.live / "partitions.conf").read_text()
    rendered_conf = (sm.rendered / "opensm.conf").read_text()
    assert sm.events() == ["start"]

    # 1. The push: files installed, backed up first; partitions / QoS policy change -> SIGHUP, no restart.
    push = sm.run("deploy.yml", "--diff")
    assert push.returncode == 0, push.stdout + push.stderr
    for path in sm.rendered.iterdir():
        live = sm.default if path.name == "default-opensm" else sm.live / path.name
        text = live.read_text()
        assert (_without_keys(text) if path.name == "opensm.conf" else text) == path.read_text(), path.name
    # M_Key protection is planned: the keys from the environment are in the live file (after what
    # was rendered, only root reads it), OpenSM's parser loaded them; never in the rendered file,
    # the output of the push (even with --diff) or the controller's backups.
    live_conf = (sm.live / "opensm.conf").read_text()
    assert live_conf.endswith(KEY_LINES) and "m_key_protection_level 1\n" in live_conf
    assert (sm.live / "opensm.conf").stat().st_mode & 0o777 == 0o600
    assert "Loading Cached Option:m_key = 0x5eed5eed0000a001" in (sm.state / "parser.log").read_text()
    for value in KEYS.values():
        assert value not in rendered_conf and value not in push.stdout + push.stderr
        assert not [p for p in sm.runner.backups.rglob("*") if p.is_file() and value in p.read_text(errors="replace")]
    assert sm.events() == ["start", "reload"]
    assert sm.loaded() == sm.live_digests()  # the reload picked up exactly the pushed files
    assert (sm.runner.backups / "ib1" / "running" / "opensm" / sm.rendered.name / "partitions.conf").read_text() == old_partitions
    assert [p for p in sm.live.iterdir() if p.name.startswith("partitions.conf.") and p.name.endswith("~")]  # remote backup copy

    # 2. A second run changes nothing and reloads nothing.
    again = sm.run("deploy.yml")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _changed(again.stdout) == 0, again.stdout
    assert sm.events() == ["start", "reload"]

    # 3. --check --diff shows a partitions change and writes nothing.
    (sm.rendered / "partitions.conf").write_text((sm.rendered / "partitions.conf").read_text() + "tenant-pending=0x0a7f : ALL=full ;\n")
    before = sm.live_digests()
    check = sm.run("deploy.yml", "--check", "--diff")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "+tenant-pending=0x0a7f" in check.stdout
    assert sm.live_digests() == before and sm.events() == ["start", "reload"]

    # 4. A restart-only option changed: restart, not SIGHUP. --tags opensm_conf pushes
    #    opensm.conf alone (the pending partitions change stays pending).
    (sm.rendered / "opensm.conf").write_text(rendered_conf + RESTART_ONLY)
    restart = sm.run("deploy.yml", "--tags", "opensm_conf")
    assert restart.returncode == 0, restart.stdout + restart.stderr
    assert RESTART_ONLY in (sm.live / "opensm.conf").read_text()
    assert "tenant-pending" not in (sm.live / "partitions.conf").read_text()
    assert sm.events() == ["start", "reload", "stop", "start"]

    # 5. rollback.yml restores the backup taken before step 4, and restarts again.
    back = sm.run("rollback.yml")
    assert back.returncode == 0, back.stdout + back.stderr
    restored = (sm.live / "opensm.conf").read_text()  # the backup kept no keys: the rollback's push added them again
    assert _without_keys(restored) == rendered_conf and restored.endswith(KEY_LINES)
    assert sm.events()[-2:] == ["stop", "start"]
    events = sm.events()

    # 6. Invalid partitions.conf (unterminated definition): `fabricgen ib check-partitions`
    #    rejects it on the controller; OpenSM would have fallen back to an open default.
    (sm.rendered / "opensm.conf").write_text(rendered_conf)
    (sm.rendered / "partitions.conf").write_text((sm.rendered / "partitions.conf").read_text() + "tenant-d=0x0a04 : ALL=full\n")
    live = sm.live_digests()
    bad = sm.run("deploy.yml")
    assert bad.returncode != 0
    assert "not terminated" in bad.stdout + bad.stderr
    assert sm.live_digests() == live and sm.events() == events

    # 7. Invalid opensm.conf: OpenSM's own parser (exit 0, message checked) rejects it on the SM host.
    (sm.rendered / "opensm.conf").write_text(rendered_conf + "rooting_engine minhop\n")
    bad = sm.run("deploy.yml", "--tags", "opensm_conf")
    assert bad.returncode != 0
    assert "Unrecognized token" in bad.stdout + bad.stderr
    assert sm.live_digests() == live and sm.events() == events

    # 8. A reload that leaves the subnet without the planned master fails the host: the wait reads
    #    `sminfo` (the stand-in answers with the priority it loaded), not the systemd state.
    (sm.rendered / "opensm.conf").write_text(rendered_conf.replace("sm_priority 15", "sm_priority 3"))
    wrong = sm.run("deploy.yml", "--tags", "opensm_conf")
    assert wrong.returncode != 0
    said = " ".join(wrong.stdout.split())  # the YAML callback folds long values over lines
    assert "The subnet's master SM is the planned one" in said and "priority 3 state 3 SMINFO_MASTER" in said, wrong.stdout[-3000:]
    assert sm.events()[-1] == "reload"


def test_ports_and_the_opensm_version_on_the_sm_host(sm: SmHost) -> None:
    """/etc/default/opensm as the package ships it (PORTS=ALL: one OpenSM per HCA port) becomes
    the planned port, by a stop and start of opensm.service; an OpenSM older than the plan's
    minimum for its links refuses the push before anything is touched."""
    plan = json.loads((sm.build / "plan" / "fabric.json").read_text())
    guid = {s["host"]: s["port_guid"] for s in plan["infiniband"]["subnet_managers"]}[sm.rendered.name]
    sm.default.write_text("PORTS=ALL\n")
    push = sm.run("deploy.yml")
    assert push.returncode == 0, push.stdout + push.stderr
    assert [line for line in sm.default.read_text().splitlines() if not line.startswith("#")] == [f'PORTS="{guid}"']
    assert sm.events() == ["start", "stop", "start"]  # the wrapper stopped (every instance) and started
    assert (sm.runner.backups / "ib1" / "running" / "opensm" / sm.rendered.name / "default-opensm").read_text() == "PORTS=ALL\n"

    # The host runs Debian 12's OpenSM 3.3.23; a plan for NDR links needs 3.3.24.
    (sm.rendered / "partitions.conf").write_text((sm.rendered / "partitions.conf").read_text() + "\n")
    live, events = sm.live_digests(), sm.events()
    old = sm.run("deploy.yml", "-e", "opensm_minimum_version=3.3.24", "-e", "opensm_link_generation=NDR")
    assert old.returncode != 0
    said = " ".join(old.stdout.split())
    assert "OpenSM 3.3.23 on this host is below 3.3.24, the first upstream OpenSM for the plan's NDR links" in said, old.stdout[-3000:]
    assert sm.live_digests() == live and sm.events() == events


def test_the_reload_addresses_the_instance_unit_of_the_planned_port_guid(tmp_path: Path) -> None:
    """Debian 12's opensm.service is a oneshot wrapper; the daemon runs in opensm@<port GUID>."""
    build, host = _render_ib(tmp_path)
    sm_vars = yaml.safe_load((build / "ansible" / "hosts.yml").read_text())["all"]["children"]["opensm"]["hosts"][host]
    plan = json.loads((build / "plan" / "fabric.json").read_text())
    planned = {sm["host"]: sm["port_guid"] for sm in plan["infiniband"]["subnet_managers"]}
    assert sm_vars["opensm_port_guid"] == planned[host]
    defaults = yaml.safe_load((ROOT / "playbooks" / "roles" / "opensm_deploy" / "defaults" / "main.yml").read_text())
    assert defaults["opensm_deploy_service"] == "opensm@{{ opensm_port_guid }}.service"
    for command in ("reload", "restart", "status"):
        assert defaults[f"opensm_deploy_{command}_command"][-1] == "{{ opensm_deploy_service }}"


def test_protection_planned_without_keys_refuses_the_push(sm: SmHost) -> None:
    """A key missing, malformed or shared refuses before anything is touched, naming the variable
    and never a value."""
    live, events = sm.live_digests(), sm.events()
    missing = sm.run("deploy.yml", "-e", "opensm_deploy_m_key=")
    assert missing.returncode != 0
    said = " ".join(missing.stdout.split())
    assert "M_Key protection is planned (opensm.protection) but opensm_deploy_m_key is not set" in said, missing.stdout[-3000:]
    assert "FABRICGEN_OPENSM_M_KEY" in said
    same = sm.run("deploy.yml", "-e", f"opensm_deploy_sa_key={KEYS['sm_key']}", "-e", "opensm_deploy_m_key=12")
    assert same.returncode != 0
    said = " ".join(same.stdout.split())
    assert (
        "opensm_deploy_m_key is not 0x and 1-16 hex digits" in said
        and "opensm_deploy_sm_key and opensm_deploy_sa_key are the same key" in said
    )
    assert KEYS["sm_key"] not in same.stdout + same.stderr
    assert sm.live_digests() == live and sm.events() == events
