"""Group variables per switch platform (connection, deploy role, overlay), read from fabricgen's
platform registry (fabricgen/platforms/<os>/platform.yml, `ansible:`) instead of one
group_vars file per platform, so a new platform needs no file here.

The variables apply at the precedence of playbook group_vars/ (they are returned only for the
playbooks folder, where those files were read): above the inventory's group variables, below
any host variable. Their strings are marked trusted for templating, as Ansible marks what it
reads from a group_vars file (ansible-core 2.19 leaves any other string untemplated), so
`fabricgen_overlay: "{{ ... }}"` is evaluated as it was.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ansible.inventory.group import InventoryObjectType
from ansible.plugins.vars import BaseVarsPlugin

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 templates every string

    def trust_as_template(value: str) -> str:
        return value


# The playbooks belong to this checkout: use its fabricgen, whatever else is installed.
_CHECKOUT = str(Path(__file__).resolve().parents[2])
if _CHECKOUT not in sys.path:
    sys.path.insert(0, _CHECKOUT)

from fabricgen.platforms import ansible_group_vars  # noqa: E402

PLAYBOOKS = Path(__file__).resolve().parents[1]


def _trusted(value: Any) -> Any:
    """`value` with every string in it trusted as a template (the registry's files ship with
    fabricgen, as group_vars files shipped with the playbooks)."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {key: _trusted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_trusted(item) for item in value]
    return value


class VarsModule(BaseVarsPlugin):
    """Each platform group's variables, for the hosts of that group."""

    def get_vars(self, loader: Any, path: str, entities: Any, cache: bool = True) -> dict[str, Any]:
        super().get_vars(loader, path, entities)
        if Path(path).resolve() != PLAYBOOKS:
            return {}
        table = ansible_group_vars()
        found: dict[str, Any] = {}
        for entity in entities if isinstance(entities, list) else [entities]:
            if entity.base_type is InventoryObjectType.GROUP and entity.name in table:
                found.update(_trusted(table[entity.name]))
        return found
