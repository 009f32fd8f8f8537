"""Hypothesis strategies for the inputs people give the planner: numbers with and without units,
override values, traces, length CSVs, HF configs, measurement CSVs, scenario mutations."""

from __future__ import annotations

import json

from hypothesis import strategies as st

UNITS = ["", "Gbps", "Gb/s", "Gbit/s", "gbps", "GB/s", "GBps", "GByte/s", "Mbps", "MB/s", "Tbps", "TB/s",
         "Kbps", "bps", "B/s", "GiB/s", "K", "k", "M", "ms", "s", "us", "min", "h", "x", "%", "GBPS", "gBps",
         "Gb", "GB", " Gbps", "Gbps ", "/s", "e3", "B"]
WEIRD = ["", " ", "nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-0", "0", "0.0", "None", "null", "~",
         "true", "[]", "{}", "'", "\"", "a'b", "1,5", "1_000", "0x10", "1e-400", "１０", "10 Gbps", "1e30",
         "-1", "1..2", ":", "#", "1K5", "1.5.5", "\t"]
NUMBERS = st.one_of(
    st.integers(min_value=-10, max_value=10**7),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e31),
    st.sampled_from([0, 1, 2, 3, 7, 8, 128, 1024, 131072, 10**9, 1e-9, 0.5, 0.999999, 1.0000001,
                     1e300, 1e308, 1e-200, 1e-300, 5e-324]),  # finite, yet beyond a float once scaled or squared
)


def _num_text(x) -> str:
    return repr(x) if isinstance(x, float) else str(x)


quantity = st.one_of(
    st.builds(lambda x, u: f"{_num_text(x)}{u}", NUMBERS, st.sampled_from(UNITS)),
    st.sampled_from(WEIRD),
    st.text(alphabet="0123456789.eEkKmMgGbBps/- ", max_size=8),
)

# dotted scenario fields a user overrides with --set, with values that make sense for some
SET_KEYS = [
    "link.bandwidth", "link.usable_fraction", "clusters.prfaas.instances", "clusters.local.instances",
    "clusters.prfaas.gpus_per_instance", "clusters.local.gpus_per_instance", "clusters.prfaas.hardware",
    "clusters.local.hardware", "workload.input.mu", "workload.input.sigma", "workload.input.min",
    "workload.input.max", "workload.input.kind", "workload.output_tokens", "slo.decode_tokens_per_s",
    "decode.bs_max", "decode.t_decode", "decode.mode", "search.threshold.step", "search.threshold.min",
    "search.threshold.max", "search.method", "model", "baselines.homogeneous.instances",
    "baselines.homogeneous.hardware", "baselines.naive_heterogeneous", "no.such.key", "link", "link.bandwidth.x",
    "link.handoff", "link.rtt", "link.connections", "link.max_window", "link.stream_bandwidth", "link.share_cap",
]
NAMES = ["H200", "H20", "H100", "B200", "H2000", "internal-1t", "MiniMax-M2.5", "Qwen3-32B", "nosuch",
         "lognormal", "uniform", "fixed", "gamma", "empirical", "paper", "exact", "pinned", "derived"]

