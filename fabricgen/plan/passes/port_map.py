"""Pass helper: whether a model's port map lets a platform that writes ASIC lanes (SONiC's PORT
table; platform fact `port_map_required`) configure every port the model can run.

A model's `port_map` (data/catalog.yml or the inventory's `models:`) is copied from the network
OS's platform files; here it is held to the model's own cage facts: one entry per cage, the
model's lanes in each, a breakout mode for every breakout the model lists, and no speed a
logical port's lanes cannot carry at the model's lane rate. Each problem is (key under
`models.<name>`, message, hint), so `expand` reports it where the model is defined.
"""

from __future__ import annotations

from fabricgen.core.model import Model

PortMapProblem = tuple[tuple[str, ...], str, str]


def port_map_problems(model: Model, platform: str) -> list[PortMapProblem]:
    """What stops `platform` from writing the ports of `model` (empty: nothing).

    >>> from fabricgen.core.model import PortMap
    >>> toy = Model("toy", "", "", 2, 800, 8, "OSFP", {800: 1, 400: 2, 200: 4, 1600: 1}, ("x",), lane_rate=100,
    ...             port_map=PortMap("T", ((0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10, 11)), "p{port}", "p{port}{letter}", {1: "1x800G", 2: "2x400G"}))
    >>> for path, message, _ in port_map_problems(toy, "x"): print(".".join(path), message)
    port_map.lanes cage 2 of toy has 4 lanes in its port_map; the model has 8 per cage
    breakouts toy runs 200G as 4 ports per cage, but its port_map has no breakout mode for 4 (it has 1, 2)
    breakouts toy cannot run 1600G: a port of 8 lanes at 100G per lane carries 800G
    """
    port_map = model.port_map
    if port_map is None:
        hint = f"add `port_map` under `models.{model.name}` from the SKU's platform.json and port_config.ini (docs/sonic.md)"
        return [((), f"model {model.name} has no port_map, which {platform} switches need (the ASIC lanes of every port)", hint)]
    found: list[PortMapProblem] = []
    if len(port_map.lanes) != model.ports:
        found.append(
            (("port_map", "lanes"), f"the port_map of {model.name} lists {len(port_map.lanes)} cages; the model has {model.ports}", "")
        )
    for cage, lanes in enumerate(port_map.lanes, start=1):
        if len(lanes) != model.lanes:
            found.append(
                (
                    ("port_map", "lanes"),
                    f"cage {cage} of {model.name} has {len(lanes)} lanes in its port_map; the model has {model.lanes} per cage",
                    "",
                )
            )
            break
    modes = ", ".join(str(count) for count in sorted(port_map.breakout_modes))
    for speed, count in model.breakouts.items():
        if count not in port_map.breakout_modes:
            message = (
                f"{model.name} runs {speed}G as {count} ports per cage, but its port_map has no breakout mode for {count} (it has {modes})"
            )
            found.append(
                (("breakouts",), message, "add the mode from the SKU's platform.json under port_map.breakout_modes, or drop the breakout")
            )
        per_port = model.lanes // count
        if speed > per_port * model.cage_lane_rate:
            carried = per_port * model.cage_lane_rate
            message = f"{model.name} cannot run {speed}G: a port of {per_port} lanes at {model.cage_lane_rate}G per lane carries {carried}G"
            found.append((("breakouts",), message, ""))
    return found
