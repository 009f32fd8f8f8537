"""benchmarks/validate_stacks.py's checks: GPU pairs are compared within one source and engine
version, and each held-out point is scored against its own kind's band."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import numpy as np
import pytest

from prfaas_plan.core.fit import Point
from prfaas_plan.io.load import Catalog, load_gpu, load_model
from prfaas_plan.specs.hardware import InstanceSpec
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def vs():
    spec = importlib.util.spec_from_file_location("validate_stacks", ROOT / "benchmarks" / "validate_stacks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _falcon_128(source: str, gpu: str, ms: float, row: int) -> Point:
    cat = Catalog.default()
    return Point(model=load_model("Falcon-180B", cat), instance=InstanceSpec(gpu=load_gpu(gpu, cat), gpus=8),
                 kind="prefill", measured_s=ms / 1e3, source=source, length=128, row=row)


def test_a_pair_across_releases_is_not_a_pair_of_gpus(vs):
    # TensorRT-LLM's tables: 8xH100 27.0 ms in v0.5, 39.7 ms in v0.8; 8xH200 37.2 ms in v0.8
    pts = [_falcon_128("v0.5", "H100", 27.0, 1), _falcon_128("v0.8", "H100", 39.7, 2),
           _falcon_128("v0.8", "H200", 37.2, 3)]
    engines = {1: "trtllm 0.5", 2: "trtllm 0.8.0", 3: "trtllm 0.8.0"}
    pairs, wrong = vs.gpu_pairs(pts, np.array([0.030, 0.030, 0.025]), engines)
    assert pairs == [(1, 2)] and wrong == []
    pairs, wrong = vs.gpu_pairs(pts, np.array([0.030, 0.025, 0.030]), engines)
    assert wrong == ["Falcon-180B 128 tokens: 8xH100 39.7 ms vs 8xH200 37.2 ms measured (trtllm 0.8.0)"]
    # one engine string but two sources: still not a pair
    pts[0] = replace(pts[0], source="v0.8 blog")
    assert vs.gpu_pairs(pts, np.ones(3), {1: "trtllm 0.8.0", 2: "trtllm 0.8.0", 3: "trtllm 0.8.0"})[0] == [(1, 2)]


def test_coverage_scores_each_kind_against_its_own_band(vs):
    cat = Catalog.default()
    inst = InstanceSpec(gpu=load_gpu("H100", cat), gpus=1)
    m = load_model("Llama-3.1-8B", cat)
    pts, held = [], []
    for s in range(10):
        pts += [Point(model=m, instance=inst, kind="prefill", measured_s=0.1, source=f"s{s}", length=1024),
                Point(model=m, instance=inst, kind="decode", measured_s=0.01, source=f"s{s}", batch=1, context=1024)]
        held += [1.0 + 0.01 * s, 2.0 + 0.01 * s]  # decode steps twice as slow as predicted
    # per kind, the other nine sources' P10-P90 (linear) of 1.00..1.09 leaves out the two lowest and
    # the two highest sources (source 1: P10 of 1.00, 1.02..1.09 is 1.016 > 1.01): 60%. One band
    # pooled over both kinds would be wider and say 70%.
    assert vs.coverage(pts, np.array(held)) == pytest.approx(0.6)


def test_replicates_group_one_configuration_measured_more_than_once(vs):
    # the SGLang cookbook's Qwen3 page: 92.18 ms and 109.36 ms TTFT for one configuration (two scenarios
    # sharing prompts); the same length on another GPU or in another release is another configuration
    cat = Catalog.default()
    m = load_model("Qwen3-235B-A22B", cat)
    b200, h200 = (InstanceSpec(gpu=load_gpu(g, cat), gpus=8) for g in ("B200", "H200"))

    def pt(inst, ms, row, length=610):
        return Point(model=m, instance=inst, kind="prefill", measured_s=ms / 1e3, source="qwen3.md", length=length,
                     client=True, row=row)

    pts = [pt(b200, 92.18, 1), pt(b200, 109.36, 2), pt(h200, 150.0, 3), pt(b200, 114.85, 4, length=4194),
           pt(b200, 80.0, 5)]
    engines = {1: "sglang 0.5.6", 2: "sglang 0.5.6", 3: "sglang 0.5.6", 4: "sglang 0.5.6", 5: "sglang 0.5.7"}
    reps = vs.replicates(pts, engines)
    assert len(reps) == 1
    name, spread = reps[0]
    assert spread == pytest.approx(109.36 / 92.18)
    assert name == "Qwen3-235B-A22B 8xB200 prefill 610 tokens (sglang 0.5.6): 92.2 / 109.4 ms"