set_value = st.one_of(quantity, st.sampled_from(NAMES))
_gbps = st.floats(min_value=0.05, max_value=2000).map(lambda x: f"{x:.3g}Gbps")
_count = st.integers(min_value=1, max_value=24).map(str)
# values a user would plausibly give each key, so that most drawn runs succeed and their output is checked
VALID = {
    "link.bandwidth": st.one_of(_gbps, st.sampled_from(["10Gb/s", "1.25GB/s", "400Mbps", "100", "2.5e1Gbps"])),
    "link.usable_fraction": st.floats(min_value=0.05, max_value=1.0).map(lambda x: f"{x:.3f}"),
    "clusters.prfaas.instances": _count, "clusters.local.instances": st.integers(2, 24).map(str),
    "clusters.prfaas.gpus_per_instance": st.sampled_from(["1", "2", "4", "8"]),  # 1, 2: weights may not fit
    "clusters.local.gpus_per_instance": st.sampled_from(["8"]),
    "clusters.prfaas.hardware": st.sampled_from(["H200", "H100", "B200", "B300", "H20", "MI300X"]),
    "clusters.local.hardware": st.sampled_from(["H20", "H200", "H100", "L40S"]),
    "workload.input.mu": st.floats(min_value=5, max_value=11.5).map(lambda x: f"{x:.2f}"),
    "workload.input.sigma": st.floats(min_value=0.05, max_value=2.5).map(lambda x: f"{x:.2f}"),
    "workload.input.min": st.sampled_from(["1", "128", "1K", "4K"]),
    "workload.input.max": st.sampled_from(["8K", "32K", "128K", "200K", "1e5"]),
    "workload.output_tokens": st.sampled_from(["1", "16", "256", "1024", "8K"]),
    "slo.decode_tokens_per_s": st.sampled_from(["10", "20", "40", "50"]),
    "decode.bs_max": st.integers(1, 256).map(str),
    "decode.t_decode": st.sampled_from(["10ms", "25ms", "0.02s", "20ms"]),
    "decode.mode": st.sampled_from(["pinned", "derived"]),
    "search.method": st.sampled_from(["paper", "exact"]),
    "model": st.sampled_from(["internal-1t", "MiniMax-M2.5", "Kimi-Linear-48B-A3B", "Qwen3.5-397B-A17B",
                              "Ring-2.5-1T", "DeepSeek-V3.2", "gpt-oss-120b", "Llama-3.1-8B"]),
    "baselines.homogeneous.instances": st.integers(1, 24).map(str),
    "link.handoff": st.sampled_from(["0s", "29ms", "200ms", "1s"]),
    "link.connections": st.integers(1, 64).map(str),
    "link.max_window": st.sampled_from(["64KiB", "4MiB", "16MiB", "1e6"]),
    "link.stream_bandwidth": st.sampled_from(["1Gbps", "2Gbps", "14.7Gbps"]),
    "link.share_cap": st.floats(min_value=0.05, max_value=1.0).map(lambda x: f"{x:.3f}"),
}
_valid_option = st.sampled_from(sorted(VALID)).flatmap(lambda k: VALID[k].map(lambda v: f"{k}={v}"))
_junk_option = st.builds(lambda k, v: f"{k}={v}", st.sampled_from(SET_KEYS), set_value)
set_option = st.one_of(_valid_option, _valid_option, _valid_option, _junk_option)


def mostly(valid, junk):
    """Three in four draws valid, so the output of real runs is checked as often as the refusals."""
    return st.one_of(valid, valid, valid, junk)


@st.composite
def options(draw, valid: dict, junk: dict) -> tuple[list[str], str | None]:
    """Command-line options all valid, or (half the time) all valid but one: ``(args, broken option)``."""
    values = {flag: draw(strategy) for flag, strategy in valid.items()}
    broken = draw(st.one_of(st.none(), st.sampled_from(sorted(junk))))
    if broken is not None:
        values[broken] = draw(junk[broken])
    return [x for flag, v in values.items() for x in (flag, v)], broken


