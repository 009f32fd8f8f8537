"""Benchmark result files as calibration points (io/bench_formats.py).

Fixtures: tests/fixtures/bench/ (structure of the upstream writers, made-up numbers; see its
README). The expected points below are worked out by hand from the numbers in those files.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prfaas_plan.errors import SpecError
from prfaas_plan.io.bench_formats import FORMATS, BenchPoint, detect, read_bench

BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
LLAMA, QWEN = "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"

# file -> (format, read_bench options, points as (quantity, seconds, input_tokens, batch, model, line))
EXPECTED: dict[str, tuple[str, dict[str, int], list[tuple[str, float, int, int, str | None, int]]]] = {
    # batch 1: prefill 0.0412 s at 1024; decode context 1024 + 256/2 = 1152; batch 8: decode only;
    # batch 64 at output_len 1: nothing
    "sglang_bench_one_batch.jsonl": ("sglang-one-batch", {}, [
        ("prefill_s", 0.0412, 1024, 1, None, 1), ("decode_step_s", 0.00731, 1152, 1, None, 1),
        ("decode_step_s", 0.00912, 1152, 8, None, 2)]),
    # line 2 only (max_concurrency 1): 123.4 ms; 32775 / 16 = 2048.44 -> 2048 tokens; 7.81 ms at
    # 2048 + (2048 / 16) / 2 = 2112; model from server_info.model_path
    "sglang_bench_serving.jsonl": ("sglang-serving", {}, [
        ("ttft_s", 0.1234, 2048, 1, LLAMA, 2), ("decode_step_s", 0.00781, 2112, 1, LLAMA, 2)]),
    # the second appended run: 45.6 ms at 8192 / 8 = 1024; 8.1 ms at 1024 + 128 / 2 = 1088
    "vllm_bench_serve.json": ("vllm-serve", {}, [
        ("ttft_s", 0.0456, 1024, 1, QWEN, 2), ("decode_step_s", 0.0081, 1088, 1, QWEN, 2)]),
    "vllm_bench_latency.json": ("vllm-latency", {"input_tokens": 2048}, [("prefill_s", 0.0871, 2048, 1, QWEN, 1)]),
    # p50 86.4 ms at ISL avg 2048; ITL p50 8.11 ms at 2048 + 256 / 2 = 2176
    "genai_perf_profile_export_genai_perf.json": ("genai-perf", {}, [
        ("ttft_s", 0.0864, 2048, 1, LLAMA, 1), ("decode_step_s", 0.00811, 2176, 1, LLAMA, 1)]),
    # p50 91.2 ms at ISL avg 1000.4 -> 1000; ITL p50 8.2 ms at 1000 + 200 / 2 = 1100
    "aiperf_profile_export_aiperf.json": ("aiperf", {}, [
        ("ttft_s", 0.0912, 1000, 1, "Qwen/Qwen3-8B", 1), ("decode_step_s", 0.0082, 1100, 1, "Qwen/Qwen3-8B", 1)]),
    # tprefill_ms.p50 of the two timed cells; the error and skipped cells give nothing
    "prfaas_phase1_phi_kv.jsonl": ("prfaas-jsonl", {}, [
        ("ttft_s", 0.0412, 1024, 1, QWEN, 1), ("ttft_s", 0.2125, 8192, 1, QWEN, 2)]),
}


def _load(name: str) -> list[Any]:
    """The records of a fixture: one JSON document, or one per line."""
    text = (BENCH / name).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()] if name.endswith("l") or \
        name == "vllm_bench_serve.json" else [json.loads(text)]


def _write(path: Path, name: str, records: list[Any]) -> Path:
    """Records back in the fixture's layout: JSON lines, or one indented document."""
    jsonl = name.endswith("l") or name == "vllm_bench_serve.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) if jsonl else json.dumps(records[0], indent=2))
    return path


