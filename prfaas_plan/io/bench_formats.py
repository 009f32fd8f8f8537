"""Serving-benchmark result files, as people already have them, as points for ``calibrate``.

The quantities are those of io/measurement_set.py: ``prefill_s`` (an engine's single-request
prefill), ``ttft_s`` (a client's time to first token at concurrency 1) and ``decode_step_s``
(one step at ``batch`` requests, context ``input_tokens``), in seconds and tokens. Each reader's
docstring names the upstream writer and version its keys follow. Serving benchmarks time at the
client, so only runs at concurrency 1 count: under load a TTFT includes queueing.

A file is one JSON document (line 1) or JSON Lines. Every failure is one SpecError naming the
file, the line and the key: not JSON, a required key missing, a value that is not a number, a
time that is negative, zero, NaN or infinite. Nothing is clamped.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prfaas_plan import units
from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.files import read_text

FORMATS = ("sglang-one-batch", "sglang-serving", "vllm-serve", "vllm-latency", "genai-perf", "aiperf", "prfaas-jsonl")
_KIND = {"prefill_s": "prefill", "ttft_s": "prefill", "decode_step_s": "decode"}
_MISSING = object()
Key = tuple[str | int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchPoint:
    """One time read from a benchmark file (seconds, tokens)."""

    kind: str  # "prefill" (one request's prefill, or TTFT at concurrency 1) or "decode" (one step)
    quantity: str  # "prefill_s" | "ttft_s" | "decode_step_s"
    seconds: float
    input_tokens: int  # prompt length (decode: the context)
    batch: int  # requests together (1 for concurrency 1)
    model: str | None  # model id when the file names one
    line: int  # line of the file (1 for a single JSON document)
    format: str  # one of FORMATS


def _key(key: Key) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f"{'.' if i else ''}{p}" for i, p in enumerate(key))


def _shown(value: Any) -> str:
    text = json.dumps(value)  # as the file spells it: null, "fast", NaN, Infinity
    return text if len(text) <= 40 else f"{text[:30]}...({len(text)} characters)"


class _Record:
    """One JSON object of the file; its errors name the file, the line and the key."""

    def __init__(self, source: str, line: int, obj: dict[str, Any]):
        self.source, self.line, self.obj = source, line, obj

    def error(self, message: str, key: Key = ()) -> SpecError:
        return SpecError(message, source=self.source, field=f"line {self.line}" + (f", key {_key(key)}" if key else ""))

    def get(self, *key: str | int, default: Any = _MISSING) -> Any:
        """The value at ``key`` (names and list indexes); a missing one is ``default`` or an error."""
        node: Any = self.obj
        for i, part in enumerate(key):
            container = list if isinstance(part, int) else dict
            found = isinstance(node, container) and (part in node if container is dict else 0 <= part < len(node))
            if found:
                node = node[part]
            elif default is not _MISSING:
                return default
            elif not isinstance(node, container):
                raise self.error(f"not {kind_of(container())}: {_shown(node)}", key[:i])
            else:
                raise self.error("a required key is missing", key[:i + 1])
        return node

    def number(self, *key: str | int) -> float:
        value = self.get(*key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(f"not a number: {_shown(value)}", key)
        try:
            x = float(value)
        except OverflowError:  # an integer beyond a float
            x = math.inf
        if not math.isfinite(x):
            raise self.error(f"not a finite number: {_shown(value)}", key)
        return x

    def seconds(self, *key: str | int, unit: str = "s") -> float:
        """A time in ``unit`` (a key of units.DURATION_UNITS) in seconds, refused unless positive."""
        out = self.number(*key) * units.DURATION_UNITS[unit]
        if not out > 0:  # also a positive time that underflows in seconds
            raise self.error(f"must be a positive time, got {_shown(self.get(*key))} {unit}", key)
        return out

    def count(self, *key: str | int) -> int:
        x = self.number(*key)
        if x != int(x) or x < 1:
            raise self.error(f"must be a whole number of at least 1, got {_shown(self.get(*key))}", key)
        return int(x)

    def tokens(self, *key: str | int, per: int = 1, least: int = 1) -> float:
        """A length in tokens (a total over ``per`` requests: the mean), at least ``least``."""
        x = self.number(*key) / per
        if not x >= least:
            raise self.error(f"must be at least {least} a request, got {_shown(self.get(*key))} tokens over {per} "
                             "requests", key)
        return x

    def text(self, *key: str | int) -> str | None:
        value = self.get(*key, default=None)
        return value if isinstance(value, str) and value else None

    def point(self, fmt: str, quantity: str, seconds: float, tokens: int, *, batch: int = 1,
              model: str | None = None) -> BenchPoint:
        return BenchPoint(kind=_KIND[quantity], quantity=quantity, seconds=seconds, input_tokens=tokens, batch=batch,
                          model=model, line=self.line, format=fmt)


def _context(input_tokens: int, output_tokens: float) -> int:
    """The context of the median decode step: the prompt plus half the answer, rounded half up."""
    return input_tokens + int(output_tokens / 2 + 0.5)


# ---------------------------------------------------------------------------------------------
# Reading and detection


def _why(exc: Exception) -> tuple[str, int, int]:
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg, exc.lineno, exc.colno
    return ("nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]), 1, 1


def _records(path: Path) -> list[tuple[int, Any]]:
    """(line, value) of the file's one JSON document (line 1) or of each JSON line. Python's json,
    not a strict parser: SGLang writes an infinite request rate as the bare token ``Infinity``."""
    text = read_text(path).removeprefix("\ufeff")
    try:
        return [(1, json.loads(text))]
    except (ValueError, RecursionError) as exc:  # ValueError: also an integer of over 4300 digits
        whole = _why(exc)
    out: list[tuple[int, Any]] = []
    for n, line in enumerate(text.split("\n"), start=1):  # as file iteration counts lines
        if line.strip():
            try:
                out.append((n, json.loads(line)))
            except (ValueError, RecursionError) as exc:
                # a first line that is no JSON: one broken document, say where the document breaks
                msg, at, column = (_why(exc)[0], n, _why(exc)[2]) if out else whole
                raise SpecError(f"not JSON: {msg} (column {column})", source=str(path), field=f"line {at}") from None
    if not out:
        raise SpecError("the file is empty", source=str(path))
    return out


def _classify(obj: Any) -> tuple[str | None, str]:
    """(format, "") of one record by the key rules of the format notes (first match wins), or
    (None, why none), naming near misses and the file to read instead."""
    if not isinstance(obj, dict):
        return None, ("a JSON list, as vLLM's .pytorch.json sidecar: read the result file beside it"
                      if isinstance(obj, list) else f"{kind_of(obj)}, not a JSON object")
    has = obj.__contains__
    cfg = obj.get("input_config")
    if isinstance(cfg, dict) and any(isinstance(v, dict) and "unit" in v for v in obj.values()):
        count = obj.get("request_count")
        unit = count.get("unit") if isinstance(count, dict) else None  # AIPerf "requests", genai-perf "count"
        if has("schema_version") or has("aiperf_version") or {"models", "phases", "datasets", "loadgen"} & set(cfg):
            return "aiperf", ""
        if "perf_analyzer" in cfg or "model_names" in cfg or unit == "count" or (
                isinstance(cfg.get("model"), list) and ("service_kind" in cfg or "endpoint_type" in cfg)):
            return "genai-perf", ""
        if unit == "requests":
            return "aiperf", ""
    ttft = has("median_ttft_ms") or has("mean_ttft_ms")
    if has("avg_latency") and isinstance(obj.get("latencies"), list) and isinstance(obj.get("percentiles"), dict) \
            and not has("batch_size"):
        return "vllm-latency", ""
    if has("prefill_latency") and has("batch_size") and has("input_len"):
        return "sglang-one-batch", ""
    if has("last_ttft") and has("batch_size"):
        return None, ("SGLang bench_one_batch_server output, which has no prefill_latency and times a server over "
                      "HTTP: use bench_one_batch --result-filename, or bench_serving --max-concurrency 1")
    if has("input_len") and (has("tprefill_ms") or has("skv_bytes_total")):
        return "prfaas-jsonl", ""
    if has("date") and has("model_id") and (ttft or has("completed")):
        return "vllm-serve", ""
    if has("backend") and has("dataset_name") and ttft and not (has("date") or has("model_id")):
        return "sglang-serving", ""
    if has("experiments") and has("service_kind"):
        return None, "a raw perf_analyzer profile_export.json: read the *_genai_perf.json beside it"
    if has("metadata") and has("metrics") and has("error"):
        return None, "AIPerf's per-request profile_export.jsonl: read profile_export_aiperf.json beside it"
    keys = ", ".join(list(obj)[:5]) + (", ..." if len(obj) > 5 else "")
    return None, f"keys {keys or 'none'}; the formats read are {', '.join(FORMATS)}"


def _detect(records: list[tuple[int, Any]], source: str) -> str:
    n, obj = records[0]
    fmt, why = _classify(obj)
    if fmt is None:
        raise SpecError(f"matches no benchmark format ({why})", source=source, field=f"line {n}")
    return fmt


def detect(path: Path) -> str:
    """The format of the file at ``path`` (one of FORMATS), from its first record."""
    return _detect(_records(Path(path)), str(path))


# ---------------------------------------------------------------------------------------------
# The formats


def _sglang_one_batch(r: _Record, fmt: str) -> list[BenchPoint]:
    """SGLang ``bench_one_batch --result-filename`` (JSONL, a line per batch/input/output size): the
    record of ``latency_test_run_once`` in ``sglang/benchmark/one_batch.py`` (PyPI sglang 0.5.23),
    the same keys as ``python/sglang/bench_one_batch.py`` at git 009441505062411de64a6e06e346779899eb53dc.

    ``prefill_latency`` (s) is one forward over the whole batch, so only a ``batch_size`` 1 line
    gives a prefill point: a batch's prefill is not a single request's. A line with
    ``median_decode_latency`` (s, one step of the batch; absent at ``output_len`` 1) gives a decode
    point at ``batch_size``, context ``input_len + output_len/2``.
    """
    batch, length, out = r.count("batch_size"), r.count("input_len"), r.count("output_len")
    prefill = r.seconds("prefill_latency")
    points = [r.point(fmt, "prefill_s", prefill, length)] if batch == 1 else []
    if "median_decode_latency" in r.obj:
        step = r.seconds("median_decode_latency")
        points.append(r.point(fmt, "decode_step_s", step, _context(length, out), batch=batch))
    return points


def _serving(r: _Record, fmt: str) -> list[BenchPoint]:
    """One run of SGLang ``bench_serving --output-file`` (JSONL, a line per run: the ``result`` of
    ``benchmark()`` in ``sglang/benchmark/serving.py``, PyPI sglang 0.5.23; older key sets at git
    0033168f0f58b2bc05aa0273bd475d9c01bafb1c and 50a613687fe1ffc6f1bb630c684a24c428a54a74) or of
    ``vllm bench serve --save-result`` (an object, a line each with ``--append-result``: ``result``
    in ``vllm/benchmarks/serve.py``, PyPI vllm 0.34.0, commit g62d4bc3c7; older
    ``benchmarks/benchmark_serving.py`` at git 8668d7c05027b98ac66bd5540955dd2ce3a0f318).

    Only a run at ``max_concurrency`` 1 gives points (older files have no such key): ``ttft_s`` =
    ``median_ttft_ms`` (else ``mean_ttft_ms``) at ``total_input_tokens / completed`` tokens, and
    ``decode_step_s`` = ``median_tpot_ms`` (else ``mean_tpot_ms``) at context input + output/2.
    """
    if r.get("max_concurrency", default=None) is None or r.number("max_concurrency") != 1:
        return []
    done = r.count("completed")
    length = round(r.tokens("total_input_tokens", per=done))  # the mean prompt: datasets vary it
    model = r.text("model_id") if fmt == "vllm-serve" else r.text("server_info", "model_path")
    ttft = "median_ttft_ms" if r.get("median_ttft_ms", default=None) is not None else "mean_ttft_ms"
    points = [r.point(fmt, "ttft_s", r.seconds(ttft, unit="ms"), length, model=model)]
    tpot = next((k for k in ("median_tpot_ms", "mean_tpot_ms") if r.get(k, default=None) is not None), None)
    if tpot is not None and r.number(tpot) != 0:  # 0 when no request had a second token
        out = r.tokens("total_output_tokens", per=done, least=0)
        points.append(r.point(fmt, "decode_step_s", r.seconds(tpot, unit="ms"), _context(length, out), model=model))
    return points


def _vllm_latency(r: _Record, fmt: str, *, length: int, batch: int) -> list[BenchPoint]:
    """``vllm bench latency --output-json`` (one object: ``model_id``, ``avg_latency``, ``latencies``,
    ``percentiles``) of ``vllm/benchmarks/latency.py`` (PyPI vllm 0.34.0, commit g62d4bc3c7; no
    ``model_id`` in ``benchmarks/benchmark_latency.py`` at git 00db02095a5d578c18383609a00fa0c6e7fc8db8).

    ``avg_latency`` (s) is the mean time of one ``generate()`` over the batch: a prefill only for a
    run at ``--output-len 1``. The file records no batch or lengths, so the caller gives them.
    """
    return [r.point(fmt, "prefill_s", r.seconds("avg_latency"), length, batch=batch, model=r.text("model_id"))]


def _time(r: _Record, metric: str) -> tuple[Key, str]:
    """A time block's p50 (else avg: AIPerf writes a non-finite p50 as null) and its ``unit``, which
    is authoritative: genai-perf builds of May-June 2024 wrote "ns"."""
    stat = "p50" if r.get(metric, "p50", default=None) is not None else "avg"
    unit = r.get(metric, "unit")
    if not isinstance(unit, str) or unit not in units.DURATION_UNITS:
        raise r.error(f"{_shown(unit)} is not a time unit (s, ms, us, ns)", (metric, "unit"))
    return (metric, stat), unit


def _concurrency(r: _Record, fmt: str) -> Key:
    """Where the file records its load as a concurrency; another kind of load is refused."""
    if fmt == "aiperf" and r.get("input_config", "phases", default=None) is None:
        return ("input_config", "loadgen", "concurrency")  # early AIPerf UserConfig: user-set fields only
    if fmt == "aiperf":  # 0.13 BenchmarkConfig: the phase of kind (or name) "profiling"
        phases = r.get("input_config", "phases")
        i = next((i for i, p in enumerate(phases) if isinstance(p, dict)
                  and "profiling" in (p.get("kind"), p.get("name"))), None) if isinstance(phases, list) else None
        if i is None:
            raise r.error("no phase of kind 'profiling' in a list of phases", ("input_config", "phases"))
        if r.get("input_config", "phases", i, "type") != "concurrency":
            raise r.error(f"the profiling load is {_shown(r.get('input_config', 'phases', i, 'type'))}, not "
                          "concurrency: profile at --concurrency 1", ("input_config", "phases", i, "type"))
        return ("input_config", "phases", i, "concurrency")
    if r.get("input_config", "perf_analyzer", default=None) is None:  # genai-perf <= 0.0.11: argparse namespace
        if r.get("input_config", "concurrency") is None:
            raise r.error(f"null (request_rate {_shown(r.get('input_config', 'request_rate', default=None))}): not "
                          "concurrency 1", ("input_config", "concurrency"))
        return ("input_config", "concurrency")
    stimulus = r.get("input_config", "perf_analyzer", "stimulus")
    if isinstance(stimulus, dict) and "concurrency" not in stimulus:  # {"request_rate": 10.0}, ...
        raise r.error(f"the load is {_shown(stimulus)}, not a concurrency: profile at --concurrency 1",
                      ("input_config", "perf_analyzer", "stimulus"))
    return ("input_config", "perf_analyzer", "stimulus", "concurrency")


def _profile_export(r: _Record, fmt: str) -> list[BenchPoint]:
    """genai-perf ``profile_export_genai_perf.json`` (``genai-perf/genai_perf/export_data/json_exporter.py``,
    github triton-inference-server/perf_analyzer 263c5f6e0c7a6c15472a54409174981f67930cfe = PyPI
    genai-perf 0.0.16; the flat ``input_config`` of <= 0.0.11 at a186b900ab7fd266f0743cdb8acff6e60ac775f9)
    or AIPerf ``profile_export_aiperf.json`` (``aiperf/exporters/metrics_json_exporter.py``, PyPI
    aiperf 0.13.0, schema 1.4; the early layout at github ai-dynamo/aiperf db4f6397d11ee2d4cfbb41f70b2327315163dcf0).

    ``ttft_s`` = ``time_to_first_token`` at ``input_sequence_length.avg`` tokens; ``decode_step_s``
    = ``inter_token_latency`` (omitted by non-streaming runs) at context input + output/2. A run
    at another concurrency is an error naming where the file records its load.
    """
    where = _concurrency(r, fmt)
    if (load := r.number(*where)) != 1:
        raise r.error(f"concurrency {load:g}, not 1: TTFT and ITL under load include queueing; profile at "
                      "--concurrency 1", where)
    names = (("input_config", "models", "items", 0, "name"), ("input_config", "endpoint", "model_names", 0)) \
        if fmt == "aiperf" else (("input_config", "model_names", 0), ("input_config", "model", 0))
    model = next((m for m in (r.text(*k) for k in names) if m), None)
    length = round(r.tokens("input_sequence_length", "avg"))
    key, unit = _time(r, "time_to_first_token")
    points = [r.point(fmt, "ttft_s", r.seconds(*key, unit=unit), length, model=model)]
    if "inter_token_latency" in r.obj:
        key, unit = _time(r, "inter_token_latency")
        if r.number(*key) != 0:  # 0 when no request had a second token
            out = r.tokens("output_sequence_length", "avg", least=0)
            points.append(r.point(fmt, "decode_step_s", r.seconds(*key, unit=unit), _context(length, out),
                                  model=model))
    return points


def _prfaas_jsonl(r: _Record, fmt: str) -> list[BenchPoint]:
    """The PrfaaS reproduction's Phi_kv probe JSONL (github HarshavardhanK/Mooncake
    ``prfaas/results/phase1_phi_kv/*.jsonl`` at d475071eccd7dac4232dc81a986009be4087b0be and
    ``prfaas/results/m1.5-vllm-baseline/phase1_phi_kv/*.jsonl`` at 4010f0f8107f6d7a83888baa778865e77fb4c423,
    written by ``prfaas/m1.5-vllm-baseline/scripts/phi_kv_probe.py``), a line per (model, length):
    ``model_id``, ``model_short``, ``input_len``, ``output_len``, ``tp_size``, ``skv_bytes_total``,
    ``tprefill_ms`` {p25, p50, p75, n}, ``phi_kv_gbps``, ``engine``, ``gpu``, ... A failed or skipped
    cell is a record with ``error`` (and ``skipped``) and gives no point.

    The repo calls the time Tprefill, but it is a client round trip of a non-streamed
    ``/v1/completions`` with ``max_tokens`` 1 to a server at ``--max-running-requests 1``: its
    median is a ``ttft_s`` at ``input_len`` tokens, batch 1.
    """
    if "error" in r.obj or r.obj.get("skipped") is True:
        return []
    length = r.count("input_len")
    if r.count("output_len") != 1:
        raise r.error("must be 1: a longer answer adds decode steps to the round trip", ("output_len",))
    return [r.point(fmt, "ttft_s", r.seconds("tprefill_ms", "p50", unit="ms"), length, model=r.text("model_id"))]


_READERS: dict[str, Callable[[_Record, str], list[BenchPoint]]] = {
    "sglang-one-batch": _sglang_one_batch, "sglang-serving": _serving, "vllm-serve": _serving,
    "genai-perf": _profile_export, "aiperf": _profile_export, "prfaas-jsonl": _prfaas_jsonl}
_NOTHING = {"sglang-one-batch": "no line at batch_size 1 and no median_decode_latency: nothing to read",
            "prfaas-jsonl": "every cell is an error or skipped record: nothing to read"}


def read_bench(path: Path, *, fmt: str | None = None, input_tokens: int | None = None,
               batch: int | None = None) -> list[BenchPoint]:
    """The points of the benchmark file at ``path``; ``fmt`` (one of FORMATS) skips detection.

    ``input_tokens`` (required) and ``batch`` (default 1) describe a vllm-latency run, whose file
    records neither; the other formats record their own and refuse them.
    """
    path, source = Path(path), str(path)
    if fmt is not None and fmt not in FORMATS:
        raise SpecError(f"unknown benchmark format {fmt!r}: use one of {', '.join(FORMATS)}", field="format")
    for option, value in (("--input-tokens", input_tokens), ("--batch", batch)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise SpecError(f"must be a whole number of at least 1, got {value!r}", field=option)
    records = _records(path)
    fmt = fmt or _detect(records, source)
    if fmt != "vllm-latency" and (input_tokens is not None or batch is not None):
        option = "--input-tokens" if input_tokens is not None else "--batch"
        raise SpecError(f"a {fmt} file records its own lengths and load; {option} applies to vllm-latency files",
                        source=source, field=option)
    if fmt != "vllm-latency":
        reader = _READERS[fmt]
    elif input_tokens is None:
        raise SpecError("vllm bench latency records no input length: give --input-tokens", source=source)
    else:
        reader = functools.partial(_vllm_latency, length=input_tokens, batch=batch or 1)
    points: list[BenchPoint] = []
    for n, obj in records:
        if not isinstance(obj, dict):
            raise SpecError(f"expected a JSON object, got {kind_of(obj)}", source=source, field=f"line {n}")
        points += reader(_Record(source, n, obj), fmt)
    if not points:
        seen = ", ".join(dict.fromkeys(_shown(obj.get("max_concurrency")) for _, obj in records))
        raise SpecError(_NOTHING.get(fmt, f"no run at concurrency 1 (max_concurrency of the runs: {seen}); under "
                                          "load a TTFT includes queueing: run with --max-concurrency 1"),
                        source=source)
    return points
