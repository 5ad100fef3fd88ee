"""A switch OS is named in its own folders, not across the code (issue #32's done-when).

Outside the platforms' folders (`fabricgen/platforms/<os>/`, `templates/<os>/`,
`playbooks/roles/<os>_*`, for every platform of the registry) and the tests, docs and inventories, at most three tracked files may name a platform the push talks to
(one with a driver: `eos`, `nxos`). The three that must: requirements.yml (the platform's
collection, one line), the published schema (its enum, generated from the registry) and the
catalog (a model lists the OSes it runs). A fourth is a platform branch or table creeping back
into generic code: move it to the platform's folder (platform.yml facts or group variables,
its driver, its role).

The name counted is the platform's identifier as code writes it: lowercase, not inside a longer
word (`eos_deploy`, `arista.eos` count; `videos`, the product names `Arista EOS` and `NX-OS`
in prose do not). A tracked file is read as git stores it: a symlink is its target path.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from fabricgen import platforms as registry
from tests.conftest import ROOT

LIMIT = 3
GENERAL_HOMES = ("tests/", "docs/", "inventories/")
PENDING: tuple[str, ...] = ()
"""Generic files not counted while their platform code moves out (none left: push/bgp_identity.py's
parsers are in fabricgen/platforms/<os>/config_text.py, read through `Driver.bgp_identity`)."""


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    return sorted(name for name in listed.decode().split("\0") if name)


def _text(path: str) -> str:
    full = ROOT / path
    if full.is_symlink():
        return os.readlink(full)
    try:
        return full.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
        return ""  # binary, or deleted in the work tree but not yet in git's index


def platform_homes() -> tuple[str, ...]:
    """The folders of every platform, where naming platforms is the point (a platform's folder may
    say it starts from another), and the ones that may name any."""
    homes: list[str] = list(GENERAL_HOMES)
    for name, data in registry.registry().items():
        folder = Path(data["folder"]).relative_to(ROOT)
        homes += [f"{folder.as_posix()}/", f"templates/{data.get('templates', name)}/", f"playbooks/roles/{name}_"]
    return tuple(sorted(set(homes)))


def files_naming(platform: str, files: Iterable[tuple[str, str]]) -> list[str]:
    """The files (path, text) outside the platform's homes whose text names `platform`."""
    word = re.compile(rf"(?<![A-Za-z]){re.escape(platform)}(?![A-Za-z])")
    homes = platform_homes()
    return [path for path, text in files if not path.startswith(homes) and path not in PENDING and word.search(text)]


def test_at_most_three_files_outside_its_folders_name_a_switch_platform() -> None:
    files = [(path, _text(path)) for path in tracked_files()]
    platforms = sorted(registry.drivers())
    assert platforms, "no platform with a driver: the registry did not load"
    for platform in platforms:
        naming = files_naming(platform, files)
        assert len(naming) <= LIMIT, (
            f"{len(naming)} tracked files outside the platforms' folders, tests, docs and inventories name "
            f"{platform!r} (at most {LIMIT}): {', '.join(naming)}"
        )


def test_what_counts_as_naming_a_platform() -> None:
    files = [
        ("fabricgen/push/table.py", "_PARSERS = {'eos': 1}"),
        ("playbooks/deploy.yml", "eos_deploy_commit_timer"),
        ("requirements.yml", "- name: arista.eos"),
        ("fabricgen/lab/video.py", "videos"),
        ("README.md", "Arista EOS"),
        ("templates/eos/device.j2", "eos"),
        ("playbooks/roles/eos_deploy/defaults/main.yml", "eos_deploy_checks"),
        ("docs/deploy.md", "eos"),
        ("fabricgen/platforms/eos/driver.py", "eos"),
        ("fabricgen/platforms/nxos/driver.py", "eos"),
        ("fabricgen/platforms/driver.py", "eos"),
    ]
    assert files_naming("eos", files) == [
        "fabricgen/push/table.py",
        "playbooks/deploy.yml",
        "requirements.yml",
        "fabricgen/platforms/driver.py",
    ]
