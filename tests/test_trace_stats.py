"""`prfaas-plan trace stats` (api/trace_stats.py, report/views_trace.py, report/plots_trace.py).

Every number is checked against a hand computation from the raw file (json/csv read here, numpy
percentiles, a tiny prefix-cache oracle over hash_ids), not against the loader it tests.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from collections import OrderedDict
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prfaas_plan.api.trace_stats import default_bin_s, summarize, trace_stats
from prfaas_plan.cli import app
from prfaas_plan.core.trace import Trace
from prfaas_plan.report.views_trace import trace_stats_json

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRACES = FIXTURES / "traces"
SYNTHETIC = TRACES / "mooncake_synthetic_trace.jsonl"
M300 = FIXTURES / "mooncake_300.jsonl"
runner = CliRunner()


# ------------------------------------------------------------------------------ independent readers
def _raw_jsonl(path: Path, ts_scale: float, block: int) -> dict:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {"t": [r["timestamp"] * ts_scale for r in rows], "inp": [r["input_length"] for r in rows],
            "out": [r["output_length"] for r in rows], "hashes": [r["hash_ids"] for r in rows], "block": block}


def _azure_seconds(text: str) -> Decimal:
    """'2023-11-16 18:15:46.6805900' or '2024-05-10 00:00:00.009930+00:00' -> seconds (tz ignored: one zone)."""
    text = text.strip()
    for sign in ("+", "Z"):
        if sign in text[19:]:
            text = text[:19 + text[19:].index(sign)]
    whole, _, frac = text.partition(".")
    base = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").timestamp()
    return Decimal(int(base)) + (Decimal("0." + frac) if frac else Decimal(0))


def _raw_azure(path: Path) -> dict:
    rows = list(csv.DictReader(path.read_text().splitlines()))
    ts = [_azure_seconds(r["TIMESTAMP"]) for r in rows]
    return {"t": [float(t - min(ts)) for t in ts], "inp": [int(r["ContextTokens"]) for r in rows],
            "out": [int(r["GeneratedTokens"]) for r in rows], "hashes": None}


def _raw_burstgpt(path: Path) -> dict:
    every = list(csv.DictReader(path.read_text().splitlines()))
    rows = [r for r in every if int(float(r["Response tokens"])) > 0]  # 0 response tokens: a failed request
    return {"t": [float(r["Timestamp"]) for r in rows], "inp": [int(float(r["Request tokens"])) for r in rows],
            "out": [int(float(r["Response tokens"])) for r in rows], "hashes": None,
            "failed": len(every) - len(rows), "models": tuple(sorted({r["Model"] for r in every}))}


SAMPLES = {  # file -> (format, its raw reader)
    M300: ("mooncake", lambda p: _raw_jsonl(p, 1e-3, 512)),
    SYNTHETIC: ("mooncake", lambda p: _raw_jsonl(p, 1e-3, 512)),
    TRACES / "mooncake_conversation.jsonl": ("mooncake", lambda p: _raw_jsonl(p, 1e-3, 512)),
    TRACES / "mooncake_toolagent.jsonl": ("mooncake", lambda p: _raw_jsonl(p, 1e-3, 512)),
    TRACES / "bailian.jsonl": ("bailian", lambda p: _raw_jsonl(p, 1.0, 16)),
    TRACES / "azure_code_2023.csv": ("azure", _raw_azure),
    TRACES / "azure_conv_2024.csv": ("azure", _raw_azure),
    TRACES / "burstgpt.csv": ("burstgpt", _raw_burstgpt),
}


def oracle_hit_rate(arrivals, inputs, hashes, block: int, capacity: int | None) -> float:
    """Token-weighted hit rate of an LRU block cache: leading blocks present, capped at input - 1 tokens."""
    cache: OrderedDict[int, None] = OrderedDict()
    cached = 0
    for i in sorted(range(len(arrivals)), key=lambda k: arrivals[k]):  # stable: file order on ties
        lead = 0
        for h in hashes[i]:
            if h not in cache:
                break
            lead += 1
        cached += min(lead * block, inputs[i] - 1)
        for h in hashes[i]:
            cache[h] = None
            cache.move_to_end(h)
            if capacity is not None and len(cache) > capacity:
                cache.popitem(last=False)
    return cached / sum(inputs)


def _present():
    return [pytest.param(p, id=p.name, marks=() if p.exists() else
                         pytest.mark.skip(reason=f"{p.name} not in tests/fixtures/traces yet")) for p in SAMPLES]


@pytest.mark.parametrize("path", _present())
def test_stats_equal_a_hand_computation(path: Path) -> None:
    fmt, read = SAMPLES[path]
    raw = read(path)
    r = trace_stats(path)
    t, inp, out = np.array(raw["t"]), np.array(raw["inp"]), np.array(raw["out"])
    n = t.size
    assert (r.format, r.requests) == (fmt, n)
    assert (r.failed_excluded, r.models) == (raw.get("failed", 0), raw.get("models", ()))
    assert r.span_s == pytest.approx(t.max() - t.min(), abs=1e-9)
    if r.span_s > 0:
        assert r.mean_rate_rps == pytest.approx((n - 1) / (t.max() - t.min()), rel=1e-9)
        assert sum(r.bins.counts) == n
    for got, x in ((r.input, inp), (r.output, out)):
        assert got.mean == pytest.approx(x.mean(), rel=1e-12)
        assert [got.p50, got.p90, got.p99] == pytest.approx(list(np.percentile(x, [50, 90, 99])), rel=1e-12)
        assert (got.max, got.total) == (x.max(), x.sum())
    if raw["hashes"] is None:
        assert r.reuse is None
        return
    u = r.reuse
    assert u.block_tokens == raw["block"]
    assert u.distinct_blocks == len({h for hs in raw["hashes"] for h in hs})
    assert u.unbounded.hit_rate == pytest.approx(oracle_hit_rate(raw["t"], raw["inp"], raw["hashes"], raw["block"],
                                                                 None), rel=1e-12)
    quarter = next(p for p in u.sized if p.label.startswith("1/4"))
    assert quarter.capacity_blocks == u.distinct_blocks // 4
    assert quarter.hit_rate == pytest.approx(oracle_hit_rate(raw["t"], raw["inp"], raw["hashes"], raw["block"],
                                                             quarter.capacity_blocks), rel=1e-12)


def test_mooncake_300_known_values() -> None:
    """Pinned from the hand computation above, so a change in either shows."""
    r = trace_stats(M300)
    assert (r.requests, r.span_s) == (300, pytest.approx(86.79))
    assert r.input.mean == pytest.approx(3853165 / 300)
    assert r.reuse.unbounded.hit_rate == pytest.approx(0.048777563379715116, rel=1e-9)
    assert r.bins.bin_s == 2.0 and len(r.bins.counts) == 44 and r.bins.full_bins == 43


def test_bin_option_and_the_default_bin() -> None:
    r = trace_stats(SYNTHETIC, bin="60s")
    assert r.bins.bin_s == 60 and not r.bins.chosen and sum(r.bins.counts) == r.requests
    assert r.bins.full_bins == math.floor(r.span_s / 60)
    full = np.array(r.bins.counts[:r.bins.full_bins]) / 60
    assert (r.bins.min_rps, r.bins.max_rps) == (full.min(), full.max())
    assert r.bins.median_rps == np.median(full)
    assert r.bins.peak_to_mean == pytest.approx(full.max() / r.mean_rate_rps)
    assert default_bin_s(1022.025) == 20 and default_bin_s(3600) == 60 and default_bin_s(86.79) == 2
    assert default_bin_s(90 * 86400) == 2 * 86400
    long = trace_stats(M300, bin="1h")  # one partial bin: counts, but no binned rate (never NaN)
    assert (long.bins.counts, long.bins.full_bins, long.bins.max_rps) == ((300,), 0, None)
    json.dumps(trace_stats_json(long), allow_nan=False)


def test_cache_sizes_in_tokens_and_gib() -> None:
    r = trace_stats(M300, cache_tokens=["1K", "1M"], cache_gib=["2"], model="DeepSeek-V3")
    a, b, c = r.reuse.sized
    assert (a.capacity_tokens, a.capacity_blocks) == (1024, 2)  # "1K" = 1024 tokens
    assert b.capacity_blocks == 2048
    assert c.capacity_blocks == math.floor(2 * 2**30 / (70272 * 512))  # DeepSeek-V3: 70,272 KV bytes/token
    assert a.hit_rate <= b.hit_rate <= r.reuse.unbounded.hit_rate
    assert c.hit_rate == pytest.approx(oracle_hit_rate(*_oracle_args(M300), capacity=c.capacity_blocks))


def _oracle_args(path: Path):
    raw = _raw_jsonl(path, 1e-3, 512)
    return raw["t"], raw["inp"], raw["hashes"], 512


# ------------------------------------------------------------------------------------ properties
@st.composite
def traces(draw):
    n = draw(st.integers(1, 25))
    hashes = [draw(st.lists(st.integers(0, 12), max_size=6)) for _ in range(n)]
    block = draw(st.sampled_from([1, 4, 16]))
    inputs = [draw(st.integers(1, (len(h) + 1) * block)) for h in hashes]
    arrivals = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.25, 10.0]), min_size=n, max_size=n))
    outputs = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    return Trace.from_requests(arrival_s=arrivals, input_tokens=inputs, output_tokens=outputs, hash_ids=hashes,
                               block_tokens=block), hashes


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(traces(), st.lists(st.integers(0, 16), min_size=1, max_size=5))
def test_sized_hit_rate_is_below_unbounded_and_rises_with_size(case, sizes) -> None:
    trace, hashes = case
    bt = trace.block_tokens
    r = summarize(trace, cache_tokens=sorted(max(1, k * bt) for k in sizes), curve=True)
    rates = [p.hit_rate for p in r.reuse.sized]
    assert all(x <= r.reuse.unbounded.hit_rate + 1e-12 for x in rates)
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(rates))
    assert r.reuse.unbounded.hit_rate == pytest.approx(
        oracle_hit_rate(trace.arrival_s.tolist(), trace.input_tokens.tolist(), hashes, bt, None))
    if r.bins is not None:
        assert sum(r.bins.counts) == len(trace)
    json.dumps(trace_stats_json(r), allow_nan=False)  # no NaN or inf anywhere


# ---------------------------------------------------------------------------------------- the CLI
def _run(*args: str):
    return runner.invoke(app, ["trace", "stats", *args])


def test_cli_text_json_csv_and_help() -> None:
    res = _run(str(SYNTHETIC))
    assert res.exit_code == 0, res.output
    assert "Mooncake trace, 3,993 requests" in res.stdout and "1/2 of the working set" in res.stdout
    res = _run(str(M300), "--format", "json")
    payload = json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert payload == json.loads(json.dumps(trace_stats_json(trace_stats(M300))))
    assert payload["requests"] == 300 and sum(payload["arrivals"]["counts"]) == 300
    res = _run(str(M300), "--format", "csv")
    rows = dict(csv.reader(res.stdout.splitlines()))
    assert rows["requests"] == "300" and float(rows["prefix_reuse.hit_rate_unbounded"]) == pytest.approx(0.0487776)
    res = runner.invoke(app, ["trace", "stats", "--help"])
    assert res.exit_code == 0
    assert "Example: prfaas-plan trace stats tests/fixtures/traces/mooncake_synthetic_trace.jsonl" in res.stdout


AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n" \
        "2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:16:10.0,1200,0\n"
BURST = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" \
        "5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,0,1087,Conversation log\n" \
        "118,GPT-4,417,276,693,API log\n"


def test_traces_without_hashes_say_unknown_never_zero(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(AZURE)
    res = _run(str(tmp_path / "a.csv"))
    assert res.exit_code == 0, res.output
    assert "Azure trace, 3 requests" in res.stdout
    assert "unknown (the trace has no prefix hashes)" in res.stdout and "0.0%" not in res.stdout
    payload = json.loads(_run(str(tmp_path / "a.csv"), "-f", "json").stdout)
    assert payload["prefix_reuse"]["hit_rate_unbounded"] is None
    (tmp_path / "b.csv").write_text(BURST)
    res = _run(str(tmp_path / "b.csv"))
    assert re.search(r"failed, excluded +1 row \(0 response tokens\)", res.stdout), res.stdout
    assert "ChatGPT, GPT-4" in res.stdout
    payload = json.loads(_run(str(tmp_path / "b.csv"), "--model-filter", "ChatGPT", "-f", "json").stdout)
    assert (payload["requests"], payload["filtered_out"], payload["failed_excluded"]) == (1, 1, 1)
    assert payload["models"] == ["ChatGPT", "GPT-4"]


@pytest.mark.slow
def test_one_request_has_no_rate(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text('{"timestamp": 5, "input_length": 10, "output_length": 0, "hash_ids": [1]}\n')
    res = _run(str(path))
    assert res.exit_code == 0, res.output
    assert "one request: no span, so no arrival rate" in res.stdout
    assert not any(w in res.stdout.lower() for w in ("nan", "inf"))
    payload = json.loads(_run(str(path), "-f", "json").stdout)
    assert payload["mean_rate_rps"] is None and payload["arrivals"] is None
    assert payload["prefix_reuse"]["hit_rate_unbounded"] == 0.0  # hashes, no repeat: a real 0
    assert _run(str(path), "--plot", str(tmp_path / "one.png")).exit_code == 0


@pytest.mark.parametrize(("args", "names"), [
    (["missing.jsonl"], ["missing.jsonl", "not found"]),
    ([str(M300), "--trace-format", "parquet"], ["--trace-format", "'parquet'"]),
    ([str(M300), "--cache-tokens", "0"], ["--cache-tokens", "'0'"]),
    ([str(M300), "--cache-tokens=-5"], ["--cache-tokens", "'-5'"]),
    ([str(M300), "--cache-tokens", "lots"], ["--cache-tokens", "'lots'"]),
    ([str(M300), "--cache-tokens", "1.5"], ["--cache-tokens", "'1.5'"]),
    ([str(M300), "--bin", "0"], ["--bin", "'0'"]),
    ([str(M300), "--bin", "soon"], ["--bin", "'soon'"]),
    ([str(M300), "--cache-gib", "4"], ["--cache-gib", "--model"]),
    ([str(M300), "--cache-gib", "0", "--model", "DeepSeek-V3"], ["--cache-gib", "'0'"]),
    ([str(M300), "--cache-gib", "4", "--model", "no-such-model"], ["--model", "no-such-model"]),
    ([str(M300), "--model-filter", "GPT-4"], ["--model-filter", "mooncake"]),
])
def test_bad_input_is_one_line_exit_2(args: list[str], names: list[str]) -> None:
    res = _run(*args)
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr and "Error" not in lines[0]
    for name in names:
        assert name in lines[0], lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_figure_is_written(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"fig{suffix}"
    res = _run(str(SYNTHETIC), "--plot", str(out), "-f", "json")
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 1000
    json.loads(res.stdout)  # stdout carries only the JSON
    (tmp_path / "a.csv").write_text(AZURE)  # two panels, no hashes
    out2 = tmp_path / f"azure{suffix}"
    assert _run(str(tmp_path / "a.csv"), "--plot", str(out2)).exit_code == 0
    assert out2.stat().st_size > 1000


@pytest.mark.parametrize(("ids", "ok"), [(1, True), (2, False), (5, False)])
def test_hash_ids_beyond_the_input_length_are_refused(tmp_path: Path, ids: int, ok: bool) -> None:
    """100 tokens are ceil(100 / 512) = 1 Mooncake block: a second id claims 1,024 tokens."""
    f = tmp_path / "t.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [7, 8]}\n'
                 f'{{"timestamp": 5, "input_length": 100, "output_length": 1, "hash_ids": {list(range(ids))}}}\n')
    res = _run(str(f))
    if ok:
        assert res.exit_code == 0, res.output
        return
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (f"error: {f}: line 2: hash_ids: {ids} ids are {ids * 512:,} tokens of 512-token blocks, "
                          "more than input_length 100 holds (at most 1)\n")
