"""Ansible filters for the deploy playbooks; the logic and its tests live in fabricgen.postchecks and fabricgen.push."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    from fabricgen.push.filters import ansible_filters
except ImportError:  # ansible run by another Python than the project's venv: use the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from fabricgen.push.filters import ansible_filters


class FilterModule:
    """fabricgen_* filters: `show ... | json` -> list of problems (empty = pass)."""

    def filters(self) -> dict[str, Any]:
        return ansible_filters()
