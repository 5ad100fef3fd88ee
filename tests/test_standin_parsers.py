"""The stand-ins read a committed config with the vendors' parsers: a line a parser chokes on
must not make a switch's BGP neighbours vanish (the lab would then run FRR without them)."""

from __future__ import annotations

from tests.standins import parsers

EOS_ROUTER = """router bgp 65001
   router-id 10.0.0.1
   bgp bestpath as-path multipath-relax
   neighbor 10.1.0.1 remote-as 65100
"""


def test_eos_neighbours_survive_multipath_relax() -> None:
    """arista.eos 12.0.0's eos_bgp_global refuses its own parse of `bgp bestpath as-path
    multipath-relax`; the stand-in reads that line apart and keeps the neighbours."""
    assert parsers.bgp("eos", EOS_ROUTER) == ("65001", {"10.1.0.1": "65100"})
    assert parsers.eos_bestpath_as_path(EOS_ROUTER)[1] == ["multipath-relax"]