@st.composite
def trace_csv(draw) -> str:
    """Azure or BurstGPT CSV, mostly valid, sometimes broken in one cell, a column or the header."""
    burst = draw(st.booleans())
    header = (["Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"] if burst
              else ["TIMESTAMP", "ContextTokens", "GeneratedTokens"])
    rows = []
    t = 0
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        t += draw(st.sampled_from([0, 1, 7, 60]))
        inp = draw(st.one_of(st.integers(min_value=1, max_value=140_000), st.sampled_from([1, 2, 512])))
        out = draw(st.sampled_from([0, 1, 2, 149, 1024]))
        if burst:
            rows.append([str(t), draw(st.sampled_from(["ChatGPT", "GPT-4"])), str(inp), str(out), str(inp + out),
                         draw(st.sampled_from(["Conversation log", "API log"]))])
        else:
            frac = draw(st.sampled_from(["6805900", "5", "009930"]))
            stamp = f"2023-11-16 18:{t // 60 % 60:02d}:{t % 60:02d}.{frac}"
            rows.append([stamp, str(inp), str(out)])
    if draw(st.booleans()):  # one mutation
        i = draw(st.integers(min_value=0, max_value=len(rows) - 1))
        j = draw(st.integers(min_value=0, max_value=len(header) - 1))
        how = draw(st.sampled_from(["cell", "drop-column", "header"]))
        if how == "cell":
            rows[i][j] = draw(st.sampled_from(["-3", "2.5", "", "abc", "nan", "1e400", "2023-13-01 00:00:00"]))
        elif how == "drop-column":
            header.pop(j)
            for r in rows:
                r.pop(j)
        else:
            header[j] = draw(st.sampled_from(["x", "timestamp", ""]))
    return "\n".join(",".join(r) for r in [header, *rows]) + "\n"


