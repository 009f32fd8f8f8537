"""HuggingFace config.json import: every shared hub config reads to the catalog's KV, SWA and state;
parameter counts are computed within a stated tolerance of the published ones; what cannot be read
is refused with one line naming the field.

Parameter accuracy (computed / published; active = per-token matmul weights, no input embedding):

| model                        | total computed | published | err    | active computed | published | err    |
|------------------------------|---------------:|----------:|-------:|----------------:|----------:|-------:|
| DeepSeek-V3                  |       671.0B   |   671B    |  0.0%  |      36.6B      |   37B     | -1.0%  |
| DeepSeek-V3.2                |       671.9B   |   671B    | +0.1%  |      37.5B      |   37B     | +1.3%  |
| Kimi-K2-Instruct             |      1026.4B   |  1.04T    | -1.3%  |      31.7B      |   32B     | -1.0%  |
| Kimi-Linear-48B-A3B (fixture)|        49.1B   |    48B    | +2.3%  |       3.11B     |    3B     | +3.7%  |
| MiMo-V2-Flash                |       308.8B   |   309B    | -0.1%  |      14.8B      |   15B     | -1.2%  |
| MiniMax-M2.5                 |       228.7B   |   229B    | -0.1%  |      10.4B      |  ~10B     | +4.2%  |
| Qwen3-235B-A22B              |       235.1B   |   235B    |  0.0%  |      21.6B      |   22B     | -2.0%  |
| Qwen3.5-397B-A17B            |       396.4B   |   397B    | -0.2%  |      16.3B      |   17B     | -3.9%  |
| Qwen3.5-35B-A3B              |        34.7B   |    35B    | -1.0%  |       2.95B     |    3B     | -1.7%  |
| gpt-oss-120b                 |       116.8B   |  116.8B   |  0.0%  |       5.13B     |   5.1B    | +0.6%  |
| Nemotron-3-Nano-30B-A3B      |        31.6B   |   31.6B   | -0.1%  |       3.23B     |   3.2B    | +0.9%  |
| Jamba-1.5-Mini (fixture)     |        51.6B   |    52B    | -0.8%  |      11.8B      |   12B     | -1.7%  |
| Llama-3.1-70B                |        70.55B  |   70.6B   | -0.1%  |      69.5B      |  (dense)  |        |
| Llama-3.1-8B                 |         8.03B  |    8.0B   | +0.4%  |       7.50B     |  (dense)  |        |
| Qwen3-32B                    |        32.76B  |   32.8B   | -0.1%  |      32.0B      |  (dense)  |        |

Totals are within 3% (Kimi-Linear's published "48B" is the loosest); MoE actives within 5% (MiniMax's
"~10B" and Qwen3.5's "17B" are rounded marketing figures; counting the input embedding would put
MiniMax at 11.0B and gpt-oss at 5.7B, both off by more). Dense models publish no active count: theirs
is checked as total minus the input embedding (Llama-3.1-8B: 7.50B, 6% under the "8B" total).
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.core import kv
from prfaas_plan.errors import SpecError
from prfaas_plan.io.hf_import import dump_yaml, import_hf_config
from prfaas_plan.io.load import load_model, validate
from prfaas_plan.io.schema import ModelFile

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HF = Path(os.environ.get("PRFAAS_HF_CONFIGS", FIXTURES / "hf-configs"))  # copies of ../shared/data/hf-configs
needs_hf = pytest.mark.skipif(not HF.is_dir(), reason=f"hub configs not found at {HF} (set PRFAAS_HF_CONFIGS)")

# hub config file -> catalog model
CATALOG_OF = {
    HF / "MiniMax-M2.5.json": "MiniMax-M2.5",
    HF / "Qwen3-235B-A22B.json": "Qwen3-235B-A22B",
    HF / "Meta-Llama-3.1-8B.json": "Llama-3.1-8B",
    HF / "Meta-Llama-3.1-70B.json": "Llama-3.1-70B",
    HF / "Qwen3-32B.json": "Qwen3-32B",
    HF / "DeepSeek-V3.json": "DeepSeek-V3",
    HF / "DeepSeek-V3.2.json": "DeepSeek-V3.2",
    HF / "Kimi-K2-Instruct.json": "Kimi-K2-Instruct",
    HF / "MiMo-V2-Flash.json": "MiMo-V2-Flash",
    HF / "gpt-oss-120b.json": "gpt-oss-120b",
    HF / "Qwen3.5-397B-A17B.json": "Qwen3.5-397B-A17B",
    HF / "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json": "NVIDIA-Nemotron-3-Nano-30B-A3B",
}

# published (total, active or None for dense), docs/sources.md#models and model cards
PUBLISHED: dict[str, tuple[float, float | None]] = {
    "DeepSeek-V3": (671e9, 37e9),
    "DeepSeek-V3.2": (671e9, 37e9),
    "Kimi-K2-Instruct": (1.04e12, 32e9),
    "Kimi-Linear-48B-A3B": (48e9, 3e9),
    "MiMo-V2-Flash": (309e9, 15e9),
    "MiniMax-M2.5": (229e9, 10e9),
    "Qwen3-235B-A22B": (235e9, 22e9),
    "Qwen3.5-397B-A17B": (397e9, 17e9),
    "Qwen3.5-35B-A3B": (35e9, 3e9),
    "gpt-oss-120b": (116.8e9, 5.1e9),
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (31.6e9, 3.2e9),
    "Jamba-1.5-Mini": (52e9, 12e9),
    "Meta-Llama-3.1-70B": (70.6e9, None),
    "Meta-Llama-3.1-8B": (8.0e9, None),
    "Qwen3-32B": (32.8e9, None),
}
TOL_TOTAL = 0.03
TOL_ACTIVE = 0.05

runner = CliRunner()


@cache
def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def imported(path: Path) -> dict[str, Any]:
    return import_hf_config(copy.deepcopy(read(path)), source=str(path))


def all_configs() -> list[Path]:
    hub = sorted(HF.glob("*.json")) if HF.is_dir() else []
    return hub + sorted(FIXTURES.glob("*.json"))


def footprint_numbers(m: Any) -> tuple[float, float, int | None, float]:
    f = kv.footprint(m)
    return f.kv_bytes_per_token, f.swa_bytes_per_token, f.swa_window_tokens, f.state_bytes


# ---------------------------------------------------------------------------- KV against the catalog


@needs_hf
@pytest.mark.parametrize("path", sorted(CATALOG_OF), ids=lambda p: p.stem)
def test_import_matches_catalog_kv(path: Path) -> None:
    got = load_model(str(path))  # .json goes through the importer
    want = load_model(CATALOG_OF[path])
    assert footprint_numbers(got) == footprint_numbers(want)
    assert got.state_dtype == want.state_dtype
    assert got.weight_dtype == want.weight_dtype
    fields = ("name", "expert_bytes", "other_bytes", "excluded")  # bytes per weight, scales included
    assert [getattr(got.weight_format, k, None) for k in fields] == [getattr(want.weight_format, k, None)
                                                                     for k in fields]
    assert got.num_hidden_layers == want.num_hidden_layers
    assert got.moe == want.moe
    assert got.max_position_embeddings == want.max_position_embeddings
    assert got.hidden_size == want.hidden_size and got.vocab_size == want.vocab_size


def test_kimi_linear_fixture_matches_catalog() -> None:
    path = FIXTURES / "Kimi-Linear-48B-A3B.json"
    got, want = load_model(str(path)), load_model("Kimi-Linear-48B-A3B")
    assert footprint_numbers(got) == footprint_numbers(want) == (8064, 0, None, 43_417_600)
    assert got.moe == want.moe
    assert got.max_position_embeddings == 1_048_576  # from model_max_length


def test_jamba_fixture_mamba1_state() -> None:
    # docs/sources.md#layouts-the-importer-is-tested-on: 4 attention layers 16,384 B/token; 28 Mamba-1 layers
    # 16,056,320 B fp32
    m = load_model(str(FIXTURES / "Jamba-1.5-Mini.json"))
    assert footprint_numbers(m) == (16_384, 0, None, 16_056_320)
    assert m.moe is not None and (m.moe.num_dense_layers, m.moe.num_experts) == (16, 16)


@needs_hf
def test_qwen35_35b_imports() -> None:
    m = load_model(str(HF / "Qwen3.5-35B-A3B.json"))
    # 10 GQA x 2 KV heads x (256 + 256) x 2 B; 30 GDN x (32 x 128 x 128 x 4 + (2x16x128 + 32x128) x 3 x 2)
    assert footprint_numbers(m) == (10 * 2 * 512 * 2, 0, None, 30 * (32 * 128 * 128 * 4 + 8192 * 3 * 2))
    assert [(g.kind, g.count) for g in m.layers] == [("linear", 30), ("gqa", 10)]


def test_every_config_validates() -> None:
    configs = all_configs()
    assert len(configs) >= 2
    for path in configs:
        validate(ModelFile, imported(path), str(path))


# ---------------------------------------------------------------------------- parameter counts


def _published(path: Path) -> tuple[float, float | None]:
    return PUBLISHED[path.stem]


@pytest.mark.parametrize("path", [p for p in all_configs() if p.stem in PUBLISHED], ids=lambda p: p.stem)
def test_params_close_to_published(path: Path) -> None:
    data = imported(path)
    total, active = _published(path)
    assert data["params_total"] == pytest.approx(total, rel=TOL_TOTAL)
    if active is None:  # dense: every weight but the input embedding lookup
        assert data["params_active"] == data["params_total"] - data["vocab_size"] * data["hidden_size"]
    else:
        assert data["params_active"] == pytest.approx(active, rel=TOL_ACTIVE)


@needs_hf
def test_deepseek_v3_params_by_hand() -> None:
    """671B built up by hand from the config (MLA with q/kv LoRA, 3 dense + 58 MoE layers)."""
    h, v, heads = 7168, 129280, 128
    mla = h * 1536 + 1536 * heads * 192 + h * (512 + 64) + 512 * heads * (128 + 128) + heads * 128 * h
    expert = 3 * h * 2048
    moe_layer = h * 256 + 256 * expert + expert  # router, routed, shared
    total = 2 * v * h + 61 * mla + 3 * 3 * h * 18432 + 58 * moe_layer
    active = v * h + 61 * mla + 3 * 3 * h * 18432 + 58 * (h * 256 + 9 * expert)
    data = imported(HF / "DeepSeek-V3.json")
    assert (data["params_total"], data["params_active"]) == (total, active)


@needs_hf
def test_tied_embeddings_count_once() -> None:
    config = copy.deepcopy(read(HF / "Meta-Llama-3.1-8B.json")) | {"tie_word_embeddings": True}
    tied = import_hf_config(config, source="tied.json")
    untied = imported(HF / "Meta-Llama-3.1-8B.json")
    assert untied["params_total"] - tied["params_total"] == 128256 * 4096
    assert tied["params_active"] == untied["params_active"]  # the lm_head is multiplied either way


# ---------------------------------------------------------------------------- fields, not names


@pytest.mark.parametrize("path", all_configs(), ids=lambda p: p.stem)
def test_model_type_and_architectures_are_not_read(path: Path) -> None:
    config = copy.deepcopy(read(path))
    for scope in (config, config.get("text_config") or {}):
        for key in ("model_type", "architectures", "auto_map"):
            scope.pop(key, None)
    assert import_hf_config(config, source=str(path)) == imported(path)


@needs_hf
def test_weight_and_state_dtypes() -> None:
    assert imported(HF / "gpt-oss-120b.json")["weight_dtype"] == "fp4"  # mxfp4
    assert "MXFP4" in imported(HF / "gpt-oss-120b.json")["notes"]
    assert imported(HF / "DeepSeek-V3.json")["weight_dtype"] == "fp8"
    assert imported(HF / "Qwen3-32B.json")["weight_dtype"] == "bf16"
    bf16_state = copy.deepcopy(read(HF / "Qwen3.5-397B-A17B.json"))
    bf16_state["text_config"]["mamba_ssm_dtype"] = "bfloat16"
    data = import_hf_config(bf16_state, source="q.json")
    assert data["state_dtype"] == "bf16"


@needs_hf
def test_nemotron_ffn_only_layers_are_explained() -> None:
    data = imported(HF / "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json")
    assert data["num_hidden_layers"] == 29
    assert "FFN-only" in data["notes"] and "23" in data["notes"]


def test_name_from_source() -> None:
    config = read(FIXTURES / "Kimi-Linear-48B-A3B.json")
    assert import_hf_config(dict(config), source="/x/My-Model.json")["name"] == "My-Model"
    assert import_hf_config(dict(config), source="/models/Some-Folder/config.json")["name"] == "Some-Folder"
    named = dict(config) | {"_name_or_path": "moonshotai/Kimi-Linear-48B-A3B-Instruct"}
    assert import_hf_config(named, source="/models/x/config.json")["name"] == "Kimi-Linear-48B-A3B-Instruct"


# layouts not in the shared configs, built from docs/sources.md facts


def test_gemma3_sliding_window_pattern() -> None:
    config = {"text_config": {
        "hidden_size": 5376, "intermediate_size": 21504, "num_attention_heads": 32, "num_key_value_heads": 16,
        "head_dim": 128, "num_hidden_layers": 62, "sliding_window": 1024, "sliding_window_pattern": 6,
        "vocab_size": 262208, "hidden_act": "gelu_pytorch_tanh", "torch_dtype": "bfloat16"},
        "tie_word_embeddings": True}
    data = import_hf_config(config, source="Gemma-3-27B.json")
    m = validate(ModelFile, data, "gemma").to_spec()
    # docs/sources.md#layouts-the-importer-is-tested-on: 10 global layers 81,920 B/token; 52 local 425,984 B/token,
    # window 1024
    assert footprint_numbers(m) == (81_920, 425_984, 1024, 0)
    assert data["params_total"] == pytest.approx(27.0e9, rel=0.01)  # 25.6B non-embedding + 1.4B embedding


def test_qwen2_use_sliding_window() -> None:
    config = {"hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 2, "num_hidden_layers": 8,
              "intermediate_size": 4096, "vocab_size": 1000, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16", "use_sliding_window": True, "sliding_window": 512, "max_window_layers": 6}
    m = validate(ModelFile, import_hf_config(config, source="q2.json"), "q2").to_spec()
    assert [(g.kind, g.count) for g in m.layers] == [("gqa", 6), ("swa", 2)]


def test_lightning_from_layer_group_size_matches_ring_catalog() -> None:
    # a config in the field names docs/sources.md#models gives for Ring-2.5-1T, with its assumed widths
    config = {"hidden_size": 8192, "num_attention_heads": 64, "head_dim": 128, "num_hidden_layers": 80,
              "layer_group_size": 8, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
              "v_head_dim": 128, "vocab_size": 157184, "intermediate_size": 18432, "num_experts": 256,
              "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "num_shared_experts": 1,
              "first_k_dense_replace": 1, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    data = import_hf_config(config, source="Ring-like.json")
    m = validate(ModelFile, data, "ring").to_spec()
    assert footprint_numbers(m) == footprint_numbers(load_model("Ring-2.5-1T"))
    # with these (partly assumed) widths: 1.05T total (published "1T"), 63.0B active (published 63B)
    assert data["params_total"] == pytest.approx(1.0e12, rel=0.06)
    assert data["params_active"] == pytest.approx(63e9, rel=0.05)


def test_attn_type_list_lightning() -> None:
    config = {"hidden_size": 1024, "num_attention_heads": 8, "head_dim": 128, "num_key_value_heads": 8,
              "num_hidden_layers": 4, "attn_type_list": [0, 0, 0, 1], "vocab_size": 1000,
              "intermediate_size": 4096, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    m = validate(ModelFile, import_hf_config(config, source="l.json"), "l").to_spec()
    assert footprint_numbers(m) == (8 * 256 * 2, 0, None, 3 * 8 * 128 * 128 * 4)


# ---------------------------------------------------------------------------- refusals


def one_error_line(result: Any) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def refuse(config: Any, field: str) -> str:
    """``import_hf_config`` raises a SpecError naming ``field``, and ``model import`` exits 2 with one line."""
    with pytest.raises(SpecError) as err:
        import_hf_config(copy.deepcopy(config), source="bad.json")
    assert err.value.field is not None and field in err.value.field, str(err.value)
    assert "cannot interpret" in str(err.value)
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.json"
        bad.write_text(json.dumps(config))
        line = one_error_line(runner.invoke(app, ["model", "import", str(bad)]))
        assert line == f"error: {str(err.value).replace('bad.json', str(bad), 1)}"
    return str(err.value)


def llama8b() -> dict[str, Any]:
    return copy.deepcopy(read(HF / "Meta-Llama-3.1-8B.json"))


@needs_hf
def test_refuses_unknown_layer_type() -> None:
    config = copy.deepcopy(read(HF / "Qwen3.5-35B-A3B.json"))
    config["text_config"]["layer_types"][3] = "chunked_attention"
    msg = refuse(config, "text_config.layer_types[3]")
    assert "'chunked_attention'" in msg


@needs_hf
def test_refuses_unknown_hybrid_letter() -> None:
    config = copy.deepcopy(read(HF / "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"))
    config["hybrid_override_pattern"] = "X" + config["hybrid_override_pattern"][1:]
    assert "'X'" in refuse(config, "hybrid_override_pattern")


@needs_hf
def test_refuses_underivable_head_dim() -> None:
    config = llama8b() | {"hidden_size": 4100}
    assert "4100" in refuse(config, "head_dim")


@needs_hf
def test_refuses_unknown_attention_kind() -> None:
    config = copy.deepcopy(read(HF / "MiMo-V2-Flash.json"))
    config["hybrid_layer_pattern"][4] = 2
    assert "2" in refuse(config, "hybrid_layer_pattern")


@needs_hf
def test_refuses_linear_layers_without_linear_fields() -> None:
    config = copy.deepcopy(read(HF / "Qwen3.5-35B-A3B.json"))
    del config["text_config"]["linear_num_value_heads"]
    refuse(config, "text_config.layer_types[0]")


@needs_hf
def test_refuses_ssm_fields_without_a_layout() -> None:
    config = llama8b() | {"mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128}
    refuse(config, "mamba_num_heads")


@needs_hf
def test_refuses_sliding_window_without_a_pattern() -> None:
    refuse(llama8b() | {"sliding_window": 4096}, "sliding_window")


@needs_hf
def test_refuses_incomplete_dsa() -> None:
    config = copy.deepcopy(read(HF / "DeepSeek-V3.2.json"))
    del config["index_topk"]
    refuse(config, "index_topk")


@needs_hf
@pytest.mark.parametrize(("change", "field", "needle"), [
    ({"num_key_value_heads": 7}, "num_key_value_heads", "32 attention heads are not a multiple of 7 KV heads"),
    ({"num_key_value_heads": 64}, "num_key_value_heads", "32 attention heads are not a multiple of 64 KV heads"),
    ({"hidden_size": 1e30}, "hidden_size", "1e+30 is implausibly large (at most 1,048,576)"),
    ({"vocab_size": 10**9}, "vocab_size", "implausibly large"),
    ({"num_hidden_layers": float("inf")}, "num_hidden_layers", "inf is not an integer"),
    ({"hidden_size": float("nan")}, "hidden_size", "nan is not an integer"),
    ({"hidden_size": "4096"}, "hidden_size", "expected an integer, got a string ('4096')"),
    ({"hidden_size": None, "intermediate_size": []}, "hidden_size", "hidden_size is missing"),
    ({"intermediate_size": -14336}, "intermediate_size", "-14336 must be at least 1"),
    ({"num_attention_heads": 32.5}, "num_attention_heads", "32.5 is not an integer"),
    ({"max_position_embeddings": 0}, "max_position_embeddings", "0 must be at least 1"),
])
def test_refuses_inconsistent_or_absurd_sizes(change: dict[str, Any], field: str, needle: str) -> None:
    assert needle in refuse(llama8b() | change, field)


@needs_hf
@pytest.mark.parametrize("experts_key", ["n_routed_experts", None])
def test_moe_config_without_an_expert_count_is_refused_not_read_as_dense(experts_key: str | None) -> None:
    # the case: DeepSeek-V3 without n_routed_experts read as a dense 37B model
    config = copy.deepcopy(read(HF / "DeepSeek-V3.json"))
    if experts_key is None:
        config["n_routed_experts"] = 0  # "0 experts" with MoE fields set is no dense model either
    else:
        del config[experts_key]
    msg = refuse(config, "moe_intermediate_size")
    assert "2048 describes mixture-of-experts layers" in msg and "n_routed_experts" in msg


@needs_hf
def test_refuses_more_experts_per_token_than_experts() -> None:
    config = copy.deepcopy(read(HF / "Qwen3-235B-A22B.json")) | {"num_experts_per_tok": 129}
    assert "129 experts per token but only 128 experts (num_experts)" in refuse(config, "num_experts_per_tok")


@needs_hf
def test_refuses_gdn_value_heads_not_a_multiple_of_key_heads() -> None:
    config = copy.deepcopy(read(HF / "Qwen3.5-35B-A3B.json"))
    config["text_config"]["linear_num_key_heads"] = 12
    assert "32 value heads" in refuse(config, "text_config.linear_num_key_heads")


@needs_hf
def test_dense_config_with_zero_experts_is_dense() -> None:
    data = import_hf_config(llama8b() | {"num_local_experts": 0}, source="z.json")
    assert "moe" not in data and data["intermediate_size"] == 14336


@needs_hf
def test_refuses_unknown_quantization() -> None:
    config = llama8b() | {"quantization_config": {"quant_method": "gptq", "bits": 4}}
    assert "'gptq'" in refuse(config, "quantization_config.quant_method")


@needs_hf
def test_refuses_layer_types_of_wrong_length() -> None:
    config = copy.deepcopy(read(HF / "gpt-oss-120b.json"))
    config["layer_types"] = config["layer_types"][:-1]
    refuse(config, "layer_types")


@needs_hf
def test_refuses_missing_and_non_integer_fields() -> None:
    config = llama8b()
    del config["num_hidden_layers"]
    assert "num_hidden_layers is missing" in refuse(config, "num_hidden_layers")
    refuse(llama8b() | {"num_key_value_heads": 8.5}, "num_key_value_heads")
    refuse(llama8b() | {"num_attention_heads": 0}, "num_attention_heads")


def test_refuses_inconsistent_kda_lists() -> None:
    config = copy.deepcopy(read(FIXTURES / "Kimi-Linear-48B-A3B.json"))
    config["linear_attn_config"]["kda_layers"] = config["linear_attn_config"]["kda_layers"][:-1]
    refuse(config, "linear_attn_config.kda_layers")


# ---------------------------------------------------------------------------- CLI


@needs_hf
@pytest.mark.parametrize(("mutate", "field"), [
    (lambda c: c["text_config"]["layer_types"].__setitem__(0, "mystery_attention"), "text_config.layer_types[0]"),
    (lambda c: c["text_config"].__setitem__("head_dim", -1), "text_config.head_dim"),
    (lambda c: c["text_config"].pop("num_hidden_layers"), "num_hidden_layers"),
])
def test_cli_import_refuses_with_one_line(tmp_path: Path, mutate: Any, field: str) -> None:
    config = copy.deepcopy(read(HF / "Qwen3.5-35B-A3B.json"))
    mutate(config)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(config))
    line = one_error_line(runner.invoke(app, ["model", "import", str(bad)]))
    assert str(bad) in line and field in line


def test_cli_import_refuses_non_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    line = one_error_line(runner.invoke(app, ["model", "import", str(bad)]))
    assert str(bad) in line and "not JSON" in line


def test_cli_import_missing_file(tmp_path: Path) -> None:
    line = one_error_line(runner.invoke(app, ["model", "import", str(tmp_path / "none.json")]))
    assert "file not found" in line


@pytest.mark.slow
@pytest.mark.parametrize("path", all_configs(), ids=lambda p: p.stem)
def test_cli_import_then_show(tmp_path: Path, path: Path) -> None:
    out = tmp_path / f"{path.stem}.yaml"
    result = runner.invoke(app, ["model", "import", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert text.startswith("#")
    data = yaml.safe_load(text)
    assert list(data)[:3] == ["name", "source", "params_total"]
    assert isinstance(data["layers"], list) and all(isinstance(g, dict) and "kind" in g for g in data["layers"])
    shown = runner.invoke(app, ["model", "show", str(out), "--format", "json"])
    assert shown.exit_code == 0, shown.stderr
    direct = runner.invoke(app, ["model", "show", str(path), "--format", "json"])
    assert direct.exit_code == 0, direct.stderr
    a, b = json.loads(shown.stdout), json.loads(direct.stdout)
    for key in ("name", "kv_bytes_per_token", "swa_bytes_per_token", "swa_window_tokens", "state_bytes", "layers"):
        assert a[key] == b[key]


@needs_hf
def test_cli_import_to_stdout_round_trips() -> None:
    path = HF / "MiMo-V2-Flash.json"
    result = runner.invoke(app, ["model", "import", str(path)])
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout) == imported(path)
    assert dump_yaml(imported(path)) == result.stdout
