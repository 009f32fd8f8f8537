"""KV engine on the catalog: hand-computed bytes per token and state (docs/model.md#kv-per-request,
docs/sources.md#kv-per-token), S_kv(l) against the docs/sources.md#s_kv-per-request table, SWA saturation,
constant state, transfer bytes, invariants."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prfaas_plan.core import kv
from prfaas_plan.io.load import Catalog, load_model
from prfaas_plan.specs.model import AttentionKind, DType, ModelSpec

EXACT = 1e-12
MIB = 2**20
BF16, FP8, FP32 = 2, 1, 4


@cache
def model(name: str) -> ModelSpec:
    return load_model(name)


def catalog_names() -> list[str]:
    return sorted(Catalog.default().entries("models"))


# Hand-computed from docs/model.md#kv-per-request (formulas) and docs/sources.md#models (dimensions): bf16 KV,
# fp32 recurrent state, bf16 conv state. (growing KV B/token, SWA B/token, SWA window, constant state B)
HAND = {
    # GQA: layers x kv_heads x (d_k + d_v) x 2 B
    "MiniMax-M2.5": (62 * 8 * (128 + 128) * BF16, 0, None, 0),
    "Qwen3-235B-A22B": (94 * 4 * (128 + 128) * BF16, 0, None, 0),
    "Llama-3.1-70B": (80 * 8 * (128 + 128) * BF16, 0, None, 0),
    "Llama-3.1-8B": (32 * 8 * (128 + 128) * BF16, 0, None, 0),
    "Qwen3-32B": (64 * 8 * (128 + 128) * BF16, 0, None, 0),
    # MLA: layers x (kv_lora_rank + qk_rope_head_dim) x 2 B; DSA adds 128 fp8 + 128/128 fp32 scale
    "DeepSeek-V3": (61 * (512 + 64) * BF16, 0, None, 0),
    "DeepSeek-V3.2": (61 * ((512 + 64) * BF16 + 128 * FP8 + 128 // 128 * FP32), 0, None, 0),
    "Kimi-K2-Instruct": (61 * (512 + 64) * BF16, 0, None, 0),
    # KDA: 20 x (32 x 128 x 128 x 4 B + 3 x 32 x 128 channels x (4 - 1) x 2 B)
    "Kimi-Linear-48B-A3B": (7 * (512 + 64) * BF16, 0, None,
                            20 * (32 * 128 * 128 * FP32 + 3 * 32 * 128 * (4 - 1) * BF16)),
    # GDN: 45 x (64 x 128 x 128 x 4 B + (2 x 16 x 128 + 64 x 128) x 3 x 2 B)
    "Qwen3.5-397B-A17B": (15 * 2 * (256 + 256) * BF16, 0, None,
                          45 * (64 * 128 * 128 * FP32 + (2 * 16 * 128 + 64 * 128) * 3 * BF16)),
    # 9 full (4 KV heads) + 39 SWA (8 KV heads), d_k 192 / d_v 128, window 128
    "MiMo-V2-Flash": (9 * 4 * (192 + 128) * BF16, 39 * 8 * (192 + 128) * BF16, 128, 0),
    # Lightning: 70 x 64 x 128 x 128 x 4 B, no conv
    "Ring-2.5-1T": (10 * (512 + 64) * BF16, 0, None, 70 * 64 * 128 * 128 * FP32),
    "gpt-oss-120b": (18 * 8 * (64 + 64) * BF16, 18 * 8 * (64 + 64) * BF16, 128, 0),
    # Mamba-2: 23 x (64 x 64 x 128 x 4 B + (64 x 64 + 2 x 8 x 128) x 3 x 2 B)
    "NVIDIA-Nemotron-3-Nano-30B-A3B": (6 * 2 * (128 + 128) * BF16, 0, None,
                                       23 * (64 * 64 * 128 * FP32 + (64 * 64 + 2 * 8 * 128) * 3 * BF16)),
}

# The numbers as docs/sources.md#kv-per-token to #recurrent-state print them: the hand formulas must reproduce
# them.
PRINTED = {
    "MiniMax-M2.5": (253_952, 0, 0), "Qwen3-235B-A22B": (192_512, 0, 0), "Llama-3.1-70B": (327_680, 0, 0),
    "Llama-3.1-8B": (131_072, 0, 0), "DeepSeek-V3": (70_272, 0, 0), "DeepSeek-V3.2": (78_324, 0, 0),
    "Kimi-K2-Instruct": (70_272, 0, 0), "Kimi-Linear-48B-A3B": (8_064, 0, 43_417_600),
    "Qwen3.5-397B-A17B": (30_720, 0, 192_061_440), "MiMo-V2-Flash": (23_040, 199_680, 0),
    "Ring-2.5-1T": (11_520, 0, 293_601_280), "gpt-oss-120b": (36_864, 36_864, 0),
    "NVIDIA-Nemotron-3-Nano-30B-A3B": (6_144, 0, 49_082_368),
}


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_hand_formulas_give_the_printed_numbers(name: str) -> None:
    kv_b, swa_b, _, state = HAND[name]
    assert (kv_b, swa_b, state) == PRINTED[name]


@pytest.mark.parametrize("name", sorted(HAND))
def test_footprint_matches_hand_computation(name: str) -> None:
    kv_b, swa_b, window, state = HAND[name]
    f = kv.footprint(model(name))
    assert f.kv_bytes_per_token == pytest.approx(kv_b, rel=EXACT)
    assert f.swa_bytes_per_token == pytest.approx(swa_b, rel=EXACT, abs=0)
    assert f.swa_window_tokens == window
    assert f.state_bytes == pytest.approx(state, rel=EXACT, abs=0)
    assert f.kv_dtype == DType.BF16 and f.state_dtype == DType.FP32


def test_mimo_swa_max_is_25_559_040_bytes() -> None:
    assert kv.footprint(model("MiMo-V2-Flash")).swa_max_bytes == 199_680 * 128 == 25_559_040


def test_deepseek_v32_fp8_is_fp8_ds_mla_plus_indexer() -> None:
    # 656 B fp8_ds_mla (512 fp8 + 4 fp32 scales + 64 bf16 RoPE) + 132 B indexer, per layer
    f = kv.footprint(model("DeepSeek-V3.2"), kv_dtype=DType.FP8)
    assert f.kv_bytes_per_token == pytest.approx(61 * ((512 + 4 * 4 + 64 * 2) + (128 + 4)), rel=EXACT)
    assert f.kv_bytes_per_token == 48_068


# docs/sources.md#recurrent-state, bf16 recurrent state (conv state bf16 in both columns)
BF16_STATE = {
    "Kimi-Linear-48B-A3B": 22_446_080,
    "Qwen3.5-397B-A17B": 97_689_600,
    "Ring-2.5-1T": 146_800_640,
    "NVIDIA-Nemotron-3-Nano-30B-A3B": 23 * (64 * 64 * 128 * BF16 + 6144 * 3 * BF16),
}


@pytest.mark.parametrize("name", sorted(BF16_STATE))
def test_bf16_state(name: str) -> None:
    f = kv.footprint(model(name), state_dtype=DType.BF16)
    assert f.state_bytes == pytest.approx(BF16_STATE[name], rel=EXACT)


# docs/sources.md#s_kv-per-request: S_kv(l) in MiB at 1K, 8K, 32K, 128K (bf16 KV, fp32 state); printed to 0.1 MiB
TABLE_3_4 = {
    "MiniMax-M2.5": (248.0, 1984, 7936, 31744),
    "Qwen3-235B-A22B": (188.0, 1504, 6016, 24064),
    "Kimi-Linear-48B-A3B": (49.3, 104.4, 293.4, 1049.4),
    "MiMo-V2-Flash": (46.9, 204.4, 744.4, 2904.4),
    "Qwen3.5-397B-A17B": (213.2, 423.2, 1143.2, 4023.2),
    "Ring-2.5-1T": (291.2, 370.0, 640.0, 1720.0),
}
LENGTHS = (1024, 8192, 32768, 131072)


@pytest.mark.parametrize("name", sorted(TABLE_3_4))
def test_s_kv_matches_reference_table(name: str) -> None:
    got = kv.s_kv(model(name), list(LENGTHS)) / MIB
    assert got == pytest.approx(TABLE_3_4[name], abs=0.1)


@pytest.mark.parametrize("name", ["MiMo-V2-Flash", "gpt-oss-120b"])
def test_swa_saturates_at_the_window(name: str) -> None:
    f = kv.footprint(model(name))
    window = f.swa_window_tokens
    assert window == 128

    def bounded(length: int) -> float:
        return f.s_kv(length) - f.kv_bytes_per_token * length - f.state_bytes

    assert bounded(64) == pytest.approx(f.swa_bytes_per_token * 64, rel=EXACT)
    assert bounded(window) == pytest.approx(f.swa_max_bytes, rel=EXACT)
    for length in (window + 1, 4 * window, 131072):
        assert bounded(length) == pytest.approx(f.swa_max_bytes, rel=EXACT)


@pytest.mark.parametrize("name", ["Ring-2.5-1T", "Kimi-Linear-48B-A3B", "Qwen3.5-397B-A17B",
                                  "NVIDIA-Nemotron-3-Nano-30B-A3B"])
def test_linear_state_is_constant_in_length(name: str) -> None:
    f = kv.footprint(model(name))
    for length in (0, 1, 1024, 131072, 1_000_000):
        assert f.s_kv(length) - f.kv_bytes_per_token * length == pytest.approx(f.state_bytes, rel=EXACT)


def test_transfer_bytes_with_cached_prefix_ring() -> None:
    # only the uncached 16K of the MLA KV crosses, plus the whole lightning state
    f = kv.footprint(model("Ring-2.5-1T"))
    assert f.transfer_bytes(32768, 16384) == pytest.approx(11_520 * 16384 + 293_601_280, rel=EXACT)
    assert f.transfer_bytes(32768) == pytest.approx(f.s_kv(32768), rel=EXACT)


def test_transfer_bytes_with_cached_prefix_mimo() -> None:
    # uncached growing KV + the whole SWA window (the receiver's prefix cache does not hold it)
    f = kv.footprint(model("MiMo-V2-Flash"))
    assert f.transfer_bytes(1000, 600) == pytest.approx(23_040 * 400 + 199_680 * 128, rel=EXACT)
    # a prefix longer than the request is clipped: nothing growing crosses
    assert f.transfer_bytes(1000, 5000) == pytest.approx(199_680 * 128, rel=EXACT)
    got = f.transfer_bytes([100, 1000], [50, 0])
    assert list(got) == pytest.approx([23_040 * 50 + 199_680 * 100, 23_040 * 1000 + 199_680 * 128], rel=EXACT)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(catalog_names()), a=st.integers(0, 2**21), b=st.integers(0, 2**21))
def test_s_kv_non_decreasing_in_length(name: str, a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    f = kv.footprint(model(name))
    assert f.s_kv(lo) <= f.s_kv(hi)


def _plain_growing(m: ModelSpec) -> bool:
    return not m.groups(AttentionKind.DSA)


@pytest.mark.parametrize("name", [n for n in catalog_names() if _plain_growing(model(n))])
def test_fp8_kv_halves_growing_part(name: str) -> None:
    m = model(name)
    bf16, fp8 = kv.footprint(m, kv_dtype=DType.BF16), kv.footprint(m, kv_dtype=DType.FP8)
    assert fp8.kv_bytes_per_token == pytest.approx(bf16.kv_bytes_per_token / 2, rel=EXACT)
    assert fp8.swa_bytes_per_token == pytest.approx(bf16.swa_bytes_per_token / 2, rel=EXACT, abs=0)
    assert fp8.state_bytes == bf16.state_bytes  # the recurrent state has its own dtype


def test_ring_hybrid_saving_is_8_times_3_556() -> None:
    s = kv.hybrid_saving(model("Ring-2.5-1T"))
    assert s is not None
    assert (s.total_layers, s.growing_layers) == (80, 10)
    assert s.hybrid_factor == pytest.approx(8.0, rel=EXACT)
    # reference GQA 8 KV heads x 128 x (K + V) x 2 B = 4096 B per layer vs MLA 576 x 2 B = 1152 B
    assert s.attention_factor == pytest.approx(4096 / 1152, rel=EXACT)
    assert s.attention_factor == pytest.approx(3.556, abs=5e-4)
    assert s.total_factor == pytest.approx(28.4, abs=0.05)
    # docs/sources.md#kv-per-token: 80 x 8 x 128 x 2 x 2 B = 327,680 B, 28x the 11,520 B
    assert s.total_factor == pytest.approx(327_680 / 11_520, rel=EXACT)


def test_llama_8b_is_its_own_reference() -> None:
    # every layer full GQA with 8 KV heads x 128: exactly the reference, no saving
    s = kv.hybrid_saving(model("Llama-3.1-8B"))
    assert s is not None and s.total_factor == pytest.approx(1.0, rel=EXACT)


@pytest.mark.parametrize(("option", "value"), [("--ref-kv-heads", "0"), ("--ref-kv-heads", "-2"),
                                               ("--ref-head-dim", "0"), ("--ref-head-dim", "-128")])
def test_model_show_refuses_a_non_positive_reference(option: str, value: str) -> None:
    from typer.testing import CliRunner

    from prfaas_plan.cli import app

    res = CliRunner().invoke(app, ["model", "show", "Llama-3.1-8B", option, value])
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.strip().splitlines()
    assert line == f"error: {option}: must be a positive whole number, got {value}"


def test_model_show_prints_weight_bytes_and_context() -> None:
    from typer.testing import CliRunner

    from prfaas_plan.cli import app

    runner = CliRunner()
    shown = runner.invoke(app, ["model", "show", "gpt-oss-120b", "--format", "json"])
    assert shown.exit_code == 0, shown.output
    import json

    d = json.loads(shown.stdout)
    experts = 36 * 128 * 3 * 2880 * 2880  # MXFP4, 0.5 + 1/32 B; the other 116.8e9 - experts weights bf16
    assert d["weights_bytes"] == pytest.approx(experts * 0.53125 + (116.8e9 - experts) * 2, rel=1e-12)
    assert d["max_position_embeddings"] == 131072 and d["weight_format"]["expert_bytes"] == 0.53125
    table = runner.invoke(app, ["model", "show", "gpt-oss-120b"]).stdout
    assert f"Weights: {d['weights_bytes'] / 2**30:,.1f} GiB, MXFP4" in table and "context 131,072 tokens" in table
    plain = runner.invoke(app, ["model", "show", "internal-1t"]).stdout
    assert "Weights: 931.3 GiB, fp8; context 262,144 tokens" in plain  # 1e12 x 1 B, no weight_format


def test_hybrid_saving_refuses_a_non_positive_reference() -> None:
    from prfaas_plan.errors import SpecError

    with pytest.raises(SpecError, match="got 0"):
        kv.hybrid_saving(load_model("Llama-3.1-8B"), reference_kv_heads=0)
