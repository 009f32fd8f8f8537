"""Fuzzing every input surface through the console script, in-process.

Properties (issue "Every real input works"): exit code in {0, 1, 2}; on 1 or 2 one line on stderr
without an exception name, and on 2 that line names the option, file or field; on 0 no NaN, inf
or None in any format, and JSON parses. Cases per test are the ``@fuzz(n)`` counts, 1,699 in all
(about 45 s on this project's 2-core machine); CI runs them derandomized (the same cases every
run), a local run draws new ones, and ``PRFAAS_FUZZ_SCALE=10`` runs ten times as many.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, ROOT
from tests.fuzz import strategies as fz
from tests.fuzz.harness import check, run

CI = bool(os.environ.get("CI"))
SCALE = float(os.environ.get("PRFAAS_FUZZ_SCALE", "1"))  # e.g. 10 for a longer local hunt
FORMATS = st.sampled_from(["table", "json", "csv"])
HF_BASES = sorted((FIXTURES / "hf-configs").glob("*.json")) + sorted(FIXTURES.glob("*.json"))
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def fuzz(cases: int):
    return settings(max_examples=max(1, round(cases * SCALE)), deadline=None, derandomize=CI, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _tmp(name: str, text: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="prfaas-fuzz-"))
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _value(option: str) -> str:
    return option.split("=", 1)[1]


def _names(options: list[str]) -> tuple[str, ...]:
    """What a message about one of these --set options must mention: its key (or its value)."""
    out: list[str] = []
    for o in options:
        key, _, value = o.partition("=")
        out += [key, key.rsplit(".", 1)[-1]]
        if value.strip():
            out.append(value.strip())
    return (*out, "--set")


@fuzz(180)
@given(st.lists(fz.set_option, min_size=1, max_size=2), st.sampled_from(["paper", "exact"]), FORMATS)
def test_optimize_with_overrides(options, method, fmt):
    args = ["optimize", "--method", method, "--format", fmt]
    for o in options:
        args += ["--set", o]
    check(run(args), names=_names(options))


@fuzz(90)
@given(fz.quantity, FORMATS)
def test_bandwidth_strings(text, fmt):
    check(run(["optimize", "--set", f"link.bandwidth={text}", "--format", fmt]),
          names=("link.bandwidth", "bandwidth", text.strip() or "''"))


@fuzz(75)
@given(st.one_of(fz.set_option, st.just("link.bandwidth=10Gbps")), st.sampled_from(["--load", "--rate"]),
       st.one_of(fz.quantity, st.sampled_from(["0.5", "0.9", "1.0", "1.2", "2.0"])), FORMATS)
def test_latency(option, flag, value, fmt):
    check(run(["latency", "--set", option, flag, value, "--format", fmt]),
          names=(*_names([option]), flag, value))


@fuzz(45)
@given(st.one_of(fz.set_option, st.just("link.bandwidth=10Gbps")), st.integers(min_value=-1, max_value=300),
       st.sampled_from(["0.3", "0.8", "1.0", "3", "nan"]), st.sampled_from(["0", "1", "-1", "x"]), FORMATS)
def test_simulate(option, requests, load, seed, fmt):
    check(run(["simulate", "--set", option, "--requests", str(requests), "--load", load, "--seed", seed,
               "--format", fmt]), names=(*_names([option]), "--requests", "--load", "--seed"))


LENGTH = st.sampled_from(["1", "1K", "8K", "32K", "128K", "1e5", "100000", "3000", "200K"])
KV_RATE = ({"--hardware": st.sampled_from(["H200", "H20", "B200", "H100", "MI355X"]),
            "--gpus": st.sampled_from(["8", "4", "1"]),
            "--lengths": st.lists(LENGTH, min_size=1, max_size=3).map(",".join),
            "--source": st.sampled_from(["auto", "measured", "analytic", "both", "scaled"]),
            "--instances": st.sampled_from(["1", "8", "64"])},
           {"--hardware": st.sampled_from(["H2000", "x", ""]), "--gpus": st.sampled_from(["0", "-1", "3", "x"]),
            "--lengths": st.lists(fz.quantity, min_size=1, max_size=3).map(",".join),
            "--source": st.just("other"), "--instances": st.sampled_from(["0", "-2", "1e3"])})


@fuzz(120)
@given(fz.options(*KV_RATE),
       st.sampled_from(["internal-1t", "MiniMax-M2.5", "Kimi-Linear-48B-A3B", "Qwen3-32B", "gpt-oss-120b"]), FORMATS)
def test_kv_rate(opts, model, fmt):
    args, broken = opts
    check(run(["kv-rate", model, *args, "--format", fmt]), names=(broken or model, model))


PERF = ({"--tpot": st.sampled_from(["25ms", "50ms", "0.02s", "1s", "100us"]), "--context": LENGTH,
         "--output-len": st.sampled_from(["1", "128", "1024", "4K"]),
         "--batches": st.sampled_from(["1,8", "1,8,32,64", "256", "1,4096"]),
         "--lengths": st.lists(LENGTH, min_size=1, max_size=3).map(",".join),
         "--memory-fraction": st.sampled_from(["0.9", "0.5", "1"]),
         "--hardware": st.sampled_from(["H200", "H20", "B200", "L40S"]), "--gpus": st.sampled_from(["8", "4"])},
        {"--tpot": fz.quantity, "--context": fz.quantity, "--output-len": fz.quantity,
         "--batches": st.sampled_from(["0", "x", "1,1e9", "-1", ""]), "--lengths": fz.quantity,
         "--memory-fraction": st.sampled_from(["0", "1.5", "nan", "-1"]), "--gpus": st.sampled_from(["0", "x"])})


@fuzz(120)
@given(fz.options(*PERF), st.sampled_from(["MiniMax-M2.5", "internal-1t", "Qwen3-32B", "DeepSeek-V3.2",
                                           "gpt-oss-120b"]), FORMATS)
def test_perf(opts, model, fmt):
    args, broken = opts
    check(run(["perf", model, *args, "--format", fmt]), names=(broken or model, model))


@fuzz(45)
@given(st.sampled_from(["internal-1t", "DeepSeek-V3.2", "MiMo-V2-Flash", "nosuch"]),
       st.sampled_from(["bf16", "fp8", "fp4", "x"]), st.sampled_from(["8", "0", "-1", "x", "1"]),
       st.sampled_from(["128", "0", "64"]), FORMATS)
def test_model_show(model, dtype, heads, head_dim, fmt):
    check(run(["model", "show", model, "--kv-dtype", dtype, "--ref-kv-heads", heads, "--ref-head-dim", head_dim,
               "--format", fmt]), names=(model, "--kv-dtype", "--ref-kv-heads", "--ref-head-dim"))


SWEEPS = st.sampled_from([("link.bandwidth", "1Gbps", "100Gbps"), ("link.bandwidth", "500Mbps", "10GB/s"),
                          ("clusters.prfaas.instances", "1", "8"), ("workload.input.mu", "8", "11"),
                          ("link.usable_fraction", "0.1", "1"), ("clusters.local.instances", "2", "16")])


@fuzz(60)
@given(fz.mostly(SWEEPS, st.tuples(st.sampled_from(["link.bandwidth", "clusters.prfaas.instances", "no.such"]),
                                   fz.quantity, fz.quantity)),
       fz.mostly(st.sampled_from(["2", "3", "5", "4:log"]), st.sampled_from(["0", "-1", "100000", "x", "1"])), FORMATS)
def test_sweep(ends, n, fmt):
    key, a, b = ends
    spec = f"{key}={a}..{b}:{n}"
    check(run(["sweep", "--set", spec, "--format", fmt]), names=(key, spec, "--set", a, b, n))


@fuzz(90)
@given(fz.trace_lines(), st.sampled_from(["optimize", "latency", "simulate"]), FORMATS)
def test_traces(text, command, fmt):
    path = _tmp("trace.jsonl", text)
    extra = {"optimize": [], "latency": ["--load", "0.6"], "simulate": ["--load", "0.6"]}[command]
    check(run([command, "--trace", str(path), *extra, "--format", fmt]), names=(path.name, "--trace"))


@fuzz(40)
@given(fz.trace_csv(), st.sampled_from(["optimize", "simulate"]), FORMATS)
def test_csv_traces(text, command, fmt):
    path = _tmp("trace.csv", text)
    extra = ["--load", "0.6"] if command == "simulate" else []
    check(run([command, "--trace", str(path), *extra, "--format", fmt]), names=(path.name, "--trace"))


@fuzz(75)
@given(fz.lengths_csv(), st.sampled_from(["optimize", "latency"]), FORMATS)
def test_length_csvs(text, command, fmt):
    csv_path = _tmp("lengths.csv", text)
    scenario = yaml.safe_load((ROOT / "scenarios" / "paper-case-study.yaml").read_text())
    scenario["workload"]["input"] = {"kind": "empirical", "file": str(csv_path)}
    path = csv_path.parent / "empirical.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    extra = ["--load", "0.5"] if command == "latency" else []
    check(run([command, str(path), *extra, "--format", fmt]), names=(csv_path.name, path.name))


@fuzz(120)
@given(st.data())
def test_hf_configs(data):
    base = data.draw(st.sampled_from(HF_BASES))
    cfg = data.draw(fz.mutated_json(json.loads(base.read_text())))
    path = _tmp(base.name, json.dumps(cfg))
    out = path.with_suffix(".yaml")
    r = run(["model", "import", str(path), "-o", str(out)])
    check(r, names=(path.name,))
    if r.code == 0:
        check(run(["kv-rate", str(out), "--lengths", "1K,32K", "--format", "json"]), names=(out.name,))


@fuzz(12)  # each case runs a least-squares fit (~0.8 s)
@given(fz.measurement_csv(), st.sampled_from(["H200", "H20"]), FORMATS)
def test_measurement_csvs(text, hardware, fmt):
    path = _tmp("measured.csv", text)
    check(run(["calibrate", str(path), "--hardware", hardware, "--gpus", "8", "--format", fmt]), names=(path.name,))


@fuzz(120)
@given(st.data(), st.sampled_from(["paper", "exact"]), FORMATS)
def test_mutated_scenarios(data, method, fmt):
    base = data.draw(st.sampled_from(SCENARIOS))
    scenario = data.draw(fz.mutated_json(yaml.safe_load(base.read_text())))
    path = _tmp(base.name, yaml.safe_dump(scenario))
    check(run(["optimize", str(path), "--method", method, "--format", fmt]), names=(path.name,),
          echoed=_echoed(scenario))


CATALOG_ENTRIES = sorted((ROOT / "models").glob("*.yaml")) + sorted((ROOT / "hardware").glob("*.yaml"))


@fuzz(120)
@given(st.data(), FORMATS)
def test_mutated_catalog_entries(data, fmt):
    """A user's own model or GPU YAML in a --catalog folder, mutated, through the commands that read it."""
    base = data.draw(st.sampled_from(CATALOG_ENTRIES))
    entry = data.draw(fz.mutated_json(yaml.safe_load(base.read_text())))
    folder = Path(tempfile.mkdtemp(prefix="prfaas-fuzz-"))
    (folder / base.parent.name).mkdir()
    path = folder / base.parent.name / f"fuzzed-{base.name}"
    if "name" in entry:
        entry["name"] = f"fuzzed-{base.stem}"
    path.write_text(yaml.safe_dump(entry), encoding="utf-8")
    names = (path.name, f"fuzzed-{base.stem}", "--catalog")
    if base.parent.name == "models":
        args = data.draw(st.sampled_from([["kv-rate", f"fuzzed-{base.stem}", "--lengths", "1K,32K"],
                                          ["model", "show", f"fuzzed-{base.stem}"],
                                          ["perf", f"fuzzed-{base.stem}", "--hardware", "H200", "--gpus", "8",
                                           "--context", "8K"],
                                          ["optimize", "--set", f"model=fuzzed-{base.stem}"]]))
    else:
        args = data.draw(st.sampled_from([["kv-rate", "MiniMax-M2.5", "--hardware", f"fuzzed-{base.stem}"],
                                          ["hardware"],
                                          ["optimize", "--set", f"clusters.prfaas.hardware=fuzzed-{base.stem}"]]))
    check(run([*args, "--catalog", str(folder), "--format", fmt]), names=names)