def _edit(tmp_path: Path, name: str, line: int, key: tuple[str | int, ...], value: Any = ..., *,
          fname: str | None = None) -> Path:
    """The fixture with ``key`` of record ``line`` (1-based record) set to ``value`` (... deletes it)."""
    records = _load(name)
    node = records[line - 1]
    for part in key[:-1]:
        node = node[part]
    if value is ...:
        del node[key[-1]]
    else:
        node[key[-1]] = value
    return _write(tmp_path / (fname or name), name, records)


# ------------------------------------------------------------------ detection and the points read


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_detects_each_fixture(name):
    assert detect(BENCH / name) == EXPECTED[name][0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_points_of_each_fixture(name):
    fmt, options, expected = EXPECTED[name]
    points = read_bench(BENCH / name, **options)
    assert [(p.quantity, p.input_tokens, p.batch, p.model, p.line, p.format) for p in points] == \
        [(q, n, b, m, line, fmt) for q, _, n, b, m, line in expected]
    assert [p.seconds for p in points] == pytest.approx([s for _, s, *_ in expected], rel=1e-12)
    assert [p.kind for p in points] == ["decode" if q == "decode_step_s" else "prefill" for q, *_ in expected]
    assert read_bench(BENCH / name, fmt=fmt, **options) == points  # forcing the detected format changes nothing


def test_forcing_a_format_reads_what_detection_cannot(tmp_path):
    """A serving line without ``dataset_name`` matches no rule; named, it is read."""
    path = _edit(tmp_path, "sglang_bench_serving.jsonl", 2, ("dataset_name",))
    records = _load("sglang_bench_serving.jsonl")
    path.write_text(path.read_text().splitlines()[1] + "\n")  # the concurrency-1 run alone
    with pytest.raises(SpecError, match=r"matches no benchmark format \(keys tag, backend, request_rate"):
        detect(path)
    (ttft, step) = read_bench(path, fmt="sglang-serving")
    assert (ttft.quantity, ttft.seconds, ttft.line, step.input_tokens) == ("ttft_s", pytest.approx(0.1234), 1, 2112)
    assert records[1]["median_ttft_ms"] == 123.4
    with pytest.raises(SpecError, match="unknown benchmark format 'sglang'") as exc:
        read_bench(path, fmt="sglang")
    assert exc.value.field == "format"


@pytest.mark.parametrize(("record", "fragment"), [
    ({"run_name": "default", "batch_size": 1, "input_len": 1024, "output_len": 256, "latency": 2.1,
      "last_ttft": 0.0511}, "SGLang bench_one_batch_server output"),
    ({"version": "1.0", "service_kind": "openai", "endpoint": "v1/chat/completions", "experiments": []},
     "raw perf_analyzer profile_export.json"),
    ({"metadata": {"x_request_id": "a"}, "metrics": {}, "error": None}, "AIPerf's per-request profile_export.jsonl"),
    ([{"benchmark": {"name": "vLLM benchmark"}, "model": {}, "metric": {}}], "vLLM's .pytorch.json sidecar"),
    ({"hello": 1}, "keys hello; the formats read are sglang-one-batch"),
    (3, "a number, not a JSON object"),
])
def test_near_misses_match_no_format(tmp_path, record, fragment):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(record))
    for call in (detect, read_bench):
        with pytest.raises(SpecError, match="matches no benchmark format") as exc:
            call(path)
        assert fragment in exc.value.message and exc.value.field == "line 1" and exc.value.source == str(path)


