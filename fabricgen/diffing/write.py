"""Files for `diff --running`: read backups and rendered configs, write remediation/rollback.

The remediation/ and rollback/ folders belong to this command: each run replaces their
`*.cfg` files (atomically per file) and removes those of devices no longer compared, so stale
commands never survive into a change window. Running backups are read as `<device>.cfg`
(the stem is the device name); other files are ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.diffing.running import Remediation
from fabricgen.render.serialize import FABRIC_FRAGMENT
from fabricgen.render.write import atomic_write_text


def read_configs(folder: Path) -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.cfg")) if not path.name.startswith(".")}


def rendered_from_build(out: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Rendered configs and each device's platform, from a build folder (configs/ and the
    device index of plan/fabric.json; a build folder from before the split has plan.json)."""
    index = out / FABRIC_FRAGMENT
    if not index.exists() and (out / "plan.json").exists():
        index = out / "plan.json"
    try:
        plan = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FabricError([Diagnostic(f"{index}: cannot read the rendered plan ({exc}); render first or give the INVENTORY")]) from None
    platform_of = {d["name"]: d["platform"] for d in plan["devices"]}
    configs = {name: text for name, text in read_configs(out / "configs").items() if name in platform_of}
    return configs, platform_of


def _atomic_write(path: Path, text: str) -> None:
    """Atomic, and 0666 minus the umask like any other output (see fabricgen.render.write)."""
    atomic_write_text(path, text)


def write_remediation(out: Path, remediations: list[Remediation]) -> None:
    for kind in ("remediation", "rollback"):
        folder = out / kind
        wanted = {f"{r.device}.cfg": (r.remediation if kind == "remediation" else r.rollback) for r in remediations}
        for name, text in sorted(wanted.items()):
            target = folder / name
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                _atomic_write(target, text)
        if folder.is_dir():
            for stale in sorted(folder.glob("*.cfg")):
                if stale.name not in wanted:
                    stale.unlink()
