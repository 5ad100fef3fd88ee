"""User templates override built-ins per fabric and run sandboxed."""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2.exceptions
import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.render.templating import environment, user_template_dirs
from tests.conftest import EXAMPLES


def test_fabric_templates_override_builtins(tmp_path: Path) -> None:
    inventory = tmp_path / "fab"
    shutil.copytree(EXAMPLES / "pod-roce-400g", inventory)
    (inventory / "templates" / "eos").mkdir(parents=True)
    (inventory / "templates" / "eos" / "device.j2").write_text("hostname {{ device.name }}\n! site override\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(inventory), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert (out / "configs" / "pod1-leaf01.cfg").read_text() == "hostname pod1-leaf01\n! site override\n"


def test_user_templates_are_sandboxed(tmp_path: Path) -> None:
    (tmp_path / "eos").mkdir()
    (tmp_path / "eos" / "evil.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    env = environment(user_template_dirs(None, (tmp_path,)))
    with pytest.raises(jinja2.exceptions.SecurityError):
        env.get_template("eos/evil.j2").render()
