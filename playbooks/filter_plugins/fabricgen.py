"""Ansible filters for the deploy playbooks; the logic and its tests live in fabricgen.push.postchecks and fabricgen.push."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# The playbooks belong to this checkout: use its fabricgen, whatever else is installed.
_CHECKOUT = str(Path(__file__).resolve().parents[2])
if _CHECKOUT not in sys.path:
    sys.path.insert(0, _CHECKOUT)

from fabricgen.push.filters import ansible_filters  # noqa: E402


class FilterModule:
    """fabricgen_* filters: `show ... | json` -> list of problems (empty = pass), staging, rollout."""

    def filters(self) -> dict[str, Any]:
        return ansible_filters()
