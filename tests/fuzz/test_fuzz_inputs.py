"""Fuzzing the input classes of issue 26 through the console script, as ``test_fuzz_cli`` does (the
same ``check`` properties, which now include whole instance counts in JSON and no warning line):

- every instance `size` buys holds the model's weights and a request's KV (``core.memory``);
- a trace row whose hash ids need more tokens than its input is one line naming the file;
- a one-site ``sites:`` scenario, and a `size -o` plan of one, through degrade / thresholds / replay;
- a bandwidth law given by ``--set`` through degrade / thresholds / replay, as one in the file;
- option values with units (the option's own, convertible, another quantity's) and site-name typos;
- `report`: the sizing section there, saying why when its tables are not.

CI runs them derandomized (``fuzz``); ``PRFAAS_FUZZ_SCALE`` scales the cases.
"""

from __future__ import annotations

import json
import math
import re

import yaml
from hypothesis import given
from hypothesis import strategies as st

from prfaas_plan.api import holds
from prfaas_plan.core.memory import holding
from prfaas_plan.io.load import Catalog, load_gpu
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.specs.hardware import InstanceSpec
from tests.conftest import FIXTURES, ROOT
from tests.fuzz import strategies as fz
from tests.fuzz.harness import check, run
from tests.fuzz.test_fuzz_cli import FORMATS, SIZED, _tmp, fuzz

CASE = ROOT / "scenarios" / "paper-case-study.yaml"
DIURNAL = FIXTURES / "bandwidth" / "diurnal.csv"
GPUS = st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3, unique=True)


def _holds(sc, hardware: str, gpus: int, tokens: float) -> bool:
    inst = InstanceSpec(gpu=load_gpu(hardware, Catalog.default()), gpus=gpus)
    return holds.measured(sc, inst) or holding(sc.model, inst, tokens, memory_fraction=sc.decode.memory_fraction).fits


@fuzz(30)
@given(st.data(), st.sampled_from(["internal-1t", "Qwen3.5-397B-A17B", "DeepSeek-V3", "Llama-3.1-70B", "Qwen3-32B"]))
def test_size_buys_only_instances_that_hold_the_model(data, model):
    base = data.draw(st.sampled_from(SIZED))
    scenario = yaml.safe_load(base.read_text())
    sizing = scenario["sizing"]
    sizing["prfaas"]["gpus_per_instance"] = data.draw(GPUS)
    sizing["local"]["gpus_per_instance"] = data.draw(GPUS)
    sizing["local"]["hardware"] = data.draw(st.lists(st.sampled_from(["H20", "H200", "H100", "L40S"]), min_size=1,
                                                     max_size=2, unique=True))
    scenario["model"] = model
    path = _tmp(base.name, yaml.safe_dump(scenario))
    r = run(["size", str(path), "--format", "json"])
    check(r, names=(path.name,))
    if r.code != 0:
        return
    sc = load_scenario(str(path), Catalog.default())
    best = json.loads(r.stdout)["best"]
    top = max(holds.longest(s.workload.lengths) for s in sc.topology.sites)
    pre = best["prefill_service"]
    if pre and pre.get("instances"):
        assert _holds(sc, pre["hardware"], pre["gpus_per_instance"], top), (model, pre)
    for name, site in best["sites"].items():
        if site["n_p"] > 0:  # local prefill up to t (or every length)
            w = next(s.workload for s in sc.topology.sites if s.name == name)
            longest = min(site["threshold_tokens"] if site["threshold_tokens"] is not None else math.inf,
                          holds.longest(w.lengths))
            assert _holds(sc, site["hardware"], site["gpus_per_instance"], longest), (model, name, site)


@fuzz(30)
@given(fz.trace_lines(), st.one_of(st.none(), fz.OPTION_UNITS["--cache-gib"]), FORMATS)
def test_trace_stats(text, gib, fmt):
    path = _tmp("trace.jsonl", text)
    args = ["trace", "stats", str(path), "--format", fmt]
    if gib is not None:
        args += ["--cache-gib", gib, "--model", "DeepSeek-V3"]
    check(run(args), names=(path.name, "--cache-gib"))


def _one_site() -> dict:
    """The case study with its two clusters as one prefill site and one PD site under ``sites:``."""
    two = yaml.safe_load(CASE.read_text())
    one = {k: v for k, v in two.items() if k not in ("clusters", "link", "baselines")}
    one["sites"] = {"east": {"role": "prfaas", **two["clusters"]["prfaas"]},
                    "west": {"role": "pd", **two["clusters"]["local"]}}
    one["links"] = [{"from": "east", "to": "west", **two["link"]}]
    return one


