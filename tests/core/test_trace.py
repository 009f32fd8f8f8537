"""Mooncake trace parsing (io.trace) and the LRU prefix-cache replay (core.trace)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prfaas_plan.core.lengths import Empirical
from prfaas_plan.core.trace import Trace, blocks_for_capacity, replay_prefix_cache
from prfaas_plan.errors import SpecError
from prfaas_plan.io.trace import load_mooncake_trace
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "mooncake_small.jsonl"
FULL_TRACE = FIXTURES / "traces" / "mooncake_synthetic_trace.jsonl"  # a copy of ../shared/data/traces


def _tiny(order=None) -> Trace:
    """Six requests, 512-token blocks (hand-computed replays below)."""
    reqs = [  # (arrival s, input tokens, hash ids)
        (0.0, 1000, [1, 2]),
        (1.0, 1024, [1, 2]),
        (2.0, 600, [3, 4]),
        (3.0, 1500, [1, 2, 5]),
        (4.0, 100, [7]),
        (5.0, 100, [7]),
    ]
    if order is not None:
        reqs = [reqs[i] for i in order]
    return Trace.from_requests(arrival_s=[r[0] for r in reqs], input_tokens=[r[1] for r in reqs],
                               output_tokens=[10] * len(reqs), hash_ids=[r[2] for r in reqs])


# hand-computed: hits = leading blocks found; cached = min(512 hits, input - 1)
EXPECTED = {
    None: ([0, 2, 0, 2, 0, 1], [0, 1023, 0, 1024, 0, 99]),
    # cap 2: r0 leaves [1,2]; r1 hits both; r2 evicts them ([3,4]); r3 misses, leaves [2,5]; r4 [5,7]; r5 hits 7
    2: ([0, 2, 0, 0, 0, 1], [0, 1023, 0, 0, 0, 99]),
    # cap 1: only the last block of the previous request survives; r5 repeats r4's single block
    1: ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 99]),
    0: ([0] * 6, [0] * 6),
}


@pytest.mark.parametrize("capacity", [None, 2, 1, 0])
def test_replay_hand_computed(capacity):
    trace = _tiny()
    hits, cached = EXPECTED[capacity]
    r = replay_prefix_cache(trace, capacity_blocks=capacity)
    assert r.hit_blocks.tolist() == hits
    assert r.cached_tokens.tolist() == cached
    assert r.uncached_tokens.tolist() == (trace.input_tokens - np.array(cached)).tolist()
    assert r.hit_rate == pytest.approx(sum(cached) / 4324, rel=1e-15)  # 4324 input tokens in all
    assert r.block_hit_rate == pytest.approx(sum(hits) / 11, rel=1e-15)  # 11 blocks in all
    assert r.capacity_blocks == capacity and r.block_tokens == 512


def test_replay_follows_arrival_order_and_reports_in_file_order():
    order = [3, 0, 5, 2, 1, 4]
    r = replay_prefix_cache(_tiny(order), capacity_blocks=None)
    assert r.cached_tokens.tolist() == [EXPECTED[None][1][i] for i in order]


def test_replay_block_size_and_uncached_distribution():
    r = replay_prefix_cache(_tiny(), capacity_blocks=None, block_tokens=100)
    assert r.cached_tokens.tolist() == [0, 200, 0, 200, 0, 99]
    d = r.uncached_distribution()
    assert isinstance(d, Empirical)
    assert d.mean == pytest.approx(np.mean([1000, 824, 600, 1300, 100, 1]), rel=1e-15)


def test_replay_rejects_bad_capacity():
    for bad in (-1, 2.5):
        with pytest.raises(SpecError, match="capacity"):
            replay_prefix_cache(_tiny(), capacity_blocks=bad)


def test_blocks_for_capacity():
    bytes_per_token = 70_000.0  # ~ a full-attention model's KV per token
    assert blocks_for_capacity(10 * 512 * bytes_per_token, bytes_per_token) == 10
    assert blocks_for_capacity(10 * 512 * bytes_per_token - 1, bytes_per_token) == 9
    assert blocks_for_capacity(0.0, bytes_per_token) == 0
    assert blocks_for_capacity(float("inf"), bytes_per_token) is None
    assert blocks_for_capacity(1e6, 1.0, block_tokens=1000) == 1000
    with pytest.raises(SpecError):
        blocks_for_capacity(1e9, 0.0)
    with pytest.raises(SpecError):
        blocks_for_capacity(-1.0, 1.0)


def test_trace_validation_and_accessors():
    t = _tiny()
    assert len(t) == 6 and t.request_hash_ids(3).tolist() == [1, 2, 5]
    assert t.hash_offsets.tolist() == [0, 2, 4, 6, 9, 10, 11]
    with pytest.raises(ValueError):
        t.input_tokens[0] = 5  # read-only arrays
    with pytest.raises(SpecError, match="no requests"):
        Trace.from_requests(arrival_s=[], input_tokens=[], output_tokens=[], hash_ids=[])
    with pytest.raises(SpecError, match="input lengths"):
        Trace.from_requests(arrival_s=[0.0], input_tokens=[0], output_tokens=[1], hash_ids=[[1]])


# ----------------------------------------------------------------------------- invariants


small_traces = st.lists(
    st.tuples(st.lists(st.integers(0, 6), min_size=1, max_size=5), st.integers(1, 3_000)),
    min_size=1, max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(reqs=small_traces, capacity=st.integers(0, 12))
def test_bounded_cache_never_beats_unbounded(reqs, capacity):
    trace = Trace.from_requests(arrival_s=np.arange(len(reqs), dtype=float), input_tokens=[r[1] for r in reqs],
                                output_tokens=[1] * len(reqs), hash_ids=[r[0] for r in reqs])
    free = replay_prefix_cache(trace, capacity_blocks=None)
    small = replay_prefix_cache(trace, capacity_blocks=capacity)
    bigger = replay_prefix_cache(trace, capacity_blocks=capacity + 1)
    assert small.hit_rate <= bigger.hit_rate <= free.hit_rate  # LRU inclusion: more room never hurts
    assert np.all(small.cached_tokens <= free.cached_tokens)
    for r in (free, small):
        assert np.all((r.uncached_tokens >= 1) & (r.uncached_tokens <= trace.input_tokens))
        assert 0.0 <= r.hit_rate < 1.0


# ----------------------------------------------------------------------------- parsing


def test_load_fixture_matches_json():
    trace = load_mooncake_trace(FIXTURE)
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    assert len(trace) == len(rows) == 50
    assert trace.arrival_s == pytest.approx([r["timestamp"] / 1000 for r in rows], rel=1e-15, abs=0)
    assert trace.input_tokens.tolist() == [r["input_length"] for r in rows]
    assert trace.output_tokens.tolist() == [r["output_length"] for r in rows]
    assert trace.request_hash_ids(49).tolist() == rows[49]["hash_ids"]
    assert trace.hash_ids.size == sum(len(r["hash_ids"]) for r in rows)
    r = replay_prefix_cache(trace, capacity_blocks=None)
    assert r.block_hit_rate == pytest.approx(57 / 1399, rel=1e-15)  # counted by hand-written loop


def test_full_mooncake_trace():
    trace = load_mooncake_trace(FULL_TRACE)
    assert len(trace) == 3_993
    assert trace.input_tokens.mean() == pytest.approx(15_325.48, abs=0.01)
    assert trace.output_tokens.mean() == pytest.approx(149.12, abs=0.01)
    assert trace.arrival_s[-1] == pytest.approx(1_022.025, rel=1e-12)
    free = replay_prefix_cache(trace, capacity_blocks=None)
    assert 0.0 < free.hit_rate < 1.0
    assert np.all(free.uncached_tokens <= trace.input_tokens) and np.all(free.uncached_tokens >= 1)
    bounded = replay_prefix_cache(trace, capacity_blocks=10_000)
    assert bounded.hit_rate <= free.hit_rate


def _write(tmp_path, text: str) -> Path:
    p = tmp_path / "t.jsonl"
    p.write_text(text)
    return p


GOOD = '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}'


@pytest.mark.parametrize(("line", "message"), [
    ('{"timestamp": 0, "input_length": 6', "not valid JSON"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 5}', "missing field 'hash_ids'"),
    ('{"timestamp": 0, "input_length": -3, "output_length": 5, "hash_ids": []}', "input_length"),
    ('{"timestamp": 0, "input_length": 0, "output_length": 5, "hash_ids": []}', "input_length"),
    ('{"timestamp": 0, "input_length": 12.5, "output_length": 5, "hash_ids": []}', "input_length"),
    ('{"timestamp": 0, "input_length": 600, "output_length": "5", "hash_ids": []}', "output_length"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": "1,2"}', "hash_ids"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, "2"]}', "hash_ids"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [true]}', "hash_ids"),
    ('{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [99999999999999999999]}', "64-bit"),
    ('{"timestamp": "now", "input_length": 600, "output_length": 5, "hash_ids": []}', "timestamp"),
    ("[1, 2, 3]", "JSON object"),
])
def test_load_rejects_bad_line(tmp_path, line, message):
    path = _write(tmp_path, f"{GOOD}\n\n{line}\n")
    with pytest.raises(SpecError, match=message) as info:
        load_mooncake_trace(path)
    assert info.value.field == "line 3" and info.value.source == str(path)


def test_load_skips_blank_lines_and_accepts_integral_floats(tmp_path):
    other = '{"timestamp": 1500.5, "input_length": 512.0, "output_length": 0, "hash_ids": [], "x": 1}'
    trace = load_mooncake_trace(_write(tmp_path, f"\n{GOOD}\n   \n{other}\n\n"))
    assert trace.input_tokens.tolist() == [600, 512] and trace.output_tokens.tolist() == [5, 0]
    assert trace.arrival_s == pytest.approx([0.0, 1.5005], rel=1e-15, abs=0)
    assert trace.hash_offsets.tolist() == [0, 2, 2]


def test_load_empty_or_missing_file(tmp_path):
    with pytest.raises(SpecError, match="the file is empty"):  # io/files.read_text
        load_mooncake_trace(_write(tmp_path, "\n  \n"))
    with pytest.raises(SpecError, match="file not found") as info:
        load_mooncake_trace(tmp_path / "absent.jsonl")
    assert info.value.source == str(tmp_path / "absent.jsonl")


def test_zero_output_tokens_count_as_one():
    # engines need max_tokens >= 1: a request recorded with 0 output tokens still decodes one
    trace = Trace.from_requests(arrival_s=[0.0, 1.0, 2.0], input_tokens=[100, 200, 300], output_tokens=[0, 5, 0],
                                hash_ids=[[1], [2], [3]])
    assert trace.output_tokens.tolist() == [0, 5, 0]  # the file's values, kept
    assert trace.decode_tokens.tolist() == [1, 5, 1]
