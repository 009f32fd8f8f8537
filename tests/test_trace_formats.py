"""Reading every trace format (io/trace.py, io/trace_csv.py) and what a trace without hashes means."""

from __future__ import annotations

import pytest

from prfaas_plan.errors import SpecError
from prfaas_plan.io.trace import load_trace

AZURE_2023 = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n" \
             "2023-11-16 18:15:50.9951690,396,109\n"
AZURE_2024 = "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.009930+00:00,2162,5\n" \
             "2024-05-10 00:00:01.5+00:00,100,0\n"
BURST = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" \
        "5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,0,1087,Conversation log\n" \
        "118,GPT-4,417,276,693,API log\n"
BAILIAN = '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 40, "output_length": 3, ' \
          '"type": "text", "turn": 1, "hash_ids": [1, 2, 3]}\n'


def _file(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_loader_api_each_format(tmp_path):
    a = load_trace(_file(tmp_path, "a.csv", AZURE_2023))
    assert (a.format, a.has_hashes, a.failed_excluded, a.models) == ("azure", False, 0, ())
    assert a.trace.arrival_s.tolist() == pytest.approx([0.0, 4.314579], abs=1e-12)  # 7 digits, exactly
    assert a.trace.hash_ids.size == 0 and a.trace.hash_offsets.tolist() == [0, 0, 0]
    b = load_trace(_file(tmp_path, "b.csv", AZURE_2024))
    assert b.trace.arrival_s.tolist() == pytest.approx([0.0, 1.49007], abs=1e-12)
    c = load_trace(_file(tmp_path, "c.csv", BURST))
    assert (c.format, c.failed_excluded, c.filtered_out, c.models) == ("burstgpt", 1, 0, ("ChatGPT", "GPT-4"))
    assert c.trace.input_tokens.tolist() == [472, 417]
    g = load_trace(_file(tmp_path, "c.csv", BURST), model_filter="GPT-4")
    assert (g.filtered_out, g.failed_excluded, g.trace.input_tokens.tolist()) == (2, 0, [417])
    d = load_trace(_file(tmp_path, "d.jsonl", BAILIAN))
    assert (d.format, d.has_hashes, d.trace.block_tokens) == ("bailian", True, 16)
    assert load_trace(tmp_path / "d.jsonl", block_tokens=8).trace.block_tokens == 8
    # 3 ids of 32-token blocks are 96 tokens: more than the row's 40 (at most ceil(40 / 32) = 2 ids)
    with pytest.raises(SpecError, match=r"line 1: hash_ids: 3 ids are 96 tokens of 32-token blocks \(block_tokens\), "
                                        r"more than input_length 40 holds \(at most 2\)"):
        load_trace(tmp_path / "d.jsonl", block_tokens=32)


def test_loader_refuses(tmp_path):
    with pytest.raises(SpecError, match="models present are ChatGPT, GPT-4"):
        load_trace(_file(tmp_path, "c.csv", BURST), model_filter="gpt-4")
    with pytest.raises(SpecError, match="shows a burstgpt trace, not azure"):
        load_trace(tmp_path / "c.csv", format="azure")
    with pytest.raises(SpecError, match="unknown trace format"):
        load_trace(tmp_path / "c.csv", format="csv")


# ------------------------------------------------------------------ the shipped samples, by hand
import csv  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from prfaas_plan.cli import app  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "fixtures" / "traces"
SAMPLES = ("azure_code_2023.csv", "azure_conv_2024.csv", "burstgpt.csv", "bailian.jsonl",
           "mooncake_conversation.jsonl", "mooncake_toolagent.jsonl")
FORMAT = {"azure_code_2023.csv": "azure", "azure_conv_2024.csv": "azure", "burstgpt.csv": "burstgpt",
          "bailian.jsonl": "bailian", "mooncake_conversation.jsonl": "mooncake",
          "mooncake_toolagent.jsonl": "mooncake"}
runner = CliRunner()


def _raw(name: str) -> tuple[list[float], list[int], list[list[int]] | None, int]:
    """(arrival s, input tokens, hash ids or None, block tokens) straight from the file, by hand."""
    path = TRACES / name
    if name.endswith(".csv"):
        rows = list(csv.DictReader(path.open()))
        if "ContextTokens" in rows[0]:
            # numpy's datetime64 parses to the nanosecond; the +00:00 of 2024 is UTC throughout
            ns = [np.datetime64(r["TIMESTAMP"].removesuffix("+00:00").replace(" ", "T"), "ns") for r in rows]
            return ([float((t - ns[0]) / np.timedelta64(1, "ns")) / 1e9 for t in ns],
                    [int(r["ContextTokens"]) for r in rows], None, 512)
        kept = [r for r in rows if int(r["Response tokens"]) > 0]
        return [float(r["Timestamp"]) for r in kept], [int(r["Request tokens"]) for r in kept], None, 512
    recs = [json.loads(line) for line in path.open() if line.strip()]
    scale = 1.0 if "chat_id" in recs[0] else 1e-3
    return ([r["timestamp"] * scale for r in recs], [r["input_length"] for r in recs],
            [r["hash_ids"] for r in recs], 16 if "chat_id" in recs[0] else 512)


def _oracle_hit_rate(arrival: list[float], inputs: list[int], hashes: list[list[int]], bt: int) -> float:
    """Unbounded prefix cache: a request hits its leading blocks seen before, at least 1 token computed."""
    seen: set[int] = set()
    cached = 0
    for i in sorted(range(len(arrival)), key=lambda k: (arrival[k], k)):
        n = 0
        while n < len(hashes[i]) and hashes[i][n] in seen:
            n += 1
        cached += min(n * bt, inputs[i] - 1)
        seen.update(hashes[i])
    return cached / sum(inputs)


def _optimize(*args: str) -> dict:
    res = runner.invoke(app, ["optimize", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_matches_a_hand_computation(name):
    arrival, inputs, hashes, bt = _raw(name)
    tf = load_trace(TRACES / name)
    assert tf.format == FORMAT[name] and tf.has_hashes == (hashes is not None)
    assert tf.trace.block_tokens == bt
    assert float(tf.trace.input_tokens.mean()) == pytest.approx(sum(inputs) / len(inputs), rel=1e-12)
    span = max(arrival) - min(arrival)
    assert (len(tf) if hasattr(tf, "__len__") else len(tf.trace)) == len(inputs)
    assert (len(inputs) - 1) / tf.trace.span_s == pytest.approx((len(inputs) - 1) / span, rel=1e-9)
    got = _optimize("--trace", str(TRACES / name))["workload"]
    assert got["mean_input_tokens"] == pytest.approx(sum(inputs) / len(inputs), rel=1e-12)
    if hashes is None:
        assert got["prefix_hit_rate"] is None and got["hit_rate_source"] == "unknown"
    else:
        assert got["hit_rate_source"] == "measured"
        assert got["prefix_hit_rate"] == pytest.approx(_oracle_hit_rate(arrival, inputs, hashes, bt), rel=1e-12)
        assert got["distribution"]["block_tokens"] == bt


def test_samples_are_the_script_output(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_trace_samples.py"), "--output-dir", str(tmp_path)],
                   check=True, capture_output=True)
    for name in SAMPLES:
        assert (tmp_path / name).read_text() == (TRACES / name).read_text(), name


def test_azure_seven_digit_timestamps_are_exact():
    tf = load_trace(TRACES / "azure_code_2023.csv")
    first = next(csv.DictReader((TRACES / "azure_code_2023.csv").open()))["TIMESTAMP"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{7}", first)
    # 100 ns ticks survive: every arrival is a whole number of 100 ns
    ticks = tf.trace.arrival_s * 1e7
    assert np.allclose(ticks, np.round(ticks), atol=1e-3)


def test_forcing_a_format(tmp_path):
    assert load_trace(TRACES / "bailian.jsonl", format="bailian").format == "bailian"
    with pytest.raises(SpecError, match="shows a bailian trace, not mooncake"):
        load_trace(TRACES / "bailian.jsonl", format="mooncake")
    with pytest.raises(SpecError, match="shows a mooncake trace, not bailian"):
        load_trace(TRACES / "mooncake_conversation.jsonl", format="bailian")
    mixed = _file(tmp_path, "m.jsonl", BAILIAN + '{"timestamp": 1, "input_length": 4, "output_length": 1, '
                  '"hash_ids": [1]}\n')
    with pytest.raises(SpecError, match="missing field 'chat_id'") as info:
        load_trace(mixed)
    assert info.value.field == "line 2"
    res = runner.invoke(app, ["optimize", "--trace", str(TRACES / "burstgpt.csv"), "--trace-format", "azure"])
    assert res.exit_code == 2 and "shows a burstgpt trace, not azure" in res.stderr
    # the format and the block size given in the scenario's fields, through --set
    d = _optimize("--trace", str(TRACES / "bailian.jsonl"), "--trace-format", "bailian",
                  "--set", "workload.input.block_tokens=8")["workload"]
    assert d["distribution"]["block_tokens"] == 8 and d["distribution"]["format"] == "bailian"


def test_burstgpt_model_filter_and_failures():
    rows = list(csv.DictReader((TRACES / "burstgpt.csv").open()))
    tf = load_trace(TRACES / "burstgpt.csv")
    assert tf.models == ("ChatGPT", "GPT-4")
    assert tf.failed_excluded == sum(r["Response tokens"] == "0" for r in rows) > 0
    assert {r["Log Type"] for r in rows} == {"Conversation log", "API log"}
    g = load_trace(TRACES / "burstgpt.csv", model_filter="GPT-4")
    gpt4 = [r for r in rows if r["Model"] == "GPT-4"]
    assert g.filtered_out == len(rows) - len(gpt4)
    assert g.failed_excluded == sum(r["Response tokens"] == "0" for r in gpt4)
    assert len(g.trace) == len(gpt4) - g.failed_excluded
    d = _optimize("--trace", str(TRACES / "burstgpt.csv"), "--model-filter", "GPT-4")["workload"]
    assert d["requests"] == len(g.trace) and d["distribution"]["failed_excluded"] == g.failed_excluded
    res = runner.invoke(app, ["optimize", "--trace", str(TRACES / "burstgpt.csv"), "--model-filter", "gpt-4"])
    assert res.exit_code == 2 and "the models present are ChatGPT, GPT-4" in res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("h", [0.0, 0.3, 0.5, 0.9])
def test_assumed_hit_rate(h):
    f = str(TRACES / "azure_conv_2024.csv")
    d = _optimize("--trace", f, "--set", f"workload.input.assumed_hit_rate={h}")["workload"]
    inputs = np.array(_raw("azure_conv_2024.csv")[1])
    cached = np.minimum(np.floor(h * inputs + 0.5), inputs - 1)
    assert d["hit_rate_source"] == "assumed"
    assert d["prefix_hit_rate"] == pytest.approx(cached.sum() / inputs.sum(), rel=1e-12)
    assert d["prefix_hit_rate"] == pytest.approx(h, abs=len(inputs) / inputs.sum())  # the formula, within rounding
    assert d["mean_uncached_tokens"] == pytest.approx((inputs - cached).mean(), rel=1e-12)
    text = runner.invoke(app, ["optimize", "--trace", f, "--set", f"workload.input.assumed_hit_rate={h}"]).stdout
    assert f"prefix hit rate {d['prefix_hit_rate'] * 100:.1f}% (assumed)" in text


def test_hashless_without_assumption_is_unknown():
    text = runner.invoke(app, ["optimize", "--trace", str(TRACES / "azure_code_2023.csv")]).stdout
    assert "prefix hit rate unknown" in text


@pytest.mark.parametrize(("name", "extra", "message"), [
    ("bailian.jsonl", "workload.input.assumed_hit_rate=0.5", "its hit rate is measured"),
    ("azure_code_2023.csv", "workload.input.cache_capacity_gib=10", "nothing to cache"),
])
def test_assumption_and_cache_refused_where_they_mean_nothing(name, extra, message):
    res = runner.invoke(app, ["optimize", "--trace", str(TRACES / name), "--set", extra])
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.splitlines()) == 1


@pytest.mark.parametrize("name", SAMPLES)
def test_simulate_takes_every_format(name):
    res = runner.invoke(app, ["simulate", "--trace", str(TRACES / name), "--requests", "200", "--format", "json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["sim"]["hit_rate_source"] == ("unknown" if name.endswith(".csv") else "measured")
    if name.endswith(".csv"):
        assert d["prefix_hit_rate"] is None


def test_simulate_applies_the_assumed_split():
    f = str(TRACES / "azure_conv_2024.csv")
    sim = json.loads(runner.invoke(app, ["simulate", "--trace", f, "--set", "workload.input.assumed_hit_rate=0.5",
                                         "--format", "json"]).stdout)
    plan = _optimize("--trace", f, "--set", "workload.input.assumed_hit_rate=0.5")["workload"]
    assert sim["sim"]["hit_rate_source"] == "assumed"
    assert sim["prefix_hit_rate"] == pytest.approx(plan["prefix_hit_rate"], rel=1e-12)  # every request replayed


# ----------------------------------------------------------------------------------- bad input
HEAD = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"


@pytest.mark.parametrize(("text", "where", "message"), [
    ("TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.6805900,374\n", "line 1", "no column 'GeneratedTokens'"),
    (HEAD + "yesterday,10,5\n", "line 3, column TIMESTAMP", "not a date-time"),
    (HEAD + "2023-11-16 25:15:46.6805900,10,5\n", "line 3, column TIMESTAMP", "not a date-time"),
    (HEAD + "2023-11-16 18:15:47.1,-4,5\n", "line 3, column ContextTokens", "whole number"),
    (HEAD + "2023-11-16 18:15:47.1,12.5,5\n", "line 3, column ContextTokens", "whole number"),
    (HEAD + "2023-11-16 18:15:47.1,12,nan\n", "line 3, column GeneratedTokens", "whole number"),
    ("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,ChatGPT,10,5,-1,API log\n",
     "line 2, column Total tokens", "whole number"),
    ("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\nsoon,ChatGPT,10,5,15,API log\n",
     "line 2, column Timestamp", "seconds"),
    ("a,b,c\n1,2,3\n", "line 1", "matches no trace format"),
])
def test_bad_csv_is_one_line_naming_file_line_and_column(tmp_path, text, where, message):
    p = _file(tmp_path, "x.csv", text)
    res = runner.invoke(app, ["optimize", "--trace", str(p)])
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {p}: {where}: ") and message in lines[0], lines
    assert "Traceback" not in res.output and "nan" not in res.stdout


def test_no_format_names_the_formats_and_empty_file(tmp_path):
    p = _file(tmp_path, "x.csv", "a,b,c\n1,2,3\n")
    with pytest.raises(SpecError) as info:
        load_trace(p)
    assert all(f in info.value.message for f in ("mooncake", "bailian", "azure", "burstgpt"))
    res = runner.invoke(app, ["optimize", "--trace", str(_file(tmp_path, "e.csv", "\n"))])
    assert res.exit_code == 2 and "the file is empty" in res.stderr
    res = runner.invoke(app, ["optimize", "--trace", str(_file(tmp_path, "h.csv", HEAD.splitlines()[0] + "\n"))])
    assert res.exit_code == 2 and "no requests" in res.stderr
    res = runner.invoke(app, ["optimize", "--trace", str(p), "--trace-format", "parquet"])
    assert res.exit_code == 2 and res.stderr.startswith("error: --trace-format: unknown trace format 'parquet'")


def test_a_trace_is_read_once_per_process_until_it_changes(tmp_path):
    """A study's worker reads a trace once; an edit (size or modification time) reads it again, and
    a cached scenario built on it is still told it depends on the file."""
    import os
    import shutil

    from prfaas_plan.io.files import recording

    f = tmp_path / "t.jsonl"
    shutil.copy(TRACES / "bailian.jsonl", f)
    a = load_trace(f)
    with recording() as reads:
        b = load_trace(f)
    assert b is a and str(f) in reads
    assert load_trace(f, block_tokens=8) is not a  # other options, another read
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines[:-1]) + "\n")
    c = load_trace(f)
    assert c is not a and len(c.trace) == len(a.trace) - 1
    st = f.stat()
    f.write_text(f.read_text().replace('"type": "text"', '"type": "file"', 1))  # the same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert load_trace(f) is not c