_COMMANDS = st.sampled_from([["degrade"], ["thresholds", "--bandwidths", "10Gbps,100Gbps", "--loads", "0.5,1"],
                             ["replay", "--series", str(DIURNAL), "--duration", "600", "--policies", "static,rule"],
                             ["latency", "--load", "0.6"], ["optimize"]])


@fuzz(16)
@given(st.data(), _COMMANDS, FORMATS)
def test_one_site_under_sites_and_its_size_plan(data, command, fmt):
    path = _tmp("one-site.yaml", yaml.safe_dump(_one_site()))
    if data.draw(st.booleans()):  # size's own plan of it, in the sites form
        plan = path.with_name("plan.yaml")
        check(run(["size", str(path), "-o", str(plan)]), names=(path.name,))
        path = plan if plan.exists() else path
    extra = []
    if data.draw(st.booleans()):
        extra = ["--set", f"links[0].bandwidth={data.draw(st.sampled_from(['20Gbps', '100Gbps', '5Gbps']))}"]
    check(run([command[0], str(path), *command[1:], *extra, "--format", fmt]), names=(path.name, "--set"))


EMPIRICAL = _tmp("empirical.csv", "bandwidth\n100Gbps\n50Gbps\n20Gbps\n80Gbps\n")
_LAWS = st.sampled_from(["{kind: quantiles, p50: 100Gbps, p10: 20Gbps}", "{kind: quantiles, p50: 14.7Gbps}",
                         f"{{kind: series, file: {json.dumps(str(DIURNAL))}}}",
                         f"{{kind: empirical, file: {json.dumps(str(EMPIRICAL))}}}"])


@fuzz(16)
@given(_LAWS, _COMMANDS, FORMATS)
def test_a_bandwidth_law_by_set(law, command, fmt):
    if command[0] == "replay":
        command = [c for c in command if c not in ("--series", str(DIURNAL))]
    check(run([*command, "--set", f"link.bandwidth={law}", "--format", fmt]),
          names=("link.bandwidth", "--series", DIURNAL.name, EMPIRICAL.name))


_OPTION_RUNS = st.one_of(
    st.builds(lambda v: (["latency", "--rate", v], "--rate"), fz.OPTION_UNITS["--rate"]),
    st.builds(lambda v: (["latency", "--load", v], "--load"), fz.OPTION_UNITS["--load"]),
    st.builds(lambda v: (["degrade", "--load", v], "--load"), fz.OPTION_UNITS["--load"]),
    st.builds(lambda v: (["degrade", "--levels", v], "--levels"), fz.OPTION_UNITS["--levels"]),
    st.builds(lambda v: (["thresholds", "--bandwidths", v, "--loads", "1"], "--bandwidths"),
              fz.OPTION_UNITS["--bandwidths"]),
    st.builds(lambda v: (["replay", "--series", str(DIURNAL), "--policies", "static", "--duration", "300", "--load",
                          v], "--load"), fz.OPTION_UNITS["--load"]),
    st.builds(lambda k, v: (["optimize", "two-regions", "--set", f"{k}={v}"], k), fz.SITE_KEYS,
              st.sampled_from(["H100", "4", "8", "0.5"])),
    st.builds(lambda k, v: (["optimize", "--set", f"{k}={v}"], k), fz.SITE_KEYS, st.sampled_from(["H100", "4"])),
)


@fuzz(60)
@given(_OPTION_RUNS, FORMATS)
def test_options_with_units_and_names(case, fmt):
    args, option = case
    r = run([*args, "--format", fmt])
    check(r, names=(option,))
    known = {"prefill-east", "region-a", "region-b"} if "two-regions" in args else set()
    if option.startswith("sites.") and option.split(".")[1] not in known:  # named, with the known ones
        assert r.code == 2 and re.search(r"no site named|no sites", r.stderr), r.stderr


@fuzz(3)  # each case runs optimize, a sweep, latency, size and degrade (~10 s)
@given(st.data())
def test_report_says_why_sizing_is_absent(data):
    base = data.draw(st.sampled_from(SIZED))
    scenario = yaml.safe_load(base.read_text())
    how = data.draw(st.sampled_from(["drop", "mutate", "unfit"]))
    if how == "drop":
        scenario.pop("sizing")
    elif how == "mutate":
        scenario["sizing"] = data.draw(fz.mutated_json(scenario["sizing"]))
    else:
        scenario["sizing"]["prfaas"]["gpus_per_instance"] = [1]
    path = _tmp(base.name, yaml.safe_dump(scenario))
    out = path.with_suffix(".html")
    r = run(["report", str(path), "-o", str(out)])
    check(r, names=(path.name, "sizing"))
    if r.code == 0:
        html = out.read_text()
        body = html[html.index('<section id="sizing"'):]
        body = body[:body.index("</section>")]
        assert "<table" in body or "is left out:" in body, body[:2000]
