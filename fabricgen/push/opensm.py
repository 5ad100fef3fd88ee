"""Pre-flight checks and protection keys of an OpenSM host, as playbook filters.

The plan names the first upstream OpenSM that computes its links' port rates (NDR: 3.3.24,
data/subnet_managers.yml); an older OpenSM on the SM host would refuse tenant IPoIB joins on
NDR ports, so the role reads the host's own `opensm --version` and refuses before it pushes.
The M_Key, SM_Key and SA_Key are secrets supplied at push time: the rendered opensm.conf never
holds them, the role checks their format and adds them to its private copy of the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fabricgen.checks.ib_sm import version_tuple
from fabricgen.infiniband.verify_software import parse_opensm_version


def opensm_version_problem(output: str, minimum: str, generation: str = "") -> str:
    """'' when `opensm --version` output names a version at least `minimum` ('' = no minimum);
    else why not. An answer of any other shape is a problem (fail closed).

    >>> opensm_version_problem("----\\nOpenSM 3.3.24\\n", "3.3.24")
    ''
    >>> print(opensm_version_problem("----\\nOpenSM 3.3.23\\n", "3.3.24", "NDR"))
    OpenSM 3.3.23 on this host is below 3.3.24, the first upstream OpenSM for the plan's NDR links: install 3.3.24 or later
    >>> opensm_version_problem("opensm: command not found", "3.3.21")
    "`opensm --version` printed no 'OpenSM <version>' line: opensm: command not found"
    """
    version = parse_opensm_version(output)
    if version is None:
        said = " ".join(line.strip() for line in output.splitlines() if line.strip())[:200]
        return f"`opensm --version` printed no 'OpenSM <version>' line: {said}"
    if minimum and version_tuple(version) < version_tuple(minimum):
        links = f"the plan's {generation} links" if generation else "the plan's links"
        return f"OpenSM {version} on this host is below {minimum}, the first upstream OpenSM for {links}: install {minimum} or later"
    return ""


KEY_LINE = re.compile(r"^(m_key|sm_key|sa_key)\s", re.MULTILINE)
HEX64 = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
KEYS_HEADER = "# Protection keys: added by the opensm_deploy role at push time (secrets, not in the rendered file)"


def opensm_key_problems(keys: Mapping[str, Any]) -> list[str]:
    """What is wrong with the push-time keys ({variable name: value}); names only, never a value.

    >>> opensm_key_problems({"opensm_deploy_m_key": "0x1", "opensm_deploy_sm_key": "0x2", "opensm_deploy_sa_key": "0x3"})
    []
    >>> opensm_key_problems({"opensm_deploy_m_key": "", "opensm_deploy_sm_key": "12", "opensm_deploy_sa_key": "0x0"})  # doctest: +NORMALIZE_WHITESPACE
    ['opensm_deploy_m_key is not set', 'opensm_deploy_sm_key is not 0x and 1-16 hex digits (a 64-bit key)',
     'opensm_deploy_sa_key is 0, which turns the protection off']
    >>> opensm_key_problems({"opensm_deploy_m_key": "0x1", "opensm_deploy_sm_key": "0x2", "opensm_deploy_sa_key": "0x02"})
    ['opensm_deploy_sm_key and opensm_deploy_sa_key are the same key: each must be distinct']
    """
    problems: list[str] = []
    valid: dict[str, int] = {}
    for name, value in keys.items():
        text = "" if value is None else str(value).strip()
        if not text:
            problems.append(f"{name} is not set")
        elif not HEX64.match(text):
            problems.append(f"{name} is not 0x and 1-16 hex digits (a 64-bit key)")
        elif int(text, 16) == 0:
            problems.append(f"{name} is 0, which turns the protection off")
        else:
            valid[name] = int(text, 16)
    names = list(valid)
    for i, first in enumerate(names):
        problems += [
            f"{first} and {other} are the same key: each must be distinct" for other in names[i + 1 :] if valid[first] == valid[other]
        ]
    return problems


def opensm_conf_with_keys(text: str, m_key: str, sm_key: str, sa_key: str) -> str:
    """opensm.conf `text` with its key lines (and an earlier keys block) replaced by these keys,
    so a backup that kept keys and a rendered file without them end the same way.

    >>> print(opensm_conf_with_keys("guid 0x1\\nm_key 0x5\\nm_key_lease_period 60\\n", "0xa", "0xb", "0xc"), end="")
    guid 0x1
    m_key_lease_period 60
    <BLANKLINE>
    # Protection keys: added by the opensm_deploy role at push time (secrets, not in the rendered file)
    m_key 0xa
    sm_key 0xb
    sa_key 0xc
    """
    lines = [line for line in text.rstrip("\n").split("\n") if not KEY_LINE.match(line) and line != KEYS_HEADER]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join([*lines, "", KEYS_HEADER, f"m_key {m_key}", f"sm_key {sm_key}", f"sa_key {sa_key}"]) + "\n"
