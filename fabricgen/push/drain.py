"""drain.yml, undrain.yml and deploy.yml's `drain_before_change`: the drain as a config change,
and when a drained switch carries no transit traffic, read from its neighbours' routes.

The drain is the platform's own mechanism (`drain:` in `fabricgen/platforms/<os>/platform.yml`,
the lines the templates print for a switch the plan drains): `drained_config` adds them to, or
removes them from, a config text, so the push is an ordinary change of the owned sections
through the platform's role (session or checkpoint, commit timer, post-checks, confirm).

Whether the drain took is device state, never a timer: each BGP neighbour's routing table
(`show ip route`, read through its platform's `Driver.routes`). Drained: no neighbour
load-shares a route over the switch and another switch any more (what only the switch can reach,
its own loopback, stays on it). Undrained: every route through the switch uses every planned
link to it again (the multipath count back to the plan's), and as many routes go through it as
before the drain. An output the driver does not recognise, or a table with no route through any
BGP neighbour, is a problem: the wait never passes on an empty parse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabricgen import platforms as registry
from fabricgen.core.catalog import platforms
from fabricgen.platforms.sections import Section, join_sections, split_sections
from fabricgen.push.baseline import shape_problems

_SHOWN = 3
"""Routes named in a problem before `...`."""


def drain_lines(platform: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The platform's (top-level lines, lines under `router bgp`) of a drained switch, by
    fabricgen name or Ansible network OS."""
    sections = registry.section("drain")
    name = platform if platform in sections else next((n for n, f in platforms().items() if f.ansible_network_os == platform), "")
    if name not in sections:
        raise KeyError(f"no drain mechanism for platform {platform!r} (fabricgen/platforms/<os>/platform.yml, drain:)")
    return tuple(sections[name].get("global_lines") or ()), tuple(sections[name].get("bgp_lines") or ())


def drained_config(text: str, platform: str, drained: bool) -> str:
    """`text` with the platform's drain lines (drained) or without them, placed where the
    templates print them: the `router bgp` lines after its `router-id`, the top-level block
    after the `router bgp` section. Everything else is kept as written.

    >>> cfg = "hostname s1\\nrouter bgp 65000\\n  router-id 10.0.0.1\\n  neighbor 10.1.0.1 remote-as 65101\\n"
    >>> print(drained_config(cfg, "frr", True), end="")
    hostname s1
    router bgp 65000
      router-id 10.0.0.1
      bgp graceful-shutdown
      neighbor 10.1.0.1 remote-as 65101
    >>> drained_config(drained_config(cfg, "frr", True), "frr", False) == cfg
    True

    Each switch platform's lines: tests/test_push_examples.py.
    """
    global_lines, bgp_lines = drain_lines(platform)
    block = Section(global_lines[0], global_lines[1:]) if global_lines else None
    sections = [s for s in split_sections(text) if block is None or s != block]
    result: list[Section] = []
    for section in sections:
        if section.head.startswith("router bgp "):
            section = _with_bgp_lines(section, bgp_lines, drained)
        result.append(section)
        if drained and block is not None and section.head.startswith("router bgp "):
            result.append(block)
    return join_sections(result)


def is_drained(text: str, platform: str) -> bool:
    """Whether `text` carries the platform's drain lines (the plan drains the switch, so an
    undrain after its change would undo the plan).

    >>> is_drained("router bgp 1\\n  router-id 1.1.1.1\\n  bgp graceful-shutdown\\n", "frr")
    True
    """
    return join_sections(split_sections(text)) == drained_config(text, platform, True)


def _with_bgp_lines(section: Section, lines: Sequence[str], drained: bool) -> Section:
    wanted = {line.strip() for line in lines}
    children = [child for child in section.children if child.strip() not in wanted]
    if drained and lines:
        indent = next((c[: len(c) - len(c.lstrip())] for c in section.children), "  ")
        at = next((i + 1 for i, c in enumerate(children) if c.strip().startswith("router-id ")), 0)
        children[at:at] = [f"{indent}{line}" for line in lines]
    return Section(section.head, tuple(children))


def neighbours(switch: str, hostvars: Mapping[str, Any]) -> list[str]:
    """The switch's BGP neighbours that are hosts of the inventory, in the plan's order."""
    found: list[str] = []
    for entry in (hostvars.get(switch) or {}).get("fabricgen_bgp_neighbors") or []:
        peer = str(entry.get("peer", ""))
        if peer in hostvars and peer not in found:
            found.append(peer)
    return found


