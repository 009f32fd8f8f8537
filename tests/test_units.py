"""units.py: the one parser of quantities people write, and the decimal datasheet conversions."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prfaas_plan import ranges, units
from prfaas_plan.units import UnitError


def format_bandwidth(bytes_per_s: float, digits: int = 12) -> str:
    """bytes/s -> "12.5Gbps" (``digits`` significant digits): what the parser must read back."""
    return f"{units.bytes_per_s_to_gbps(bytes_per_s):.{digits}g}Gbps"


def test_paper_conversion_701_mib_in_1_84_s_is_3_19_gbps():
    # docs/sources.md#table-5, 32K row: 701.3 MiB / 1.84 s -> 3.19 Gbps (MiB binary, Gbps decimal)
    gbps = units.bytes_per_s_to_gbps(units.mib_to_bytes(701.3) / 1.84)
    assert gbps == pytest.approx(3.197, abs=5e-4)


# --- bandwidth: b = bit, B = byte; exact bytes/s by hand --------------------------------------------------------

BITS = [  # 100 of the unit, in bytes/s: x / 8
    ("100bps", 12.5), ("100b/s", 12.5), ("100bit/s", 12.5), ("100bits/s", 12.5),
    ("100kbps", 12_500.0), ("100Kbps", 12_500.0), ("100kb/s", 12_500.0), ("100Kbit/s", 12_500.0),
    ("100Mbps", 12_500_000.0), ("100mbps", 12_500_000.0), ("100Mb/s", 12_500_000.0), ("100Mbit/s", 12_500_000.0),
    ("100Gbps", 12_500_000_000.0), ("100gbps", 12_500_000_000.0), ("100Gb/s", 12_500_000_000.0),
    ("100Gbit/s", 12_500_000_000.0), ("100Gbits/s", 12_500_000_000.0), ("100 Gbps", 12_500_000_000.0),
    ("100Tbps", 12_500_000_000_000.0), ("100tbps", 12_500_000_000_000.0), ("100Tb/s", 12_500_000_000_000.0),
    ("100Tbit/s", 12_500_000_000_000.0),
    ("8Gibit/s", 2.0**30), ("8Gibps", 2.0**30), ("8Mibit/s", 2.0**20),
]
BYTES = [  # 100 of the unit, in bytes/s
    ("100B/s", 100.0), ("100Bps", 100.0), ("100Byte/s", 100.0), ("100bytes/s", 100.0),
    ("100kB/s", 1e5), ("100KB/s", 1e5), ("100KBps", 1e5),
    ("100MB/s", 1e8), ("100MBps", 1e8), ("100MByte/s", 1e8),
    ("100GB/s", 1e11), ("100GBps", 1e11), ("100GByte/s", 1e11), ("100GBytes/s", 1e11), ("100Gbyte/s", 1e11),
    ("100 GB/s", 1e11), ("100TB/s", 1e14), ("100TBps", 1e14),
    ("1KiB/s", 1024.0), ("1MiB/s", 2.0**20), ("1GiB/s", 2.0**30), ("1TiB/s", 2.0**40),
]
BARE = [("100", 12.5e9), (100, 12.5e9), (100.0, 12.5e9), ("1e2", 12.5e9), ("  12.5  ", 12.5e9 / 8), (".5", 6.25e7)]


@pytest.mark.parametrize(("text", "bytes_per_s"), BITS + BYTES + BARE)
def test_parse_bandwidth_every_spelling(text, bytes_per_s):
    assert units.parse_bandwidth(text) == bytes_per_s  # exact: the scales are exact in binary


def test_the_issue_examples_bits_are_not_bytes():
    # the issue: 100Gb/s was read as 800 Gbps and 100GBps as 100 Gbps (case folded away)
    assert units.bytes_per_s_to_gbps(units.parse_bandwidth("100Gb/s")) == 100
    assert units.bytes_per_s_to_gbps(units.parse_bandwidth("100GBps")) == 800


@pytest.mark.parametrize(("text", "unit", "hint"), [
    ("100GBPS", "GBPS", "Gbps (bits) or GB/s (bytes)"),
    ("100gBps", "gBps", "Gbps (bits) or GB/s (bytes)"),
    ("100gb/s", "gb/s", "Gbps (bits) or GB/s (bytes)"),
    ("100GB/S", "GB/S", "Gbps (bits) or GB/s (bytes)"),
    ("10mB/s", "mB/s", "Mbps (bits) or MB/s (bytes)"),
    ("1TBPS", "TBPS", "Tbps (bits) or TB/s (bytes)"),
])
def test_ambiguous_bandwidth_is_refused_with_both_readings(text, unit, hint):
    with pytest.raises(UnitError) as err:
        units.parse_bandwidth(text)
    assert str(err.value) == f"{text!r}: ambiguous bandwidth unit {unit!r}; did you mean {hint}?"


def test_wrong_case_with_one_reading_names_it():
    with pytest.raises(UnitError, match=r"unknown bandwidth unit 'gbit/s'; did you mean Gbps \(bits\)\?$"):
        units.parse_bandwidth("1gbit/s")


def test_unknown_bandwidth_unit_lists_the_accepted_ones():
    with pytest.raises(UnitError) as err:
        units.parse_bandwidth("10 furlongs")
    assert str(err.value).startswith("'10 furlongs': unknown bandwidth unit 'furlongs' (use Gbps")
    assert "GB/s" in str(err.value)


NON_FINITE = ["inf", "-inf", "nan", "NaN", "Infinity", "inf Gbps", "1e400", "1e400Gbps", float("inf"), float("nan"),
              "1" + "0" * 400, 10**400]


@pytest.mark.parametrize("parse", [units.parse_bandwidth, units.parse_duration, units.parse_length,
                                   units.parse_count])
@pytest.mark.parametrize("text", NON_FINITE)
def test_non_finite_is_refused_everywhere(parse, text):
    with pytest.raises(UnitError, match=r"is not a finite number$"):
        parse(text)


@pytest.mark.parametrize(("parse", "text", "message"), [
    (units.parse_bandwidth, "1e308", "'1e308' is beyond a float in SI units (bandwidth in Gbps above 1.44e+300)"),
    (units.parse_bandwidth, "1e300TB/s",
     "'1e300TB/s' is beyond a float in SI units (bandwidth in TB/s above 1.8e+296)"),
    (units.parse_duration, "1e307h", "'1e307h' is beyond a float in SI units (time in h above 4.99e+304)"),
    (units.parse_duration, "1e-320ms", "'1e-320ms' is below the smallest normal float in SI units (time in ms below "
                                       "2.23e-305)"),
    (units.parse_bandwidth, "5e-324", "'5e-324' is below the smallest normal float in SI units (bandwidth in Gbps "
                                      "below 1.78e-316)"),
])
def test_a_value_beyond_a_float_or_subnormal_once_in_si_units_is_refused(parse, text, message):
    with pytest.raises(UnitError) as exc:
        parse(text)
    assert str(exc.value) == message
    assert units.parse_bandwidth("1e300") == 1.25e308 and units.parse_duration("1e-300") == 1e-300  # kept
    assert units.parse_duration("0") == 0.0


@pytest.mark.parametrize("text", ["0", 0, "-5Gbps", "-1e-3"])
def test_bandwidth_must_be_positive(text):
    with pytest.raises(UnitError, match=r"is not a positive bandwidth$"):
        units.parse_bandwidth(text)


@pytest.mark.parametrize("text", ["100GBPS", "10 furlongs", "inf", "0", "abc", "19.4K", "1m", "100.5"])
def test_messages_show_the_value_once(text):
    for parse in (units.parse_bandwidth, units.parse_length):
        try:
            parse(text)
        except UnitError as exc:
            assert str(exc).count(repr(text)) == 1, str(exc)
            assert "(got" not in str(exc) and "\n" not in str(exc)


# --- lengths ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "tokens"), [
    ("1K", 1024), ("128K", 131072), ("1024", 1024), ("8k", 8192), ("1M", 1048576), (" 32K ", 32768),
    ("1e5", 100_000), ("1.5e4", 15_000), ("1E3", 1000), ("1.5K", 1536), ("0.5K", 512), ("32.75K", 33536),
    (131072.0, 131072), (1e5, 100_000), (7, 7), ("2e1K", 20480),
])
def test_parse_length(text, tokens):
    assert units.parse_length(text) == tokens
    assert isinstance(units.parse_length(text), int)


@pytest.mark.parametrize(("text", "message"), [
    ("100.5", "'100.5' is 100.5 tokens, not a whole number: write 100 or 101"),
    ("19.4K", "'19.4K' is 19,865.6 tokens (K = 1024, not 1000), not a whole number: write 19865 or 19866"),
    ("1.23456e2", "'1.23456e2' is 123.456 tokens, not a whole number: write 123 or 124"),
    (100.5, "100.5 is 100.5 tokens, not a whole number: write 100 or 101"),
    ("1m", "'1m': unknown token length unit 'm'; did you mean M?"),
    ("0", "'0' is not a positive token length"),
    ("-5", "'-5' is not a positive token length"),
    ("abc", "'abc' is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)"),
    ("", "'' is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)"),
    ("1.5.5K", "'1.5.5K' is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)"),
    ("K", "'K' is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)"),
    ("1,000", "'1,000' is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)"),
    (True, "True is not a number"),
])
def test_parse_length_refuses_without_rounding(text, message):
    with pytest.raises(UnitError) as err:
        units.parse_length(text)
    assert str(err.value) == message


def test_parse_lengths_list():
    assert units.parse_lengths("1K,8K, 1e5 ,128K") == [1024, 8192, 100_000, 131072]
    with pytest.raises(UnitError, match="holds no token length"):
        units.parse_lengths(" , ")


# --- durations and counts --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "seconds"), [("25ms", 0.025), ("1.5s", 1.5), (2, 2.0), ("300us", 3e-4),
                                               ("300µs", 3e-4), ("1min", 60.0), ("2h", 7200.0), ("5ns", 5e-9),
                                               ("0", 0.0), ("2.5e-2s", 0.025)])
def test_parse_duration(text, seconds):
    assert units.parse_duration(text) == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize(("text", "message"), [
    ("5MS", "'5MS': unknown time unit 'MS'; did you mean ms?"),
    ("5 m", "'5 m': unknown time unit 'm' (use s, ms, us, ns, min, h)"),
    ("-1s", "'-1s' is a negative time"),
])
def test_parse_duration_refuses(text, message):
    with pytest.raises(UnitError) as err:
        units.parse_duration(text)
    assert str(err.value) == message


@pytest.mark.parametrize(("text", "n"), [("63B", 63e9), ("1T", 1e12), ("63e9", 63e9), ("1.0e12", 1e12),
                                         ("7b", 7e9), ("500M", 5e8), ("3k", 3e3), (1.5e9, 1.5e9)])
def test_parse_count(text, n):
    assert units.parse_count(text) == n


@pytest.mark.parametrize("text", ["5X", "-1B", "B"])
def test_parse_count_refuses(text):
    with pytest.raises(UnitError):
        units.parse_count(text)


@pytest.mark.parametrize(("text", "message"), [("abc", "'abc' is not a number"),
                                               ("inf", "'inf' is not a finite number"),
                                               ("0.5Gbps", "'0.5Gbps' is a plain number, without a unit")])
def test_parse_number(text, message):
    assert units.parse_number(" 4e2 ") == 400.0 and units.parse_number(7) == 7.0
    with pytest.raises(UnitError) as err:
        units.parse_number(text)
    assert str(err.value) == message


# --- decimal datasheet conversions -----------------------------------------------------------------------------

def test_datasheet_conversions_are_decimal_exact():
    # 2.039 * 1e12 is 2039000000000.0002 in binary floating point; the A100 datasheet means 2039e9
    assert 2.039 * 1e12 != 2039e9
    assert units.tbps_to_bytes_per_s(2.039) == 2_039_000_000_000.0
    assert units.tflops_to_flops(989.4) == 989_400_000_000_000.0
    assert units.gb_to_bytes(141) == 141e9
    assert units.gbytes_per_s_to_bytes_per_s(1075) == 1075e9
    assert units.gbps_to_bytes_per_s(400) == 5e10
    assert units.gbps_to_bytes_per_s(0.1) == 12_500_000.0


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False))
def test_gbps_round_trip(x):
    assert units.bytes_per_s_to_gbps(units.gbps_to_bytes_per_s(x)) == pytest.approx(x, rel=1e-12)


# --- format -> parse round trips -------------------------------------------------------------------------------

@given(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False))
def test_bandwidth_format_parse_round_trip(gbps):
    b = units.gbps_to_bytes_per_s(gbps)
    assert units.parse_bandwidth(format_bandwidth(b)) == pytest.approx(b, rel=1e-11)
    assert units.parse_bandwidth(format_bandwidth(b, 4)) == pytest.approx(b, rel=5e-4)


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False),
       st.sampled_from(sorted(u for u in units.BANDWIDTH_UNITS if u)))
def test_every_spelling_scales_by_its_table_entry(x, unit):
    assert units.parse_bandwidth(f"{x!r}{unit}") == x * units.BANDWIDTH_UNITS[unit][0]


@given(st.integers(min_value=1, max_value=2**50))
def test_length_format_parse_round_trip(n):
    assert units.parse_length(units.format_tokens(n)) == n


@given(st.integers(min_value=1, max_value=2**40))
def test_length_display_reads_back_or_is_refused(n):
    # "44.0K" is a display form: it reads back within its 0.05K precision, or is refused, never silently off
    text = units.format_length(n)
    try:
        back = units.parse_length(text)
    except UnitError as exc:
        assert "not a whole number" in str(exc)
    else:
        assert abs(back - n) <= 0.05 * units.K_TOKENS
    if n < units.K_TOKENS or n % units.K_TOKENS == 0:
        assert units.parse_length(text) == n


def test_format_length():
    assert units.format_length(1) == "1"
    assert units.format_length(1023) == "1023"
    assert units.format_length(1024) == "1K"
    assert units.format_length(45046) == "44.0K"
    assert units.format_length(1e30) == "1e+30"


# --- sweep ranges ----------------------------------------------------------------------------------------------

def test_range_log_steps_match_the_readme():
    texts, values = ranges.parse_range("1Gbps..100Gbps:8", max_points=2000, log=True)
    assert texts == ["1Gbps", "1.931Gbps", "3.728Gbps", "7.197Gbps", "13.89Gbps", "26.83Gbps", "51.79Gbps",
                     "100Gbps"]
    assert values == [1.0, 1.931, 3.728, 7.197, 13.89, 26.83, 51.79, 100.0]  # what is shown is what runs


def test_range_converts_the_second_end_to_the_first_unit():
    texts, values = ranges.parse_range("1Gb/s..10GB/s:3", max_points=2000)
    assert texts == ["1Gb/s", "40.5Gb/s", "80Gb/s"] and values == [1.0, 40.5, 80.0]
    assert ranges.parse_range("500Mbps..10Gbps:3", max_points=2000)[0] == ["500Mbps", "5250Mbps", "10000Mbps"]
    assert ranges.parse_range("1..10ms:2", max_points=2000)[0] == ["1ms", "10ms"]  # one unit for both ends


def test_range_of_lengths_steps_in_whole_tokens():
    texts, values = ranges.parse_range("1K..128K:5", max_points=2000)
    assert texts == ["1K", "33536", "66048", "98560", "128K"]
    assert [units.parse_length(t) for t in texts] == [1024, 33536, 66048, 98560, 131072]
    assert values == [1.0, 32.75, 64.5, 96.25, 128.0]
    assert ranges.parse_range("1e5..2e5:3", max_points=2000)[0] == ["100000", "150000", "200000"]


@pytest.mark.parametrize(("text", "message"), [
    ("1..2:2001", "'1..2:2001': a range takes 2 to 2,000 points, not 2,001"),
    ("1..2:100000", "'1..2:100000': a range takes 2 to 2,000 points, not 100,000"),
    ("1..2:1", "'1..2:1': a range takes 2 to 2,000 points, not 1"),
    ("1..2:1.5", "'1..2:1.5': the number of points '1.5' is not a whole number"),
    ("1Gbps..10ms:3", "'1Gbps..10ms:3': the ends have different units 'Gbps' and 'ms'"),
    ("1..1:3", "'1..1:3': the two ends are equal"),
    ("0..10:3:log", "'0..10:3:log': log steps need two positive ends"),
    ("1..10:3:cubic", "'1..10:3:cubic': steps are 'log' or 'lin', not 'cubic'"),
    ("1K..1.001K:3", "'1K..1.001K:3': 3 points are closer than one token or below 1"),
    ("1..inf:3", "'inf' is not a finite number"),
    ("1Gbps..x:3", "'x' is not a number with an optional unit (examples: 100Gbps, 25ms, 8K)"),
    ("1-10", "'1-10' is not a range a..b:n (e.g. 1Gbps..100Gbps:20, 1K..128K:8:log)"),
])
def test_range_refusals(text, message):
    with pytest.raises(UnitError) as err:
        ranges.parse_range(text, max_points=2000)
    assert str(err.value) == message


def test_range_at_the_bound_has_distinct_points():
    texts, values = ranges.parse_range("1..1.0001:2000", max_points=2000)
    assert len(texts) == len(set(texts)) == 2000
    assert values[0] == 1.0 and values[-1] == 1.0001


@given(st.floats(min_value=1e-3, max_value=1e4), st.floats(min_value=1e-3, max_value=1e4),
       st.integers(min_value=2, max_value=50), st.sampled_from(["", "Gbps", "GB/s", "ms", "s"]),
       st.booleans())
def test_range_texts_parse_to_their_values(a, b, n, unit, log):
    if a == b:
        return
    texts, values = ranges.parse_range(f"{a!r}{unit}..{b!r}{unit}:{n}", max_points=2000, log=log)
    assert len(texts) == n
    assert values[0] == a and values[-1] == b
    for text, value in zip(texts, values, strict=True):
        number, got_unit = units.split_quantity(text)
        assert number == value and got_unit == unit
        assert math.isfinite(value)


def test_an_empty_length_between_commas_is_refused_not_dropped():
    assert units.parse_lengths("1K,8K,") == [1024, 8192]
    for text in ("1K,,8K", ",1K", ",", " , "):
        with pytest.raises(ValueError):
            units.parse_lengths(text)
