import pytest
from hypothesis import given
from hypothesis import strategies as st

from prfaas_plan import units


def test_paper_conversion_701_mib_in_1_84_s_is_3_19_gbps():
    # PAPER.md Table 5, 32K row: 701.3 MiB / 1.84 s -> 3.19 Gbps (MiB binary, Gbps decimal)
    gbps = units.bytes_per_s_to_gbps(units.mib_to_bytes(701.3) / 1.84)
    assert gbps == pytest.approx(3.197, abs=5e-4)


@pytest.mark.parametrize(("text", "tokens"), [("1K", 1024), ("128K", 131072), ("1024", 1024), ("8k", 8192),
                                              ("1M", 1048576), (" 32K ", 32768)])
def test_parse_length(text, tokens):
    assert units.parse_length(text) == tokens


@pytest.mark.parametrize("text", ["abc", "-5", "0", "", "1.5.5K", "K"])
def test_parse_length_rejects(text):
    with pytest.raises(ValueError):
        units.parse_length(text)


@pytest.mark.parametrize(("text", "bytes_per_s"), [("100Gbps", 12.5e9), ("10 Gbps", 1.25e9), (100, 12.5e9),
                                                   ("12.5GB/s", 12.5e9), ("800Mbps", 1e8)])
def test_parse_bandwidth(text, bytes_per_s):
    assert units.parse_bandwidth(text) == pytest.approx(bytes_per_s, rel=1e-12)


@pytest.mark.parametrize(("text", "seconds"), [("25ms", 0.025), ("1.5s", 1.5), (2, 2.0), ("300us", 3e-4)])
def test_parse_duration(text, seconds):
    assert units.parse_duration(text) == pytest.approx(seconds, rel=1e-12)


def test_parse_bandwidth_rejects_unknown_unit():
    with pytest.raises(ValueError, match="unknown unit"):
        units.parse_bandwidth("10 furlongs")


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False))
def test_gbps_round_trip(x):
    assert units.bytes_per_s_to_gbps(units.gbps_to_bytes_per_s(x)) == pytest.approx(x, rel=1e-12)