@fuzz(12)  # each case runs a least-squares fit
@given(st.lists(st.builds(lambda k, v: f"{k}={v}",
                          st.sampled_from(["compute", "low_precision", "memory", "comm", "prefill_overhead_ms",
                                           "decode_overhead_ms", "nosuch"]),
                          fz.mostly(st.sampled_from(["0.4", "0.5", "400", "5", "1"]), fz.quantity)),
                min_size=0, max_size=2), FORMATS)
def test_calibrate_hold(holds, fmt):
    args = ["calibrate", str(ROOT / "benchmarks" / "data" / "paper_table3_h200.csv"), "--hardware", "H200",
            "--gpus", "8", "--format", fmt]
    for h in holds:
        args += ["--hold", h]
    check(run(args), names=("--hold", *holds))


@fuzz(20)
@given(fz.mostly(st.sampled_from(["10s", "60s", "1min", "2.5s"]),  # a long valid run would take minutes
                 st.sampled_from([*fz.WEIRD, "1e30", "1e9s", "5 h", "-1s", "0s"])),
       fz.mostly(st.sampled_from(["0.5", "0.8", "0.95"]), fz.quantity), st.sampled_from(["paper", "exact"]), FORMATS)
def test_simulate_duration(duration, load, method, fmt):
    check(run(["simulate", "--duration", duration, "--load", load, "--method", method, "--format", fmt]),
          names=("--duration", "--load", duration, load))