@st.composite
def trace_lines(draw) -> str:
    """Mooncake JSONL, mostly valid, sometimes broken in one place."""
    n = draw(st.integers(min_value=1, max_value=40))
    t = 0.0
    lines = []
    for _ in range(n):
        t += draw(st.sampled_from([0, 0, 1, 5, 100, 1000]))
        length = draw(st.one_of(st.integers(min_value=1, max_value=140_000),
                                st.sampled_from([1, 2, 511, 512, 513, 131072])))
        blocks = (length + 511) // 512
        start = draw(st.integers(min_value=0, max_value=30))
        rec = {"timestamp": t, "input_length": length,
               "output_length": draw(st.sampled_from([0, 0, 1, 2, 149, 1024])),
               "hash_ids": list(range(start, start + blocks))}
        lines.append(rec)
    if draw(st.booleans()):  # one mutation
        i = draw(st.integers(min_value=0, max_value=n - 1))
        key = draw(st.sampled_from(["timestamp", "input_length", "output_length", "hash_ids", "extra"]))
        how = draw(st.sampled_from(["drop", "neg", "zero", "str", "null", "float", "huge", "list", "blocks"]))
        rec = lines[i]
        if how == "drop":
            rec.pop(key, None)
        elif how == "blocks":  # more hash ids than the input's 512-token blocks: 2,560 tokens of ids for 100
            rec["hash_ids"] = list(range(1000, 1000 + (rec["input_length"] + 511) // 512 + draw(st.integers(1, 4))))
        else:
            rec[key] = {"neg": -3, "zero": 0, "str": "abc", "null": None, "float": 2.5, "huge": 10**30,
                        "list": [1, "a"]}[how]
    text = "\n".join(json.dumps(r) for r in lines)
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        text += "\n{not json"
    return text + "\n"


@st.composite
def lengths_csv(draw) -> str:
    rows = draw(st.lists(st.one_of(
        st.builds(str, st.integers(min_value=-5, max_value=200_000)),
        st.builds(lambda a, b: f"{a},{b}", st.integers(min_value=0, max_value=200_000),
                  st.one_of(st.integers(min_value=-2, max_value=50), st.just("abc"), st.just("1.5"))),
        st.sampled_from(["length,count", "# comment", "", "abc", "100,abc", "1e4", "8K", "nan", "inf", "1,2,3"]),
    ), min_size=0, max_size=30))
    return "\n".join(rows) + "\n"


def mutate_json(draw, obj, depth=0):
    """One random change somewhere in a JSON object: drop, zero, negate, stringify, blow up."""
    if not isinstance(obj, dict) or not obj:
        return obj
    key = draw(st.sampled_from(sorted(obj)))
    value = obj[key]
    if isinstance(value, dict) and depth < 3 and draw(st.booleans()):
        obj[key] = mutate_json(draw, dict(value), depth + 1)
        return obj
    how = draw(st.sampled_from(["drop", "zero", "neg", "str", "null", "huge", "float", "list", "half", "text",
                                "add"]))
    if how == "drop":
        obj.pop(key)
    elif how == "text":  # a number with a unit, or something that looks like one
        obj[key] = draw(quantity)
    elif how == "add":  # a key the schema does not know
        obj[draw(st.sampled_from(["extra", "Bandwidth", "kind", "file", "value"]))] = draw(quantity)
    elif how == "half" and isinstance(value, int) and not isinstance(value, bool):
        obj[key] = value // 2 + 1
    else:
        obj[key] = {"zero": 0, "neg": -1, "str": "abc", "null": None, "huge": 1e30, "float": 7.5,
                    "list": [], "half": value}[how]
    return obj


@st.composite
def mutated_json(draw, base: dict) -> dict:
    obj = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        obj = mutate_json(draw, obj)
    return obj


_MODELS_T3 = st.sampled_from(["MiniMax-M2.5", "Qwen3-235B-A22B", "Kimi-Linear-48B-A3B", "Qwen3.5-397B-A17B"])


@st.composite
def measurement_csv(draw) -> str:
    """A calibrate CSV: valid prefill and decode rows, or (half the time) one of them broken."""
    rows = ["kind,model,length,prefill_s,batch,context,step_s"]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):  # a fit per case: keep it small
        model = draw(_MODELS_T3)
        if draw(st.booleans()):
            length = draw(st.sampled_from(["32K", "32768", "1K", "8K", "1e4"]))
            rows.append(f"prefill,{model},{length},{draw(st.sampled_from(['1.84', '1840ms', '0.5', '3.2s']))},,,")
        else:
            rows.append(f"decode,{model},,,{draw(st.sampled_from(['1', '8', '32']))},"
                        f"{draw(st.sampled_from(['8K', '32K', '4096']))},{draw(st.sampled_from(['0.03', '25ms']))}")
    if draw(st.booleans()):
        i = draw(st.integers(min_value=0, max_value=len(rows) - 1))
        cells = rows[i].split(",")
        j = draw(st.integers(min_value=0, max_value=len(cells) - 1))
        cells[j] = draw(st.sampled_from(["", "0", "-1", "nan", "inf", "x", "1e-9", "1e9", "nosuch", "other", "1,2"]))
        rows[i] = ",".join(cells)
    return "\n".join(rows) + "\n"


# option values with units: the option's own, one convertible to it, another quantity's, junk
OPTION_UNITS = {
    "--rate": st.sampled_from(["2", "2rps", "120rpm", "2req/s", "7200rph", "2Gbps", "2kg", "0rps", "-1rps", "1e-400"]),
    "--load": st.sampled_from(["0.5", "50%", "70%", "0%", "5e-324", "50%%", "0.5Gbps", "x", "150%"]),
    "--cache-gib": st.sampled_from(["10", "10GiB", "10.7GB", "512MiB", "10ms", "0GiB", "-1GiB", "1e400GiB", "x"]),
    "--levels": st.sampled_from(["50%", "5e-324", "1e-310", "1e-300", "0,5e-324", "10%,1e-320", "0.5,0.1,0"]),
    "--bandwidths": st.sampled_from(["10%,100Gbps", "10%,10Gbps", "50%,0.5", "10%,5kg", "1Gbps,50%", "0%,10Gbps",
                                     "10Gbps,100Gbps", "25%,50%"]),
}
# a site's name as typed: the scenario's, a typo, another case, a new one
SITE_KEYS = st.builds(lambda site, field: f"sites.{site}.{field}",
                      st.sampled_from(["prefill-east", "prefil-east", "Region-a", "region-c", "local", "prfaas"]),
                      st.sampled_from(["hardware", "instances", "gpus_per_instance", "demand_share"]))
