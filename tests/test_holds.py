"""Every instance that holds a model holds its weights and one request's KV (``core.memory``):
`size` never buys one that cannot, for prefill as for decode, and a given fleet that cannot exits 1
naming the instance, its memory and the weights."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from prfaas_plan.api.size_grid import laws
from prfaas_plan.cli import app
from prfaas_plan.core import kv
from prfaas_plan.core.decode import memory_batch_limit
from prfaas_plan.core.memory import fits, holding
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario

runner = CliRunner()
GIB = 1024**3


def _case(*over: str):
    return load_scenario(None, Catalog.default(), overrides=list(over))


def test_internal_1t_by_hand_on_one_and_eight_h200():
    sc = _case()
    model, one = sc.model, replace(sc.prfaas.instance, gpus=1)
    # 1e12 parameters in fp8: 1e12 bytes = 931.3 GiB; one H200 = 141e9 B, x 0.9 = 126.9e9 B
    h = holding(model, one, 131_072, memory_fraction=0.9)
    assert h.weights_bytes == 1e12
    assert h.usable_bytes == pytest.approx(126.9e9, rel=1e-12)
    # 17,280 B per token of MLA KV + the constant KDA state
    assert h.kv_bytes == pytest.approx(17_280 * 131_072 + kv.footprint(model).state_bytes, rel=1e-12)
    assert not h.fits
    assert "1xH200" in h.why() and "931 GiB" in h.why() and "131 GiB of HBM" in h.why()
    eight = holding(model, sc.prfaas.instance, 131_072, memory_fraction=0.9)
    assert eight.fits  # 8 x 141e9 x 0.9 = 1,015.2e9 B >= 1e12 + 2.44e9


def test_the_check_is_exact_at_its_edge_and_decode_agrees():
    sc = _case()
    model, inst = sc.model, sc.prfaas.instance
    need = model.weights_bytes_total + float(kv.footprint(model).s_kv(64_000))
    edge = need / (inst.gpu.hbm_bytes * inst.gpus)
    assert fits(model, inst, 64_000, memory_fraction=edge)
    assert not fits(model, inst, 64_001, memory_fraction=edge)
    # BS_max's memory limit is 0 exactly where the check says it does not hold
    assert memory_batch_limit(model, inst, 64_000, memory_fraction=edge) == 1
    assert memory_batch_limit(model, inst, 64_001, memory_fraction=edge) == 0


def test_size_never_buys_a_prefill_instance_that_cannot_hold_the_weights():
    res = runner.invoke(app, ["size", "--set", "sizing.prfaas.gpus_per_instance=[1]"])
    assert res.exit_code == 1, res.output
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("error: size: prefill service")
    assert "1xH200 cannot hold internal-1t" in line and "931 GiB" in line
    # with 8 GPUs a candidate too, only 8xH200 instances are bought: the case study's own plan
    both = json.loads(runner.invoke(app, ["size", "--set", "sizing.prfaas.gpus_per_instance=[1,8]",
                                          "-f", "json"]).stdout)
    alone = json.loads(runner.invoke(app, ["size", "-f", "json"]).stdout)
    assert both["best"]["prefill_service"]["gpus_per_instance"] == 8
    assert both["best"]["cost"] == alone["best"]["cost"]
    assert both["naive_heterogeneous"]["prefill_service"]["gpus_per_instance"] == 8


def test_size_local_prefill_stops_at_the_length_the_kind_holds():
    # Qwen3.5-397B on 8xH200, no measured profile: memory for the weights and a 64,000-token request
    sc = load_scenario("qwen35-b200-h200", Catalog.default())
    inst = sc.local.instance
    need = sc.model.weights_bytes_total + float(kv.footprint(sc.model).s_kv(64_000))
    frac = need / (inst.gpu.hbm_bytes * inst.gpus)
    sc = load_scenario("qwen35-b200-h200", Catalog.default(), overrides=[f"decode.memory_fraction={frac!r}"])
    spec = _case().sizing  # the scenario has no sizing: the case study's, on its instance kinds
    spec = replace(spec, local=replace(spec.local, options=tuple(
        replace(o, instance=inst) for o in spec.local.options)), prfaas=replace(spec.prfaas, options=tuple(
            replace(o, instance=sc.prfaas.instance) for o in spec.prfaas.options)))
    lw = laws(sc, spec)
    site = lw.sites[0]
    t_short = site.t_short_s[inst.name]
    longer = np.minimum(site.t, 131_072) > 64_000
    assert np.isinf(t_short[longer]).all() and longer.any()
    assert np.isfinite(t_short[~longer & (site.p < 1)]).all()
    assert "8xH200 cannot hold Qwen3.5-397B-A17B" in site.local_why[inst.name]
    assert lw.prefill_why[sc.prfaas.instance.name] == ""  # 8xB200 holds it at 0.9 x 1,440 GB


@pytest.mark.parametrize("command", [["optimize"], ["latency", "--rate", "1"], ["degrade"], ["thresholds"],
                                     ["report", "-o", "-"]])
def test_a_given_fleet_that_cannot_hold_the_weights_exits_1_naming_it(command, tmp_path):
    if command[0] == "report":
        command = ["report", "-o", str(tmp_path / "r.html")]
    res = runner.invoke(app, [*command, "--set", "clusters.prfaas.gpus_per_instance=1"])
    assert res.exit_code == 1, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and res.stdout == ""
    assert lines[0] == ("error: prefill service (clusters.prfaas): 1xH200 cannot hold internal-1t: the weights "
                        "(931 GiB) and one request's KV at 131,072 tokens (2.28 GiB) do not fit in 0.9 of its "
                        "131 GiB of HBM (118 GiB)")


def test_the_homogeneous_baseline_is_held_to_every_length():
    res = runner.invoke(app, ["optimize", "qwen35-b200-h200", "--set", "baselines.homogeneous.gpus_per_instance=4"])
    assert res.exit_code == 1, res.output
    assert res.stderr.startswith("error: homogeneous baseline (baselines.homogeneous): 4xH200 cannot hold "
                                 "Qwen3.5-397B-A17B")
