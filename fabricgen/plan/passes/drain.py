"""The drain pass: which switches the plan drains (`drain:` and `--drain`, docs/drain.md).

A drain is planned state, like an address: the switch stays cabled and peered, and its platform's
graceful-shutdown lines (`drain:` in platform.yml) make its neighbours prefer every other path.
The pass only marks switches; names that are no switch, and drains that would cut servers or
pass `oversubscription.during_change`, are judged by `checks/drain.py`.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.plan.inputs import Inputs
from fabricgen.plan.passes.expand import TierNode


def drained_switches(inputs: Inputs, nodes: Iterable[TierNode]) -> frozenset[str]:
    """The names under `drain:` that are switches of this fabric (each looked up once).

    >>> from types import SimpleNamespace as N
    >>> sorted(drained_switches(N(drain=(N(name="s1"), N(name="nope"))), [N(name="s1"), N(name="s2")]))
    ['s1']
    """
    wanted = {entry.name for entry in inputs.drain}
    if not wanted:
        return frozenset()
    return frozenset(node.name for node in nodes if node.name in wanted)
