"""What a `fabricgen render` of a valid Ethernet inventory does not import: jsonschema (only an
invalid inventory needs it), the InfiniBand render modules, the `analyze`, `ib` and `lab`
command groups, `multiprocessing` at `-j 1`, `socket` (the device pass takes `inet_aton` from
`_socket`) and `importlib.resources` (the data files and templates are found next to the package). Each was a measurable part of the start-up of a small render (docs/scale.md);
a fresh interpreter shows whether one crept back. An invalid inventory still gets
jsonschema's diagnostics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES, ROOT

NOT_NEEDED = (
    "jsonschema",
    "fabricgen.infiniband.topology",
    "fabricgen.infiniband.hosts",
    "fabricgen.analyze.cli",
    "fabricgen.lab.cli",
    "multiprocessing",
    "socket",
    "importlib.resources",
)

PROBE = """
import json, sys
from fabricgen.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"exit": code, "modules": sorted(m for m in %r if m in sys.modules)}))
"""


def _run(*args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (NOT_NEEDED,), *args], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


def test_a_valid_ethernet_render_imports_only_what_it_uses(tmp_path: Path) -> None:
    result = _run("render", str(EXAMPLES / "pod-roce-400g"), "-o", str(tmp_path / "out"), "-q", "-j", "1")
    assert result["exit"] in (0, None), result["stderr"]
    assert result["modules"] == []


def test_more_than_one_process_imports_multiprocessing(tmp_path: Path) -> None:
    """The other side of the lazy import: `-j 2` does fork workers (through `multiprocessing`)."""
    result = _run("render", str(EXAMPLES / "pod-roce-400g"), "-o", str(tmp_path / "out"), "-q", "-j", "2")
    assert result["exit"] in (0, None), result["stderr"]
    assert "multiprocessing" in result["modules"]  # type: ignore[operator]


def test_an_invalid_inventory_gets_jsonschemas_diagnostics(tmp_path: Path) -> None:
    inventory = tmp_path / "fabric.yml"
    text = (EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text(encoding="utf-8")
    inventory.write_text(text.replace("per_spine:", "per_spnie:", 1), encoding="utf-8")
    result = _run("validate", str(inventory))
    assert result["exit"] == 2
    assert "jsonschema" in result["modules"]  # type: ignore[operator]
    assert "unknown key 'per_spnie'" in str(result["stderr"]) and "did you mean 'per_spine'?" in str(result["stderr"])