@fuzz(12)
@given(st.sampled_from(sorted((FIXTURES / "hf-configs").glob("*.json"))), FORMATS,
       st.sampled_from([["model", "show"], ["kv-rate"], ["perf"]]))
def test_hub_configs_as_models(config, fmt, command):
    check(run([*command, str(config), "--format", fmt]), names=(config.name,))


TOPOLOGY = ROOT / "scenarios" / "two-regions.yaml"


@fuzz(60)
@given(st.data(), FORMATS)
def test_mutated_topologies(data, fmt):
    """The sites/links form mutated (shares, links, per-site workloads) through optimize, latency,
    sweep and a short simulation."""
    scenario = data.draw(fz.mutated_json(yaml.safe_load(TOPOLOGY.read_text())))
    path = _tmp("two-regions.yaml", yaml.safe_dump(scenario))
    args = data.draw(st.sampled_from([["optimize", str(path)], ["latency", str(path), "--load", "0.5"],
                                      ["sweep", str(path), "--set", "links[0].bandwidth=5Gbps..50Gbps:3"],
                                      ["simulate", str(path), "--load", "0.5", "--requests", "300"]]))
    check(run([*args, "--format", fmt]), names=(path.name,), echoed=_echoed(scenario))


def _echoed(scenario: dict) -> tuple[str, ...]:
    """The strings a scenario gives as names (its own, its sites'): the output repeats them as given."""
    sites = scenario.get("sites") if isinstance(scenario.get("sites"), dict) else {}
    out = [scenario.get("name"), *sites, *(s.get("name") for s in sites.values() if isinstance(s, dict))]
    return tuple(x for x in out if isinstance(x, str))


