"""Action `fabricgen_diff`: report a device's own diff as this task's diff and changed status.

A platform collection's `*_command` module returns text; Ansible shows a diff under --diff only
when a task result carries one. This action turns the device's own diff (a config session's
diff, a replace's show-patch; the platform's role reads it with its driver's filter) into that
result, so `--check --diff` prints per device exactly what would change, and a task that would
change nothing reports ok.
"""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("lines", "header"))

    def run(self, tmp: Any = None, task_vars: Any = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        lines = self._task.args.get("lines") or []
        if isinstance(lines, str):
            lines = lines.splitlines()
        lines = [str(line) for line in lines]
        header = str(self._task.args.get("header", "device diff"))
        result["changed"] = bool(lines)
        result["lines"] = lines
        if lines:
            result["diff"] = {"prepared": f"--- {header}\n" + "\n".join(lines) + "\n"}
        return result
