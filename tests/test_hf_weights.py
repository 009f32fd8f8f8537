"""Checkpoint weight formats from ``quantization_config``: bytes per weight with the scales, which
layers stay unquantised, and the weight bytes decode memory reads.

Hand values: FP8 block 128x128 = 1 + 4/16384 B (fp32 scale per block); MXFP4 = 0.5 + 1/32 (e8m0 per
32); NVFP4 = 0.5 + 1/16 (fp8 per 16); int4 group 32 = 0.5 + 2/32 (bf16 scale per group). Formats:
transformers fine-grained FP8 / Mxfp4, NVIDIA modelopt (vLLM docs/features/quantization/modelopt.md),
compressed-tensors (llm-compressor; e.g. a hub nvfp4-pack-quantized quantization_config with
scale_dtype float8_e4m3fn, group_size 16).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.core import decode, prefill
from prfaas_plan.errors import SpecError
from prfaas_plan.io.hf_import import import_hf_config
from prfaas_plan.io.load import load_gpu, load_model, validate
from prfaas_plan.io.schema import ModelFile
from prfaas_plan.specs.hardware import InstanceSpec

HF = Path(__file__).resolve().parent / "fixtures" / "hf-configs"
FP8_BLOCK = 1 + 4 / (128 * 128)


def hub(name: str) -> dict[str, Any]:
    return json.loads((HF / f"{name}.json").read_text())


def load(config: dict[str, Any]) -> Any:
    data = import_hf_config(copy.deepcopy(config), source="q.json")
    return validate(ModelFile, data, "q.json").to_spec(), data


# Llama-3.1-8B by hand: 32 layers of attention (4096 x (4096 + 2 x 1024) + 4096 x 4096) and MLP
# (3 x 4096 x 14336); embeddings and lm_head 128256 x 4096 each.
L8_MIXER = 32 * (4096 * (4096 + 2 * 1024) + 4096 * 4096)
L8_MLP = 32 * 3 * 4096 * 14336
L8_TABLE = 128256 * 4096


def llama8b(quant: dict[str, Any]) -> dict[str, Any]:
    return hub("Meta-Llama-3.1-8B") | {"quantization_config": quant}


def int4_group(group: int, *, symmetric: bool = True, ignore: list[str] | None = None) -> dict[str, Any]:
    return {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ignore or ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None,
                                          "weights": {"num_bits": 4, "type": "int", "symmetric": symmetric,
                                                      "strategy": "group", "group_size": group}}}}


# ---------------------------------------------------------------------------- hub configs


def test_gpt_oss_mxfp4_experts_and_bf16_rest() -> None:
    m, data = load(hub("gpt-oss-120b"))
    experts = 36 * 128 * 3 * 2880 * 2880
    assert m.routed_expert_params == experts
    assert (m.weight_format.expert_bytes, m.weight_format.other_bytes) == (0.5 + 1 / 32, 2.0)
    assert m.weights_bytes_total == pytest.approx(experts * 0.53125 + (m.params_total - experts) * 2, rel=1e-12)
    assert m.weights_bytes_total == pytest.approx(65.2e9, rel=0.005)  # the hub checkpoint's ~65 GB
    assert "model.layers.*.self_attn" in m.weight_format.excluded and m.weight_dtype == "fp4"
    assert "MXFP4" in data["notes"]


def test_deepseek_v3_fp8_block_scales_and_bf16_tables() -> None:
    m, _ = load(hub("DeepSeek-V3"))
    h, v = 7168, 129280
    mla = h * 1536 + 1536 * 128 * 192 + h * 576 + 512 * 128 * 256 + 128 * 128 * h
    fp8 = 61 * mla + 3 * 3 * h * 18432 + 58 * 3 * h * 2048  # attention, dense MLPs, shared experts
    bf16 = 2 * v * h + 58 * h * 256  # embeddings + lm_head (transformers default), router gates
    assert m.weight_format.expert_bytes == FP8_BLOCK
    assert m.weight_format.other_bytes == pytest.approx((fp8 * FP8_BLOCK + bf16 * 2) / (fp8 + bf16), rel=1e-12)
    assert m.weight_format.excluded == ()


def test_minimax_modules_to_not_convert() -> None:
    m, _ = load(hub("MiniMax-M2.5"))
    assert m.weight_format.excluded == ("gate", "e_score_correction_bias", "lm_head")
    assert "attention, experts" in m.weight_format.name


def test_bf16_checkpoint_has_no_format_and_plain_bytes() -> None:
    m, data = load(hub("Qwen3-32B"))
    assert "weight_format" not in data and m.weight_format is None
    assert m.weights_bytes_total == m.params_total * 2


# ---------------------------------------------------------------------------- synthetic formats


def test_compressed_tensors_int4_experts_kimi_k2_thinking_style() -> None:
    # int4 pack-quantized group 32 on the routed experts; attention, shared experts, dense MLPs, lm_head bf16
    config = hub("Kimi-K2-Instruct") | {"quantization_config": int4_group(32, ignore=[
        "lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", r"re:.*mlp\.(gate|up|gate_up|down)_proj.*"])}
    m, data = load(config)
    assert (m.weight_format.expert_bytes, m.weight_format.other_bytes) == (0.5 + 2 / 32, 2.0)
    assert m.weight_dtype == "bf16"  # W4A16: the GEMMs run in bf16
    assert "int4 group 32" in m.weight_format.name and "weight-only" in data["notes"]


@pytest.mark.parametrize(("quant", "per_weight"), [
    (int4_group(128), 0.5 + 2 / 128),
    (int4_group(128, symmetric=False), 0.5 + (2 + 0.5) / 128),  # packed int4 zero point per group
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]},
     0.5 + 1 / 16),
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, FP8_BLOCK),
    ({"quant_method": "fp8"}, 1.0),
    ({"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]}, 1.0),
])
def test_llama_by_hand(quant: dict[str, Any], per_weight: float) -> None:
    m, _ = load(llama8b(quant))
    quantised = L8_MIXER + L8_MLP
    want = (quantised * per_weight + 2 * L8_TABLE * 2) / (quantised + 2 * L8_TABLE)  # tables stay bf16
    assert m.weight_format.other_bytes == pytest.approx(want, rel=1e-12)
    assert m.weights_bytes_total == pytest.approx(quantised * per_weight + 2 * L8_TABLE * 2, rel=1e-12)


def test_compressed_tensors_nvfp4_quantises_lm_head_when_not_ignored() -> None:
    group = {"targets": ["Linear"], "format": None,
             "weights": {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16,
                         "strategy": "tensor_group", "scale_dtype": "torch.float8_e4m3fn"},
             "input_activations": {"num_bits": 4, "type": "float", "group_size": 16, "strategy": "tensor_group"}}
    quant = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": [],
             "config_groups": {"group_0": group}}
    m, _ = load(llama8b(quant))
    linear = L8_MIXER + L8_MLP + L8_TABLE  # lm_head is a Linear
    assert m.weights_bytes_total == pytest.approx(linear * 9 / 16 + L8_TABLE * 2, rel=1e-12)
    assert m.weight_dtype == "fp4"


def test_compressed_tensors_fp8_block_w8a8() -> None:
    w = {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}
    quant = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
             "config_groups": {"g": {"targets": ["Linear"], "weights": w,
                                     "input_activations": {"num_bits": 8, "type": "float"}}}}
    m, _ = load(llama8b(quant))
    assert m.weights_bytes_total == pytest.approx((L8_MIXER + L8_MLP) * (1 + 2 / 16384) + 2 * L8_TABLE * 2,
                                                  rel=1e-12)  # bf16 scale per 128 x 128 block
    assert m.weight_dtype == "fp8"


def test_one_layer_left_unquantised_counts_its_share() -> None:
    m, _ = load(llama8b(int4_group(128, ignore=["lm_head", "model.layers.0.mlp.down_proj"])))
    q = 0.5 + 2 / 128
    # the whole of layer 0's MLP is counted as kept: a pattern places a layer, not a single matrix
    want = L8_MIXER * q + L8_MLP * (31 / 32 * q + 1 / 32 * 2) + 2 * L8_TABLE * 2
    assert m.weights_bytes_total == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("quant", "field", "needle"), [
    ({"quant_method": "gptq", "bits": 4}, "quantization_config.quant_method", "'gptq'"),
    (int4_group(128, ignore=["lm_head", "frobnicator"]), "quantization_config.ignore[1]", "'frobnicator'"),
    ({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "quantization_config.quant_algo", "'W4A8_AWQ'"),
    ({"quant_method": "fp8", "weight_block_size": [128]}, "quantization_config.weight_block_size", "[128]"),
    ({"quant_method": "mxfp4", "modules_to_not_convert": "lm_head"}, "quantization_config.modules_to_not_convert",
     "'lm_head'"),
    ({"quant_method": "compressed-tensors", "config_groups": {}}, "quantization_config.config_groups", "{}"),
])
def test_unreadable_formats_are_refused(quant: dict[str, Any], field: str, needle: str) -> None:
    with pytest.raises(SpecError) as err:
        import_hf_config(llama8b(quant), source="q.json")
    assert err.value.field == field and needle in err.value.message and "cannot interpret" in err.value.message


@pytest.mark.parametrize(("change", "field"), [
    ({"num_bits": 5}, "weights.num_bits"),
    ({"strategy": "per_tile"}, "weights.strategy"),
    ({"group_size": None}, "weights.group_size"),
    ({"scale_dtype": "torch.int3"}, "weights.scale_dtype"),
])
def test_compressed_tensors_group_fields_are_checked(change: dict[str, Any], field: str) -> None:
    quant = int4_group(128)
    quant["config_groups"]["group_0"]["weights"] |= change
    with pytest.raises(SpecError) as err:
        import_hf_config(llama8b(quant), source="q.json")
    assert err.value.field == f"quantization_config.config_groups.group_0.{field}"


def test_cli_refuses_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps(llama8b(int4_group(0))))
    res = CliRunner().invoke(app, ["model", "import", str(bad)])
    assert res.exit_code == 2
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"error: {bad}: quantization_config.config_groups.group_0.weights.group_size: ")


# ---------------------------------------------------------------------------- decode reads the bytes


def test_weight_bytes_feed_decode_memory() -> None:
    m = load_model("gpt-oss-120b")
    inst = InstanceSpec(gpu=load_gpu("H200"), gpus=8)
    context = 32 * 1024
    free = inst.gpu.hbm_bytes * 8 * 0.9 - m.weights_bytes_total
    per_request = float(decode.kv.footprint(m).s_kv(context))
    assert decode.memory_batch_limit(m, inst, context, memory_fraction=0.9) == min(int(free // per_request),
                                                                                    decode.MAX_BATCH)
    # one decode step reads every non-expert weight in bf16 and the touched experts in MXFP4
    touched = prefill.weights_touched(m, 1)
    experts = touched - (m.params_total - m.routed_expert_params)
    want = (m.params_total - m.routed_expert_params) * 2.0 + experts * 0.53125
    work = decode.decode_work(m, 1, context, gpus=8)
    assert float(work.memory_bytes) == pytest.approx(want + per_request, rel=1e-12)


def test_without_a_format_bytes_are_weight_dtype_bytes() -> None:
    m = load_model("internal-1t")  # fp8, no weight_format: 1 B per weight, as before
    assert m.weight_format is None and m.weights_bytes_total == 1.0e12
    assert m.weight_bytes(3.0e9) == 3.0e9