SIZED = [p for p in SCENARIOS if "sizing" in (yaml.safe_load(p.read_text()) or {})]


@fuzz(60)
@given(st.data(), FORMATS)
def test_size(data, fmt):
    """`size` with its sizing: section mutated (demand, headroom, candidates, tiers, prices), a
    --demand string, and now and then -o PLAN.yaml (which size itself confirms through optimize)."""
    base = data.draw(st.sampled_from(SIZED))
    scenario = yaml.safe_load(base.read_text())
    if data.draw(st.booleans()):
        scenario["sizing"] = data.draw(fz.mutated_json(scenario["sizing"]))
    path = _tmp(base.name, yaml.safe_dump(scenario))
    args = ["size", str(path), "--format", fmt]
    demand = data.draw(st.one_of(st.none(), fz.quantity, st.sampled_from(["0.5rps", "40rps", "1e6rps", "120rpm"])))
    if demand is not None:
        args += ["--demand", demand]
    if data.draw(st.integers(0, 3)) == 0:
        args += ["-o", str(path.with_name("plan.yaml"))]
    check(run(args), names=(path.name, "--demand", "--output", *([demand.strip()] if demand else [])))


_LEVELS = st.lists(st.one_of(st.sampled_from(["0", "10%", "50%", "100%", "0.3", "150%", "-5%", "abc", "", "5e-324",
                                              "1e-310"]),
                             st.floats(-0.5, 1.5).map(lambda x: f"{x:.2f}")), min_size=1, max_size=3).map(",".join)


