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
    assert load_trace(tmp_path / "d.jsonl", block_tokens=32).trace.block_tokens == 32


def test_loader_refuses(tmp_path):
    with pytest.raises(SpecError, match="models present are ChatGPT, GPT-4"):
        load_trace(_file(tmp_path, "c.csv", BURST), model_filter="gpt-4")
    with pytest.raises(SpecError, match="shows a burstgpt trace, not azure"):
        load_trace(tmp_path / "c.csv", format="azure")
    with pytest.raises(SpecError, match="unknown trace format"):
        load_trace(tmp_path / "c.csv", format="csv")