def test_legacy_layouts(tmp_path):
    """genai-perf <= 0.0.11 (flat argparse input_config), early AIPerf (UserConfig), the 2024 "ns" unit."""
    genai = _load("genai_perf_profile_export_genai_perf.json")[0]
    genai["input_config"] = {"model": [LLAMA], "endpoint_type": "chat", "service_kind": "openai", "concurrency": 1,
                             "request_rate": None, "synthetic_input_tokens_mean": 2048}
    path = _write(tmp_path / "flat_genai_perf.json", "x.json", [genai])
    assert detect(path) == "genai-perf"
    assert [(p.quantity, p.model) for p in read_bench(path)] == [("ttft_s", LLAMA), ("decode_step_s", LLAMA)]
    ns = copy.deepcopy(genai)
    ns["time_to_first_token"] = {"unit": "ns", "avg": 88.0e6, "p50": 86.4e6}
    assert read_bench(_write(tmp_path / "ns.json", "x.json", [ns]))[0].seconds == pytest.approx(0.0864, rel=1e-12)
    aiperf = _load("aiperf_profile_export_aiperf.json")[0]
    for key in ("schema_version", "aiperf_version", "benchmark_id", "run_info"):
        del aiperf[key]
    aiperf["input_config"] = {"endpoint": {"model_names": ["Qwen/Qwen3-8B"], "type": "chat", "streaming": True},
                              "loadgen": {"concurrency": 1, "request_count": 200}}
    path = _write(tmp_path / "early_aiperf.json", "x.json", [aiperf])
    assert detect(path) == "aiperf"
    ttft = read_bench(path)[0]
    assert (ttft.seconds, ttft.model) == (pytest.approx(0.0912), "Qwen/Qwen3-8B")
    non_streaming = _load("genai_perf_profile_export_genai_perf.json")[0]
    del non_streaming["inter_token_latency"]  # genai-perf leaves it out for non-streaming runs
    assert [p.quantity for p in read_bench(_write(tmp_path / "ns2.json", "x.json", [non_streaming]))] == ["ttft_s"]


# ------------------------------------------------------------------ options


def test_vllm_latency_options(tmp_path):
    path = BENCH / "vllm_bench_latency.json"
    with pytest.raises(SpecError, match="vllm bench latency records no input length: give --input-tokens") as exc:
        read_bench(path)
    assert exc.value.source == str(path)
    (p,) = read_bench(path, input_tokens=512, batch=4)
    assert (p.quantity, p.seconds, p.input_tokens, p.batch) == ("prefill_s", 0.0871, 512, 4)
    with pytest.raises(SpecError, match="must be a whole number of at least 1, got 0") as exc:
        read_bench(path, input_tokens=0)
    assert exc.value.field == "--input-tokens"
    with pytest.raises(SpecError, match="--batch applies to vllm-latency files") as exc:
        read_bench(BENCH / "prfaas_phase1_phi_kv.jsonl", batch=2)
    assert exc.value.field == "--batch"


# ------------------------------------------------------------------ bad files: one SpecError each