@fuzz(25)
@given(_LEVELS, st.one_of(st.none(), st.sampled_from(["0.5", "0.7", "0", "-1", "2", "x"])), FORMATS)
def test_degrade(levels, load, fmt):
    args = ["degrade", "--levels", levels, "--format", fmt] + (["--load", load] if load is not None else [])
    check(run(args), names=("--levels", "--load", levels, *([load] if load else [])))


_GBPS_TEXT = st.one_of(fz.quantity, st.sampled_from(["14.7Gbps", "8Gbps", "2Gbps", "0Gbps", "100"]))


@fuzz(40)
@given(st.data(), FORMATS)
def test_bandwidth_laws(data, fmt):
    """link.bandwidth as a quantiles mapping or a series file of drawn rows, through optimize."""
    if data.draw(st.booleans()):
        keys = data.draw(st.lists(st.sampled_from(["p50", "p10", "p1", "p90", "p0"]), min_size=1, max_size=3,
                                  unique=True))
        law = ", ".join(f"{k}: {data.draw(_GBPS_TEXT)}" for k in keys)
        value = f"{{kind: quantiles, {law}}}"
        names = ("link.bandwidth", *keys)
    else:
        rows = data.draw(st.lists(st.builds(lambda t, b: f"{t},{b}", st.sampled_from(["0", "60", "120", "60", "x",
                                                                                    "-1", "1e3"]),
                                            _GBPS_TEXT), min_size=0, max_size=6))
        path = _tmp("bw.csv", "time_s,bandwidth\n" + "\n".join(rows) + "\n")
        value = f"{{kind: series, file: {path}}}"
        names = ("link.bandwidth", path.name)
    args = ["optimize", "--set", f"link.bandwidth={value}", "--format", fmt]
    if data.draw(st.booleans()):
        args += ["--plan-at", data.draw(st.sampled_from(["p10", "p50", "p1", "p99", "q5", "p100"]))]
        names = (*names, "--plan-at")
    check(run(args), names=names)


@fuzz(8)  # each case plans at every bandwidth and searches t at every load (~1-3 s)
@given(st.sampled_from(["5Gbps", "10,100Gbps", "0Gbps", "50%", "abc", "1Gbps..10Gbps:2", "10%,100Gbps", "10%,10Gbps"]),
       st.sampled_from(["0.5", "0.5,1.0", "2", "0", "1.0"]), FORMATS)
def test_thresholds(bandwidths, loads, fmt):
    check(run(["thresholds", "--bandwidths", bandwidths, "--loads", loads, "--format", fmt]),
          names=("--bandwidths", "--loads", bandwidths, loads))


