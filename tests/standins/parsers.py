"""The vendors' own config parsers (`arista.eos` / `cisco.nxos` resource modules, `state: parsed`),
run in-process, for the STAND-IN devices: what a committed config says about interfaces,
addresses, the local ASN and BGP neighbors with their remote-as, as Ansible itself reads it.

Each parser is fed the section its facts code asks the device for (`show running-config |
section ...`), as tests/render_cases.py emulates. Results are cached by config text.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import threading
from functools import lru_cache
from typing import Any

from tests.render_cases import blocks, section

_LOCK = threading.Lock()  # module main() uses process globals (argv, stdout)


def parsed(collection: str, module: str, running_config: str) -> Any:
    """`<collection>.<module>` with state=parsed, exactly as Ansible runs it; its `parsed` result."""
    from ansible.module_utils import basic

    code = importlib.import_module(f"ansible_collections.{collection}.plugins.modules.{module}")
    args = {"ANSIBLE_MODULE_ARGS": {"state": "parsed", "running_config": running_config}}
    with _LOCK:
        saved = basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE
        basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = json.dumps(args).encode(), "legacy"
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
                code.main()
        finally:
            basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = saved
    result = json.loads(out.getvalue())
    return result.get("parsed") or {}


def eos_bestpath_as_path(router: str) -> tuple[str, list[str]]:
    """The `bgp bestpath as-path X` values of an EOS `router bgp` section, read with the
    arista.eos collection's own line parser, and the section without those lines. The collection
    (12.0.0) reads `multipath-relax` from such a line and then refuses its own result (its
    argument spec spells the choice `multipath_relax`), so `eos_bgp_global` gets the rest."""
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.rm_templates.bgp_global import Bgp_globalTemplate

    (parser,) = [p for p in Bgp_globalTemplate.PARSERS if p["name"] == "bgp_params_bestpath_as_path"]
    kept, values = [], []
    for line in router.splitlines():
        match = parser["getval"].match(line)
        if match:
            values.append(match.group("as_path").split()[1])
        else:
            kept.append(line)
    return "\n".join(kept) + "\n", values


COLLECTION = {"eos": ("arista.eos", "eos"), "nxos": ("cisco.nxos", "nxos")}


@lru_cache(maxsize=4096)
def addresses(platform: str, config: str) -> dict[str, str]:
    """{interface (lower case): 'address/len'} from the vendor's l3_interfaces parser."""
    collection, prefix = COLLECTION[platform]
    found = {}
    for entry in parsed(collection, f"{prefix}_l3_interfaces", section(config, r"^interface")) or []:
        for ipv4 in entry.get("ipv4") or []:
            if ipv4.get("address"):
                found[str(entry["name"]).lower()] = str(ipv4["address"])
    return found


@lru_cache(maxsize=4096)
def bgp(platform: str, config: str) -> tuple[str, dict[str, str]]:
    """(local ASN, {neighbor address: remote-as}) from the vendor's bgp_global parser; a remote-as
    inherited from an EOS peer group or an NX-OS peer template is resolved."""
    collection, prefix = COLLECTION[platform]
    router = section(config, r"^router bgp")
    if platform == "eos":
        router, _ = eos_bestpath_as_path(router)
    data = parsed(collection, f"{prefix}_bgp_global", router)
    if not data:
        return "", {}
    groups: dict[str, str] = {}
    if platform == "nxos":
        router = section(config, r"^router bgp")
        templates = parsed(collection, "nxos_bgp_templates", router.split("\n")[0] + "\n" + blocks(config, r"^\s+template peer "))
        groups = {str(t["name"]): str(t.get("remote_as", "")) for t in (templates or {}).get("neighbor", [])}
    neighbors: dict[str, str] = {}
    for entry in data.get("neighbor") or data.get("neighbors") or []:
        address = str(entry.get("neighbor_address") or entry.get("peer") or "")
        remote = str(entry.get("remote_as") or "")
        if address and not address[0].isdigit():
            groups[address] = remote or groups.get(address, "")
            continue
        group = entry.get("peer_group") or (entry.get("inherit") or {}).get("peer")
        merged = neighbors.get(address, "")
        neighbors[address] = remote or merged or groups.get(str(group or ""), "")
    for entry in data.get("neighbor") or data.get("neighbors") or []:  # groups defined after their members
        address = str(entry.get("neighbor_address") or entry.get("peer") or "")
        group = entry.get("peer_group") or (entry.get("inherit") or {}).get("peer")
        if address in neighbors and not neighbors[address] and group:
            neighbors[address] = groups.get(str(group), "")
    return str(data.get("as_number", "")), neighbors
