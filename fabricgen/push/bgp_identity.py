"""Which BGP sessions of a switch a change makes two-ended: its own config changes the session's
identity (the neighbor address, the remote AS, the local AS), so the far end must change too
before the session can come back.

Only those sessions may drop during a canary's post-check while the far end has not landed its
half yet. Every other session that was Established must stay Established, even when the far end
also changes in this run (an ECN or QoS change touches every switch, but no session needs it).
The answer comes from this switch's running and staged configs alone: no look at the rest of
the fabric. Each platform's driver reads its own `router bgp` (`Driver.bgp_identity`).
"""

from __future__ import annotations

from fabricgen import platforms as registry


def two_ended_sessions(staged: str, running: str, platform: str) -> list[str]:
    """Neighbor addresses configured on the device whose identity the staged config changes (the
    remote AS or the local AS): the sessions that may drop until the far end's half lands. A
    neighbor the staged config drops is not among them: whether its session may go is the plan's
    call (`baseline.bgp_problems`), so a staged config without `router bgp` excuses nothing.

    `platform` is the fabricgen platform or the Ansible network OS (what the playbooks pass).

    Tested with both platforms' configs in tests/test_push.py (a changed remote AS is two-ended,
    a QoS-only change makes none).
    """
    driver = registry.driver(platform)
    before, after = driver.bgp_identity(running), driver.bgp_identity(staged)
    return sorted(address for address, identity in before.items() if after.get(address, identity) != identity)
