"""The strict partitions.conf validator and its CLI (`fabricgen ib check-partitions`)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.cli import main
from fabricgen.infiniband.partitions import check_partitions

GOOD = """\
# comment
Default=0x7fff, ipoib : ALL_CAS=limited, ALL_SWITCHES=full, SELF=full ;
tenantA=0x0a01, ipoib, mtu=5, rate=17, defmember=full :
    0x0000000000030101, 0x0000000000030201, SELF=full ;   # trailing comment
storage=0x0b01, indx0 : 0x30301=both, mgid=ff12:401b::1, rate=7, ALL_SWITCHES=full ;
empty=0x0c01 : ;
"""


def messages(text: str) -> list[str]:
    return [f"{p.line}:{p.column}: {p.message}" for p in check_partitions(text)[0] if p.error]


def test_good_file_parses() -> None:
    problems, rules = check_partitions(GOOD)
    assert problems == []
    assert [(r.name, r.pkey, r.line) for r in rules] == [
        ("Default", 0x7FFF, 2),
        ("tenantA", 0x0A01, 3),
        ("storage", 0x0B01, 5),
        ("empty", 0x0C01, 6),
    ]
    assert rules[1].members == ("0x0000000000030101", "0x0000000000030201", "SELF=full")


def test_missing_comma_between_flags_is_an_error() -> None:
    # OpenSM accepts this silently and ignores the rate.
    assert messages("t=0x0a01, ipoib, mtu=5 rate=17 : ALL ;") == ["1:18: 'mtu=5 rate=17': flags must be separated by ','"]


def test_missing_comma_between_members_and_missing_semicolon() -> None:
    found = messages("t=0x0a01 : 0x1 0x2 ;\nu=0x0a02 : SELF=full\n")
    assert found[0] == "1:12: '0x1 0x2': members must be separated by ','"
    assert found[1] == "2:1: definition not terminated by ';': 'u=0x0a02 : SELF=full'"


def test_bad_values_are_named() -> None:
    found = messages("t=0x8000 : ALL=owner ;\nu=0x0a02, mtu=9, defmember=all, bogus : 0xZZ ;\nv=0x0a03 ALL ;\n")
    assert "1:1: P_Key 0x8000 of 't' is out of range (0x0001-0x7fff)" in found
    assert "1:12: membership of ALL must be full, limited or both, not 'owner'" in found
    assert "2:11: mtu must be a number from 1 to 5: 'mtu=9'" in found
    assert "2:18: defmember must be full, limited or both: 'defmember=all'" in found
    assert any("unknown partition flag 'bogus'" in m for m in found)
    assert any("'0xZZ' is neither a port GUID" in m for m in found)
    assert any("missing ':'" in m for m in found)


def test_duplicate_pkey_is_a_warning() -> None:
    problems, _ = check_partitions("a=0x0a01 : ALL ;\nb=0x0a01 : SELF ;\n")
    assert [(p.error, p.line) for p in problems] == [(False, 2)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,10}", fullmatch=True),
            st.integers(1, 0x7FFE),
            st.booleans(),
            st.lists(st.integers(1, 2**64 - 1), max_size=5),
        ),
        max_size=5,
        unique_by=lambda t: t[1],
    )
)
def test_well_formed_files_always_pass(parts: list[tuple[str, int, bool, list[int]]]) -> None:
    lines = []
    for name, pkey, ipoib, guids in parts:
        members = ", ".join([*(f"0x{g:016x}" for g in guids), "SELF=full"])
        lines.append(f"{name}=0x{pkey:04x}{', ipoib, mtu=4' if ipoib else ''} :\n    {members} ;")
    problems, rules = check_partitions("\n".join(lines) + "\n")
    assert problems == []
    assert [r.pkey for r in rules] == [p[1] for p in parts]


def test_cli(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.conf", tmp_path / "bad.conf"
    good.write_text(GOOD)
    bad.write_text("t=0x0a01, mtu=5 rate=17 : ALL ;\n")
    runner = CliRunner()
    result = runner.invoke(main, ["ib", "check-partitions", str(good)])
    assert result.exit_code == 0
    assert "valid (4 partition definition(s))" in result.output
    result = runner.invoke(main, ["ib", "check-partitions", str(good), str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:1:11: error: 'mtu=5 rate=17': flags must be separated by ','" in result.output
    assert runner.invoke(main, ["ib", "check-partitions", str(tmp_path / "nope")]).exit_code == 2