def neighbours_by_role(switch: str, hostvars: Mapping[str, Any]) -> dict[str, list[str]]:
    """`neighbours` grouped by the platform role that reads their routes (`fabricgen_deploy_role`)."""
    found: dict[str, list[str]] = {}
    for peer in neighbours(switch, hostvars):
        found.setdefault(str(hostvars[peer].get("fabricgen_deploy_role", "")), []).append(peer)
    return dict(sorted(found.items()))


def _links(neighbour: str, switch: str, hostvars: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """(the switch's addresses facing `neighbour`, every BGP neighbour address of `neighbour`)."""
    entries = (hostvars.get(neighbour) or {}).get("fabricgen_bgp_neighbors") or []
    every = frozenset(str(e.get("address")) for e in entries)
    return frozenset(str(e.get("address")) for e in entries if str(e.get("peer", "")) == switch), every


def _parsed(output: Any, neighbour: str, hostvars: Mapping[str, Any]) -> tuple[dict[str, frozenset[str]], list[str]]:
    driver = registry.driver(str((hostvars.get(neighbour) or {}).get("ansible_network_os", "")))
    problems = [f"{neighbour}: {p}" for p in shape_problems(driver, "routes", output)]
    return ({} if problems else driver.routes(output)), problems


def routes_through(output: Any, neighbour: str, switch: str, hostvars: Mapping[str, Any]) -> int:
    """How many of `neighbour`'s routes go through `switch` (-1 when the output is not understood):
    the count before a drain, which the undrain must reach again."""
    routes, problems = _parsed(output, neighbour, hostvars)
    links, _ = _links(neighbour, switch, hostvars)
    return -1 if problems else sum(1 for hops in routes.values() if hops & links)


def route_problems(output: Any, neighbour: str, switch: str, hostvars: Mapping[str, Any], want: str, before: int = -1) -> list[str]:
    """Why `neighbour`'s routing table does not yet show `switch` drained (`want` = "drained")
    or back in its ECMP ("undrained", with `before` routes through it before the drain when
    known); empty when it does."""
    routes, problems = _parsed(output, neighbour, hostvars)
    if problems:
        return problems
    links, every = _links(neighbour, switch, hostvars)
    if not links:
        return [f"{neighbour}: the plan has no BGP session to {switch}"]
    if not any(hops & every for hops in routes.values()):
        return [f"{neighbour}: no route through any BGP neighbour: the routing table was not understood"]
    through = {prefix: hops for prefix, hops in sorted(routes.items()) if hops & links}
    if want == "drained":
        shared = [prefix for prefix, hops in through.items() if hops - links]
        return [f"{neighbour} still load-shares {len(shared)} route(s) over {switch}: {_shown(shared)}"] if shared else []
    narrow = [prefix for prefix, hops in through.items() if not links <= hops]
    found = []
    if narrow:
        found.append(f"{neighbour} uses fewer than the {len(links)} planned links to {switch} for {len(narrow)} route(s): {_shown(narrow)}")
    if len(through) < before:
        found.append(f"{neighbour} routes {len(through)} prefix(es) through {switch}, {before} before the drain")
    if before < 0 and not any(hops - links for hops in through.values()):
        found.append(f"{neighbour} load-shares no route over {switch} and another switch yet")
    return found


def _shown(prefixes: Sequence[str]) -> str:
    return ", ".join(prefixes[:_SHOWN]) + (", ..." if len(prefixes) > _SHOWN else "")


def through_each(reads: Mapping[str, Any], switch: str, hostvars: Mapping[str, Any]) -> dict[str, int]:
    """Neighbour -> how many of its routes go through `switch` (before a drain), for the
    neighbours whose answer was understood."""
    counts = {str(n): routes_through(output, str(n), switch, hostvars) for n, output in sorted(reads.items()) if output is not None}
    return {n: count for n, count in counts.items() if count >= 0}


def verdict(reads: Mapping[str, Any], switch: str, hostvars: Mapping[str, Any], want: str, before: Mapping[str, Any]) -> list[str]:
    """Every neighbour's `route_problems` (a neighbour that did not answer is one), in order."""
    problems: list[str] = []
    for neighbour in neighbours(switch, hostvars):
        output = reads.get(neighbour)
        if output is None:
            problems.append(f"{neighbour}: no answer to show ip route")
            continue
        problems += route_problems(output, neighbour, switch, hostvars, want, int(before.get(neighbour, -1)))
    return problems
