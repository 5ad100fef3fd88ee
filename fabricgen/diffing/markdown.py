"""`fabricgen diff --format markdown`: the change summary a CI job posts on a pull request.

A table of counts first, then the lists a reviewer checks (policy, addresses, host side),
long lists and every per-device config diff folded in `<details>`. A pull-request comment
holds at most 65,536 characters, so config diffs are added until `BUDGET` is reached and the
rest are named with their size: the summary stays postable at any fabric size, and the
generated files stay collapsed in the review (`.gitattributes`).
"""

from __future__ import annotations

import re

from fabricgen.diffing.inventory import PlanDiff

BUDGET = 60_000
"""Characters of one summary, config diffs included (GitHub refuses comments over 65,536)."""
OPEN_ITEMS = 20
"""Lists up to this long are shown open; longer ones are folded."""
LISTED = 100
"""Items of one list written out; the rest are counted (a new pod brings 1,000+ cables)."""


def _fold(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n"


def _items(title: str, items: list[str]) -> str:
    if not items:
        return ""
    body = "".join(f"- `{item}`\n" for item in items[:LISTED])
    if len(items) > LISTED:
        body += f"- ... and {len(items) - LISTED} more (`fabricgen diff --json` lists all)\n"
    if len(items) <= OPEN_ITEMS:
        return f"**{title}** ({len(items)})\n\n{body}\n"
    return _fold(f"<b>{title}</b> ({len(items)})", body) + "\n"


def _counts(diff: PlanDiff) -> str:
    rows = (
        ("devices", len(diff.devices_added), len(diff.devices_removed), len(diff.devices_changed)),
        ("cables", len(diff.cables_added), len(diff.cables_removed), len(diff.cables_changed) + len(diff.cables_moved)),
        ("addresses, ASNs, BGP neighbors", "", "", len(diff.values_changed)),
        ("fabric policy", "", "", len(diff.policy_changed)),
        ("host NICs (hosts.csv)", len(diff.host_nics_added), len(diff.host_nics_removed), len(diff.hosts_changed)),
        ("device configs", "", "", len(diff.config_diffs)),
    )
    lines = ["| | added | removed | changed |", "| --- | --- | --- | --- |"]
    lines += [f"| {what} | {a} | {r} | {c} |" for what, a, r, c in rows]
    return "\n".join(lines) + "\n\n"


def _stat(text: str) -> tuple[int, int]:
    lines = text.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


HUNK_POSITION = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.MULTILINE)


def change_key(text: str) -> str:
    """What makes two config diffs the same change: their hunks without the file names and
    without the line numbers (a spine's QoS lines sit one line further down than a leaf's,
    the edit is the same).

    >>> a = "--- a/x\\n+++ b/x\\n@@ -575,7 +575,7 @@\\n-qos 26\\n+qos 24\\n"
    >>> b = "--- a/y\\n+++ b/y\\n@@ -574,7 +574,7 @@\\n-qos 26\\n+qos 24\\n"
    >>> change_key(a) == change_key(b), change_key(a) == change_key(b.replace("24", "25"))
    (True, False)
    """
    body = text.split("\n", 2)[2] if text.count("\n") >= 2 else text
    return HUNK_POSITION.sub("@@", body)


def _same_change(diff: PlanDiff) -> list[tuple[list[str], str]]:
    """Config diffs grouped by `change_key` (the hunks without file names and positions): a policy change
    makes the same edit on hundreds of switches, and a reviewer reads it once. Changes to
    existing switches come first: a new switch's whole config matters less in review than
    the edits to the ones carrying traffic."""
    new = set(diff.devices_added)
    groups: dict[str, list[str]] = {}
    for name in sorted(diff.config_diffs, key=lambda n: (n in new, n)):
        groups.setdefault(change_key(diff.config_diffs[name]), []).append(name)
    return [(names, diff.config_diffs[names[0]]) for names in groups.values()]


def _configs(diff: PlanDiff, budget: int) -> str:
    """Config diffs, folded, until `budget` characters; the rest named with their size."""
    if not diff.config_diffs:
        return ""
    parts = [f"**Device configs** ({len(diff.config_diffs)})\n\n"]
    used = 0
    left: list[str] = []
    for names, text in _same_change(diff):
        added, removed = _stat(text)
        who = f"<code>{names[0]}</code>" + (f" and {len(names) - 1} more with the same change" if len(names) > 1 else "")
        others = ", ".join(names[1 : LISTED + 1]) + (f" and {len(names) - LISTED - 1} more" if len(names) > LISTED + 1 else "")
        body = f"```diff\n{text}```" + (f"\n\nSame change on: {others}" if len(names) > 1 else "")
        folded = _fold(f"{who} +{added} -{removed}", body)
        if used + len(folded) > budget:
            left.extend(f"{name} (+{added} -{removed})" for name in names)
            continue
        used += len(folded)
        parts.append(folded)
    if left:
        parts.append(
            _fold(
                f"{len(left)} more config diffs not shown (comment size limit)",
                "Run `fabricgen diff` locally for these:\n\n"
                + "".join(f"- `{item}`\n" for item in left[:LISTED])
                + (f"- ... and {len(left) - LISTED} more\n" if len(left) > LISTED else ""),
            )
        )
    return "".join(parts)


def markdown_report(diff: PlanDiff, title: str) -> str:
    """The whole change as GitHub-flavoured Markdown; `title` names the fabric and revisions."""
    if not diff.differs:
        return f"### {title}\n\nNo differences.\n"
    sections = [
        f"### {title}\n\n",
        _counts(diff),
        _items("Fabric policy changed", diff.policy_changed),
        _items("Host settings changed (hosts.csv)", diff.hosts_changed),
        _items("Host NICs added (hosts.csv)", diff.host_nics_added),
        _items("Host NICs removed (hosts.csv)", diff.host_nics_removed),
        _items("Devices added", diff.devices_added),
        _items("Devices removed", diff.devices_removed),
        _items("Devices changed", diff.devices_changed),
        _items("Addresses, ASNs and BGP neighbors changed", diff.values_changed),
        _items("Cables added", diff.cables_added),
        _items("Cables removed", diff.cables_removed),
        _items("Cables re-patched (one end moves)", diff.cables_moved),
        _items("Cables changed", diff.cables_changed),
    ]
    text = "".join(sections)
    return text + _configs(diff, BUDGET - len(text) - 8_000)