BAD = [  # (case, fixture, make(tmp_path) -> path, field, message fragment)
    ("not JSON", "vllm_bench_latency.json", lambda t: _text(t, "v.json", '{\n    "avg_latency": 0.08,\n    "lat'),
     "line 3", "not JSON: Unterminated string"),
    ("broken JSON line", "sglang_bench_one_batch.jsonl",
     lambda t: _text(t, "o.jsonl", (BENCH / "sglang_bench_one_batch.jsonl").read_text()[:-40]), "line 3",
     "not JSON: "),
    ("line not an object", "prfaas_phase1_phi_kv.jsonl",
     lambda t: _text(t, "p.jsonl", (BENCH / "prfaas_phase1_phi_kv.jsonl").read_text() + "[1, 2]\n"), "line 5",
     "expected a JSON object, got a list"),
    ("missing key", "sglang_bench_one_batch.jsonl",
     lambda t: _edit(t, "sglang_bench_one_batch.jsonl", 2, ("batch_size",)), "line 2, key batch_size",
     "a required key is missing"),
    ("missing nested key", "aiperf_profile_export_aiperf.json",
     lambda t: _edit(t, "aiperf_profile_export_aiperf.json", 1, ("input_sequence_length", "avg")),
     "line 1, key input_sequence_length.avg", "a required key is missing"),
    ("string for a number", "sglang_bench_serving.jsonl",
     lambda t: _edit(t, "sglang_bench_serving.jsonl", 2, ("median_ttft_ms",), "fast"), "line 2, key median_ttft_ms",
     'not a number: "fast"'),
    ("null for a number", "vllm_bench_serve.json",
     lambda t: _edit(t, "vllm_bench_serve.json", 2, ("completed",), None), "line 2, key completed",
     "not a number: null"),
    ("string for a mapping", "genai_perf_profile_export_genai_perf.json",
     lambda t: _edit(t, "genai_perf_profile_export_genai_perf.json", 1, ("time_to_first_token",), "86 ms"),
     "line 1, key time_to_first_token", 'not a mapping: "86 ms"'),
    ("negative time", "prfaas_phase1_phi_kv.jsonl",
     lambda t: _edit(t, "prfaas_phase1_phi_kv.jsonl", 2, ("tprefill_ms", "p50"), -212.5),
     "line 2, key tprefill_ms.p50", "must be a positive time, got -212.5 ms"),
    ("zero time", "sglang_bench_one_batch.jsonl",
     lambda t: _edit(t, "sglang_bench_one_batch.jsonl", 1, ("prefill_latency",), 0),
     "line 1, key prefill_latency", "must be a positive time, got 0 s"),
    ("NaN time", "vllm_bench_latency.json",
     lambda t: _edit(t, "vllm_bench_latency.json", 1, ("avg_latency",), math.nan), "line 1, key avg_latency",
     "not a finite number: NaN"),
    ("infinite time", "genai_perf_profile_export_genai_perf.json",
     lambda t: _edit(t, "genai_perf_profile_export_genai_perf.json", 1, ("time_to_first_token", "p50"), math.inf),
     "line 1, key time_to_first_token.p50", "not a finite number: Infinity"),
    ("unknown time unit", "aiperf_profile_export_aiperf.json",
     lambda t: _edit(t, "aiperf_profile_export_aiperf.json", 1, ("inter_token_latency", "unit"), "tokens"),
     "line 1, key inter_token_latency.unit", '"tokens" is not a time unit'),
    ("fractional count", "sglang_bench_serving.jsonl",
     lambda t: _edit(t, "sglang_bench_serving.jsonl", 2, ("completed",), 2.5), "line 2, key completed",
     "must be a whole number of at least 1, got 2.5"),
    ("fewer tokens than requests", "vllm_bench_serve.json",
     lambda t: _edit(t, "vllm_bench_serve.json", 2, ("total_input_tokens",), 4), "line 2, key total_input_tokens",
     "must be at least 1 a request, got 4 tokens over 8 requests"),
    ("genai-perf at concurrency 16", "genai_perf_profile_export_genai_perf.json",
     lambda t: _edit(t, "genai_perf_profile_export_genai_perf.json", 1,
                     ("input_config", "perf_analyzer", "stimulus", "concurrency"), 16),
     "line 1, key input_config.perf_analyzer.stimulus.concurrency", "concurrency 16, not 1"),
    ("genai-perf at a request rate", "genai_perf_profile_export_genai_perf.json",
     lambda t: _edit(t, "genai_perf_profile_export_genai_perf.json", 1, ("input_config", "perf_analyzer", "stimulus"),
                     {"request_rate": 10.0}),
     "line 1, key input_config.perf_analyzer.stimulus", 'the load is {"request_rate": 10.0}, not a concurrency'),
    ("AIPerf at a Poisson rate", "aiperf_profile_export_aiperf.json",
     lambda t: _edit(t, "aiperf_profile_export_aiperf.json", 1, ("input_config", "phases", 1, "type"), "poisson"),
     "line 1, key input_config.phases[1].type", 'the profiling load is "poisson", not concurrency'),
    ("probe answer longer than one token", "prfaas_phase1_phi_kv.jsonl",
     lambda t: _edit(t, "prfaas_phase1_phi_kv.jsonl", 1, ("output_len",), 8), "line 1, key output_len",
     "must be 1: a longer answer adds decode steps"),
    ("no run at concurrency 1", "vllm_bench_serve.json",
     lambda t: _edit(t, "vllm_bench_serve.json", 2, ("max_concurrency",), 2), None,
     "no run at concurrency 1 (max_concurrency of the runs: 8, 2)"),
    ("no batch-1 line", "sglang_bench_one_batch.jsonl",
     lambda t: _text(t, "o.jsonl", (BENCH / "sglang_bench_one_batch.jsonl").read_text().splitlines()[2]), None,
     "no line at batch_size 1 and no median_decode_latency"),
    ("only failed cells", "prfaas_phase1_phi_kv.jsonl",
     lambda t: _text(t, "p.jsonl", "\n".join((BENCH / "prfaas_phase1_phi_kv.jsonl").read_text().splitlines()[2:])),
     None, "every cell is an error or skipped record"),
    ("empty file", "sglang_bench_serving.jsonl", lambda t: _text(t, "e.jsonl", "\n\n"), None, "the file is empty"),
    ("missing file", "sglang_bench_serving.jsonl", lambda t: t / "nowhere.jsonl", None, "file not found"),
]