STACKS = sorted((ROOT / "stacks").glob("*.yaml"))


@fuzz(60)
@given(st.data(), FORMATS)
def test_mutated_stacks(data, fmt):
    """A user's serving-stack profile in a --catalog folder, mutated, through every command that takes one."""
    base = data.draw(st.sampled_from(STACKS))
    entry = data.draw(fz.mutated_json(yaml.safe_load(base.read_text())))
    folder = Path(tempfile.mkdtemp(prefix="prfaas-fuzz-"))
    (folder / "stacks").mkdir()
    path = folder / "stacks" / "fuzzed.yaml"
    if "name" in entry:
        entry["name"] = "fuzzed"
    path.write_text(yaml.safe_dump(entry), encoding="utf-8")
    args = data.draw(st.sampled_from([["kv-rate", "MiniMax-M2.5", "--hardware", "H100", "--lengths", "1K,32K",
                                       "--stack", "fuzzed"],
                                      ["perf", "Qwen3-32B", "--hardware", "B200", "--stack", "fuzzed"],
                                      ["stacks"],
                                      ["optimize", "qwen35-b200-h200", "--set", "stack=fuzzed"]]))
    check(run([*args, "--catalog", str(folder), "--format", fmt]), names=(path.name, "fuzzed", "--catalog", "stack"))


@fuzz(40)
@given(st.one_of(st.text(max_size=12), st.sampled_from(["open-engines", "paper-table3", "PAPER-TABLE3", "nope.yaml",
                                                         "./stacks/open-engines.yaml", ""])), FORMATS)
def test_stack_names(name, fmt):
    check(run(["kv-rate", "Qwen3-32B", "--lengths", "1K", "--stack", name, "--format", fmt]), names=("--stack",))


BENCH = sorted((FIXTURES / "bench").glob("*.json*"))


@fuzz(30)  # each case runs a least-squares fit
@given(st.data(), FORMATS)
def test_calibrate_mutated_benchmark_outputs(data, fmt):
    """A benchmark output as an engine writes it, one or two values changed, into a profile fit."""
    base = data.draw(st.sampled_from(BENCH))
    text = base.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()] if text.lstrip().startswith("{") \
        and text.count("\n{") else None
    records = lines or [json.loads(text)]
    i = data.draw(st.integers(min_value=0, max_value=len(records) - 1))
    records[i] = data.draw(fz.mutated_json(records[i]))
    body = "\n".join(json.dumps(r) for r in records)
    path = _tmp(base.name, body)
    extra = ["--input-tokens", "2048"] if "latency" in base.name else []
    check(run(["calibrate", str(path), "--hardware", "H100", "--gpus", "8", "--model", "Llama-3.1-70B", *extra,
               "--format", fmt]), names=(path.name, "--hardware", "--model", "--input-tokens"))


@fuzz(20)
@given(st.data(), FORMATS)
def test_calibrate_mutated_measurement_set(data, fmt):
    """The public set's CSV with a cell changed, into a profile fit."""
    lines = (FIXTURES / "measurements" / "public_sample.csv").read_text().splitlines()
    head = next(n for n, line in enumerate(lines) if not line.startswith("#"))
    row = data.draw(st.integers(min_value=head + 1, max_value=len(lines) - 1))
    cells = lines[row].split(",")
    col = data.draw(st.integers(min_value=0, max_value=12))
    value = data.draw(st.sampled_from(["", "-1", "abc", "1e999", "nan", "0", "B999", "fp3", "1e-300"]))
    cells[col] = value
    lines[row] = ",".join(cells)
    path = _tmp("public.csv", "\n".join(lines) + "\n")
    # source, engine and engine version are names: the residual table repeats a source named "nan" as given
    check(run(["calibrate", str(path), "--name", "fz", "--format", fmt]), names=(path.name,),
          echoed=(value,) if col in (0, 1, 2) else ())
