"""Collectives of a tensor-parallel instance (core.work.all_reduces, core.prefill.collective_bytes):
a parallel block (attention and MLP summed off one input, HF ``parallel_attn``) reduces once per layer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from prfaas_plan.core.prefill import collective_bytes
from prfaas_plan.core.work import all_reduces, collectives
from prfaas_plan.io.hf_import import import_hf_config
from prfaas_plan.io.load import Catalog, load_model


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog.default()


def test_a_sequential_dense_layer_reduces_twice_a_parallel_block_once(cat):
    llama = load_model("Llama-2-70B", cat)
    falcon = load_model("Falcon-180B", cat)
    assert (llama.parallel_attn, falcon.parallel_attn, load_model("GPT-J-6B", cat).parallel_attn) == (False, True, True)
    assert (all_reduces(llama), collectives(llama, 8), collectives(llama, 1)) == (160, 160, 0)
    assert (all_reduces(falcon), collectives(falcon, 8)) == (80, 80)
    # 2 (G-1)/G x tokens x hidden x 2 B per all-reduce: 1.75 x 2048 x 14848 x 2 x 80 = 8.514 GB per GPU
    assert float(collective_bytes(falcon, 2048, 8)) == pytest.approx(1.75 * 2048 * 14848 * 2 * 80)
    assert float(collective_bytes(replace(falcon, parallel_attn=False), 2048, 8)) == pytest.approx(
        2 * float(collective_bytes(falcon, 2048, 8)))


def test_moe_layers_keep_their_all_to_all(cat):
    ds = load_model("DeepSeek-V3", cat)  # 61 layers, 58 MoE: 61 mixer + 3 dense-FFN all-reduces, 2 x 58 all-to-all
    assert (all_reduces(ds), collectives(ds, 8)) == (64, 180)
    assert collectives(replace(ds, parallel_attn=True), 8) == 61 + 116


@pytest.mark.parametrize("key", ["parallel_attn", "use_parallel_residual", "new_decoder_architecture"])
def test_the_hub_flag_is_imported(key):
    config = {"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 4096,
              "vocab_size": 1000, key: True}
    assert import_hf_config(config, source="x.json")["parallel_attn"] is True
    assert "parallel_attn" not in import_hf_config(config | {key: False}, source="x.json")