def _text(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("case", "fixture", "make", "field", "fragment"), BAD, ids=[c[0] for c in BAD])
def test_a_bad_file_is_one_spec_error(tmp_path, case, fixture, make, field, fragment):
    path = make(tmp_path)
    options = EXPECTED[fixture][1]
    fmt = EXPECTED[fixture][0] if case != "missing file" else None
    with pytest.raises(SpecError) as exc:
        read_bench(path, fmt=fmt, **options)
    assert (exc.value.source, exc.value.field) == (str(path), field)
    assert fragment in exc.value.message, exc.value.message
    assert str(exc.value).startswith(f"{path}: {field}: " if field else f"{path}: ")


# ------------------------------------------------------------------ fuzz: read, or one SpecError

def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every key path in a JSON value."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    out: list[tuple[str | int, ...]] = []
    for k, v in items:
        out += [(*prefix, k), *_paths(v, (*prefix, k))]
    return out


REPLACEMENTS = ("delete", "fast", -1.5, None, 0, math.nan, math.inf, [], {}, 1e308, True)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str]:
    """(fixture name, the text of a mutated copy): 1-3 key edits, then perhaps a truncation."""
    name = draw(st.sampled_from(sorted(EXPECTED)))
    records = copy.deepcopy(_load(name))
    for _ in range(draw(st.integers(1, 3))):
        record = records[draw(st.integers(0, len(records) - 1))]
        paths = _paths(record)
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        node = record
        for part in path[:-1]:
            node = node[part]
        value = draw(st.sampled_from(REPLACEMENTS))
        if value == "delete":
            del node[path[-1]]
        else:
            node[path[-1]] = copy.deepcopy(value)
    jsonl = name.endswith("l") or name == "vllm_bench_serve.json"
    text = "".join(json.dumps(r) + "\n" for r in records) if jsonl else json.dumps(records[0], indent=2)
    if draw(st.booleans()):
        text = text[:draw(st.integers(0, len(text)))]
    return name, text


@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=mutated())
def test_fuzz_mutated_fixtures_read_or_raise_spec_error(tmp_path, case):
    name, text = case
    path = tmp_path / name
    path.write_text(text)
    fmt, options, _ = EXPECTED[name]
    calls = (lambda: detect(path), lambda: read_bench(path, **options), lambda: read_bench(path, fmt=fmt, **options))
    for call in calls:
        try:
            out = call()
        except SpecError as exc:
            assert exc.source == str(path) and (exc.field is None or exc.field.startswith("line "))
            assert "NoneType" not in str(exc) and "Traceback" not in str(exc)
            continue
        for p in out if isinstance(out, list) else ():
            assert isinstance(p, BenchPoint) and p.format in FORMATS
            assert math.isfinite(p.seconds) and p.seconds > 0, p
            assert type(p.input_tokens) is int and p.input_tokens >= 1 and type(p.batch) is int and p.batch >= 1, p
            assert p.kind == ("decode" if p.quantity == "decode_step_s" else "prefill") and p.line >= 1
