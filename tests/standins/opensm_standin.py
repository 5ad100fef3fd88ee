#!/usr/bin/env python3
"""STAND-IN for the opensm service on the test's SM host (there is no InfiniBand HCA in CI).

The real `opensm` exits at once without an HCA, so the deploy test restarts and reloads this
instead. It is not OpenSM: it runs OpenSM's own parser (`opensm -F <conf> -c /dev/null`) on
start, then records which files it "loaded" (SHA-256 of every file in the config folder) and
every start / SIGHUP reload / stop in a state folder the test reads. Like OpenSM it appends
`SUBNET UP` to its log (STATE_DIR/opensm.log) after each (re)load, and `sminfo` answers as
infiniband-diags' `sminfo` would on a one-SM subnet: this SM, MASTER, with the `sm_priority` it
loaded (0 when it is not running).

    opensm_standin.py start|reload|restart|status|stop|sminfo CONFIG_DIR STATE_DIR
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def _event(state: Path, kind: str) -> None:
    with (state / "events").open("a") as handle:
        handle.write(kind + "\n")


def _load(config: Path, state: Path, kind: str) -> None:
    conf = config / "opensm.conf"
    if conf.is_file():
        out = subprocess.run(["opensm", "-F", str(conf), "-c", "/dev/null"], capture_output=True, text=True, check=False)
        (state / "parser.log").write_text(out.stdout + out.stderr)
    loaded = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(config.iterdir()) if p.is_file() and not p.name.endswith("~")
    }
    (state / "loaded.json").write_text(json.dumps(loaded, sort_keys=True))
    priority = "0"
    if conf.is_file():
        for line in conf.read_text().splitlines():
            if line.split()[:1] == ["sm_priority"]:
                priority = line.split()[1]
    (state / "priority").write_text(priority)
    with (state / "opensm.log").open("a") as handle:
        handle.write(f"SUBNET UP ({kind})\n")
    _event(state, kind)


def _events(state: Path) -> int:
    path = state / "events"
    return path.read_text().count("\n") if path.exists() else 0


def _pid(state: Path) -> int | None:
    try:
        pid = int((state / "pid").read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def _daemon(config: Path, state: Path) -> None:
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    (state / "pid").write_text(str(os.getpid()))
    signal.signal(signal.SIGHUP, lambda *_: _load(config, state, "reload"))
    signal.signal(signal.SIGTERM, lambda *_: (_event(state, "stop"), os._exit(0)))
    _load(config, state, "start")
    while True:
        signal.pause()


def _until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Wait for `condition` like the service manager waits for a unit, with its deadline: a stand-in
    daemon that never gets there fails the command with what it waited for, never hangs the run."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"opensm stand-in: {what} not seen in {timeout} s")
        time.sleep(0.02)


def main(argv: list[str]) -> int:
    action, config, state = argv[0], Path(argv[1]), Path(argv[2])
    state.mkdir(parents=True, exist_ok=True)
    pid = _pid(state)
    if action in ("stop", "restart") and pid:
        os.kill(pid, signal.SIGTERM)
        _until(lambda: not _pid(state), "the daemon stopped")
        pid = None
    if action in ("start", "restart") and not pid:
        # like `systemctl start` of a forking unit: return once the daemon has read its files
        # (its "start" event), not merely once its pid file exists
        before = _events(state)
        _daemon(config, state)
        _until(lambda: bool(_pid(state)) and _events(state) != before, "the daemon's start event")
        return 0
    if action == "reload":
        if not pid:
            print("opensm stand-in is not running", file=sys.stderr)
            return 1
        before = _events(state)
        os.kill(pid, signal.SIGHUP)
        _until(lambda: _events(state) != before, "the daemon's reload event")
        return 0
    if action == "status":
        return 0 if pid else 3
    if action == "sminfo":
        if not pid:
            print("sminfo: iberror: failed: query", file=sys.stderr)
            return 1
        priority = (state / "priority").read_text().strip()
        print(f"sminfo: sm lid 1 sm guid 0x02fab00040000021, activity count 42 priority {priority} state 3 SMINFO_MASTER")
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
