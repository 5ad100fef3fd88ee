"""The file a push stages on a switch, the pre-flight that refuses a lockout, the drift check.

A full replace (EOS `rollback clean-config` in a session, NX-OS `configure replace`) removes
whatever the staged file does not carry. The rendered file carries only what fabricgen owns, so
the staged file is built at push time, in memory or outside `build/`:

- owned sections: the rendered file's (that is the change);
- never-touched sections (users, AAA, SSH/API, SNMP, boot, CoPP, agents): the management
  overlay's (Ansible Vault / environment) when it has them, else the device's, else the
  rendered file's;
- sections matching neither list: the device's own (hotfixes survive; the drift check reports them);
- lines fabricgen owns inside a never-touched section (`owned_lines`: the control-plane ACL's
  applying line in EOS `system control-plane`, NX-OS `line vty`): the rendered file's, in the
  section kept from the overlay or the device.

Secrets enter only through the overlay and the device's running config, both already on the
controller's memory; nothing here writes files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabricgen.platforms.sections import Section, join_sections, split_sections
from fabricgen.push.ownership import Ownership, owned_sections, ownership, redact
from fabricgen.push.reachability import control_plane_problems, reachability_problems


def staged_config(platform: str, rendered: str, running: str, overlay: str = "", keep_device_sections: bool = True) -> str:
    """Rendered owned sections + overlay + the device's untouched sections, as one config.

    `keep_device_sections=False` (authoritative mode): the rendered file and the overlay only.

    Examples per platform: tests/test_push_examples.py.
    """
    owner = ownership(platform)
    if not keep_device_sections:
        running = ""
    overlay_sections = split_sections(overlay)
    overlay_keys = {_key(owner, s) for s in overlay_sections}
    running_never = {owner.never_key(s): s for s in split_sections(running) if owner.is_never(s)}
    rendered_sections = split_sections(rendered)
    lines = {_key(owner, s): owner.owned_children(s) for s in rendered_sections if owner.has_owned_lines(s)}
    result: list[Section] = []
    used: set[str] = set()
    for section in rendered_sections:
        key = _key(owner, section)
        if key in overlay_keys:
            continue  # the overlay's version comes below, in the overlay's order
        if owner.is_never(section):
            used.add(key)
            section = running_never.get(key, section)
        result.append(section)
    result.extend(overlay_sections)
    used |= overlay_keys
    for section in split_sections(running):
        if owner.is_owned(section) or _key(owner, section) in used:
            continue
        result.append(section)
    return join_sections([_with_owned_lines(owner, section, lines) for section in result])


def _with_owned_lines(owner: Ownership, section: Section, rendered: dict[str, tuple[str, ...]]) -> Section:
    """A kept section with fabricgen's lines in it (`owned_lines`: the control-plane ACL's
    applying line) taken from the rendered file: the overlay's or device's own ones replaced,
    removed when the rendered file has none."""
    if not owner.has_owned_lines(section):
        return section
    own = set(owner.owned_children(section))
    kept = tuple(child for child in section.children if child not in own)
    return Section(section.head, kept + rendered.get(_key(owner, section), ()))


def _key(owner: Ownership, section: Section) -> str:
    return owner.never_key(section) if owner.is_never(section) else section.head


@dataclass(frozen=True, slots=True)
class Login:
    """The account and connection the playbook uses on a device."""

    device: str
    user: str
    connection: str
    address: str = ""
    """`ansible_host`: the management address the controller uses (checked when it is the one
    the running config shows on the management interface)."""
    controller: str = ""
    """The address the switch sees the controller connect from (reachability.controller_address):
    what the staged control-plane ACL must permit."""


def _user_line(owner: Ownership, text: str, user: str) -> str | None:
    pattern = owner.user_pattern(user)
    for section in split_sections(text):
        if pattern.search(section.head):
            return section.head
    return None


def _token(pattern: re.Pattern[str], line: str | None) -> str:
    if line is None:
        return ""
    match = pattern.search(line)
    return str(match.group(1)) if match else ""


def lockout_problems(platform: str, staged: str, running: str, login: Login) -> list[str]:
    """Why pushing `staged` would lock Ansible out of the device; empty when it would not.

    Refused: a file without the login user (or, for an account that exists only on TACACS+ /
    RADIUS, without the AAA that authenticates it), one that changes the user's role or
    privilege, one without the API the connection uses (EOS eAPI, NX-OS NX-API, SSH for
    network_cli), one that cuts the management path, and one whose control-plane ACL would not
    let the controller's address in (`reachability.py`).
    """
    owner = ownership(platform)
    problems = []
    before, after = _user_line(owner, running, login.user), _user_line(owner, staged, login.user)
    remote = _remote_login(owner, running) if before is None else []
    if after is None and remote:
        problems.extend(_remote_login_problems(owner, staged, remote, login))
    elif after is None:
        problems.append(f"{login.device}: the staged config has no 'username {login.user}': the push would lock out the login user")
    else:
        for label, pattern in (("role", owner.login_role), ("privilege", owner.login_privilege)):
            was, now = _token(pattern, before), _token(pattern, after)
            if before is not None and was != now:
                problems.append(
                    f"{login.device}: the staged config changes the {label} of '{login.user}' from {was or '-'} to {now or '-'}"
                )
    problems.extend(_api_problems(owner, staged, login))
    problems.extend(reachability_problems(platform, staged, running, login.device, login.address, login.connection))
    problems.extend(control_plane_problems(platform, staged, running, login.device, login.address, login.connection, login.controller))
    return problems


_REMOTE_AAA = re.compile(r"^(aaa authentication login \S+ .*\bgroup\b|aaa group server |tacacs-server |radius-server |ip (tacacs|radius) )")


def _remote_login(owner: Ownership, running: str) -> list[str]:
    """The keys of the running config's sections that authenticate an account without a local
    `username` line (AAA login through a TACACS+ / RADIUS group, its servers and keys)."""
    sections = [s for s in split_sections(running) if _REMOTE_AAA.match(s.head)]
    if not any(s.head.startswith("aaa authentication login") for s in sections):
        return []
    return [_key(owner, s) for s in sections]


def _remote_login_problems(owner: Ownership, staged: str, remote: list[str], login: Login) -> list[str]:
    kept = {_key(owner, s) for s in split_sections(staged)}
    return [
        f"{login.device}: '{login.user}' has no local username and logs in through AAA; the staged config drops '{key}': "
        "the push would lock out the login user"
        for key in remote
        if key not in kept
    ]


def _api_problems(owner: Ownership, staged: str, login: Login) -> list[str]:
    sections = {s.head: s for s in split_sections(staged)}
    problems = []
    for need in owner.api.get(login.connection, ()):
        section = sections.get(need.section)
        if need.forbidden and section is not None:
            problems.append(f"{login.device}: the staged config has '{need.section}': {login.connection} could not reach the device")
        if need.required and section is None:
            problems.append(f"{login.device}: the staged config has no '{need.section}': {login.connection} could not reach the device")
        children = {line.strip() for line in section.children} if section else set()
        for line in need.lines:
            if section is not None and line not in children:
                problems.append(f"{login.device}: '{need.section}' lacks '{line}' in the staged config: {login.connection} would be cut")
        for line in need.not_lines:
            if line in children:
                problems.append(f"{login.device}: '{need.section}' has '{line}' in the staged config: {login.connection} would be cut")
    return problems


def drift(platform: str, running: str, reference: str) -> list[str]:
    """Owned lines that differ between the device and the last post-change backup (`-` missing
    on the device, `+` added on it), defaults dropped, secrets redacted; empty when nobody
    changed the device.
    """
    owner = ownership(platform)
    # The reference is stored redacted: compare redacted with redacted, or every secret-bearing
    # owned line (an NTP key) would count as drift on every run.
    now = _flat(owned_sections(owner, redact(platform, running)))
    then = _flat(owned_sections(owner, redact(platform, reference)))
    now_set, then_set = set(now), set(then)
    return [f"- {line}" for line in then if line not in now_set] + [f"+ {line}" for line in now if line not in then_set]


def _flat(sections: list[Section]) -> list[str]:
    lines = []
    for section in sections:
        lines.append(section.head)
        lines.extend(f"{section.head} / {child.strip()}" for child in section.children)
    return lines
