"""Write small samples of every trace format prfaas-plan reads, into tests/fixtures/traces/ (seeded).

Run: .venv/bin/python scripts/make_trace_samples.py [--seed 7] [--output-dir DIR]

The files are samples in each published format, written from seeded random draws: the columns,
keys, value types and timestamp spellings are the real ones, the numbers are not the real data.

- ``azure_code_2023.csv``: Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md, header
  ``TIMESTAMP,ContextTokens,GeneratedTokens``, TIMESTAMP like ``2023-11-16 18:15:46.6805900``
  (7 fractional digits); code-like lengths (long context, short output).
- ``azure_conv_2024.csv``: ...Dataset2024.md, the same header, TIMESTAMP like
  ``2024-05-10 00:00:00.009930+00:00``; conversation-like lengths.
- ``burstgpt.csv``: HPMLL/BurstGPT README, header ``Timestamp,Model,Request tokens,Response
  tokens,Total tokens,Log Type``; Timestamp whole seconds from the start; models ``ChatGPT`` and
  ``GPT-4``; ``Conversation log`` and ``API log`` rows; some failures (0 Response tokens).
- ``bailian.jsonl``: alibaba-edu/qwen-bailian-usagetraces-anon, keys ``chat_id``,
  ``parent_chat_id`` (-1 for a first turn), ``timestamp`` (s, float, relative), ``input_length``,
  ``output_length``, ``type``, ``turn``, ``hash_ids`` over 16-token blocks: a turn's input is its
  parent's input and output plus a new message, so it repeats the parent's blocks; some chats
  open with one of a few shared system prompts.
- ``mooncake_conversation.jsonl``, ``mooncake_toolagent.jsonl``: kvcache-ai/Mooncake
  FAST25-release/traces, keys ``timestamp`` (ms, int), ``input_length``, ``output_length``,
  ``hash_ids`` (512-token blocks); multi-turn sessions, and agents sharing long tool prompts.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "traces"
ROWS = 300


def _lognormal(rng: np.random.Generator, median: float, sigma: float, lo: int, hi: int) -> int:
    return int(np.clip(round(median * float(np.exp(sigma * rng.standard_normal()))), lo, hi))


def _csv(header: list[str], rows: list[list[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def azure_2023(rng: np.random.Generator) -> str:
    ticks = 0  # 100 ns ticks after the first row's 18:15:46 (the 2023 files print 7 digits)
    start = datetime(2023, 11, 16, 18, 15, 46)
    rows = []
    for _ in range(ROWS):
        whole, frac = divmod(6_805_900 + ticks, 10_000_000)
        stamp = (start + timedelta(seconds=whole)).strftime("%Y-%m-%d %H:%M:%S") + f".{frac:07d}"
        rows.append([stamp, _lognormal(rng, 1_800, 0.9, 3, 7_437), _lognormal(rng, 20, 0.9, 1, 1_899)])
        ticks += int(rng.exponential(0.25) * 10_000_000)
    return _csv(["TIMESTAMP", "ContextTokens", "GeneratedTokens"], rows)


def azure_2024(rng: np.random.Generator) -> str:
    us = 9_930
    start = datetime(2024, 5, 10)
    rows = []
    for _ in range(ROWS):
        stamp = (start + timedelta(microseconds=us)).strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00"
        rows.append([stamp, _lognormal(rng, 900, 1.0, 1, 32_000), _lognormal(rng, 180, 0.8, 0, 4_000)])
        us += int(rng.exponential(0.5) * 1e6)
    return _csv(["TIMESTAMP", "ContextTokens", "GeneratedTokens"], rows)


def burstgpt(rng: np.random.Generator) -> str:
    t = 5
    rows = []
    for _ in range(ROWS):
        model = "GPT-4" if rng.random() < 0.25 else "ChatGPT"
        log = "API log" if rng.random() < 0.4 else "Conversation log"
        request = _lognormal(rng, 600 if model == "ChatGPT" else 1_100, 1.0, 1, 30_000)
        response = 0 if rng.random() < 0.05 else _lognormal(rng, 250, 0.9, 1, 4_000)
        rows.append([t, model, request, response, request + response, log])
        t += int(rng.exponential(2.0))
    return _csv(["Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"], rows)


def _blocks(tokens: int, block: int) -> int:
    return -(-tokens // block)


def bailian(rng: np.random.Generator) -> str:
    block = 16
    next_id = [0]

    def fresh(n: int) -> list[int]:
        ids = list(range(next_id[0], next_id[0] + n))
        next_id[0] += n
        return ids

    prompts = [(n * block, fresh(n)) for n in (20, 45, 90)]  # shared system prompts, whole blocks
    events = []  # (timestamp, record) of every turn
    chat = 0
    while len(events) < ROWS:
        t = float(rng.uniform(0, 600))
        turns = int(rng.integers(1, 6))
        tokens, hashes = (0, []) if rng.random() < 0.4 else prompts[int(rng.integers(len(prompts)))]
        hashes = list(hashes)
        parent = -1
        kind = "image" if rng.random() < 0.1 else "text"
        for turn in range(1, turns + 1):
            message = _lognormal(rng, 300, 1.0, 1, 8_000)
            # the cached part is whole blocks: a partial last block of the history is hashed anew
            full = tokens // block
            hashes = hashes[:full] + fresh(_blocks(tokens + message, block) - full)
            tokens += message
            out = _lognormal(rng, 200, 0.8, 1, 2_000)
            events.append((round(t, 3), {"chat_id": chat, "parent_chat_id": parent, "timestamp": round(t, 3),
                                         "input_length": tokens, "output_length": out, "type": kind,
                                         "turn": turn, "hash_ids": list(hashes)}))
            parent, chat = chat, chat + 1
            tokens += out
            t += float(rng.exponential(40.0))
    events.sort(key=lambda e: e[0])
    return "".join(json.dumps(rec) + "\n" for _, rec in events[:ROWS])


def mooncake(rng: np.random.Generator, *, tool_prompts: int, turns_hi: int, gap_s: float) -> str:
    block = 512
    next_id = [0]

    def fresh(n: int) -> list[int]:
        ids = list(range(next_id[0], next_id[0] + n))
        next_id[0] += n
        return ids

    tools = [(n * block, fresh(n)) for n in rng.integers(8, 30, size=tool_prompts).tolist()]
    events = []
    while len(events) < ROWS:
        t = float(rng.uniform(0, 1_800))
        tokens, hashes = (0, []) if not tools or rng.random() < 0.2 else tools[int(rng.integers(len(tools)))]
        hashes = list(hashes)
        for _ in range(int(rng.integers(1, turns_hi + 1))):
            message = _lognormal(rng, 2_500, 1.0, 1, 60_000)
            full = tokens // block
            hashes = hashes[:full] + fresh(_blocks(tokens + message, block) - full)
            tokens += message
            out = _lognormal(rng, 300, 0.9, 1, 2_000)
            events.append((int(t * 1000), {"timestamp": int(t * 1000), "input_length": tokens,
                                           "output_length": out, "hash_ids": list(hashes)}))
            tokens += out
            t += float(rng.exponential(gap_s))
    events.sort(key=lambda e: e[0])
    return "".join(json.dumps(rec) + "\n" for _, rec in events[:ROWS])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--output-dir", type=Path, default=OUT)
    a = ap.parse_args()
    # one stream per file, so a change to one generator leaves the others' files as they are
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(a.seed).spawn(6)]
    files = {
        "azure_code_2023.csv": azure_2023(streams[0]),
        "azure_conv_2024.csv": azure_2024(streams[1]),
        "burstgpt.csv": burstgpt(streams[2]),
        "bailian.jsonl": bailian(streams[3]),
        "mooncake_conversation.jsonl": mooncake(streams[4], tool_prompts=0, turns_hi=6, gap_s=60.0),
        "mooncake_toolagent.jsonl": mooncake(streams[5], tool_prompts=6, turns_hi=3, gap_s=10.0),
    }
    for name, text in files.items():
        (a.output_dir / name).write_text(text)
        print(f"wrote {a.output_dir / name} ({text.count(chr(10)):,} lines)")


if __name__ == "__main__":
    main()
