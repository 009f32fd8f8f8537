"""Request traces (Mooncake format) and an LRU prefix-cache replay that yields uncached lengths.

A trace request carries its arrival time, input and output lengths (tokens) and the hash ids of
its prefix blocks (``block_tokens`` = 512 tokens each): two requests whose leading hash ids agree
share that prefix, whose KV a prefix cache can reuse. ``replay_prefix_cache`` turns a trace into
the uncached input lengths L that docs/model.md#routing-by-threshold routes by threshold
(``CacheReplay.uncached_distribution()`` is an ``Empirical`` distribution of them).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.lengths import Empirical
from prfaas_plan.errors import SpecError

__all__ = ["DEFAULT_BLOCK_TOKENS", "FORMAT_BLOCK_TOKENS", "TRACE_FORMATS", "CacheReplay", "Trace", "TraceFile",
           "assumed_prefix_cache", "blocks_for_capacity", "replay_prefix_cache"]

DEFAULT_BLOCK_TOKENS = 512  # Mooncake's prefix block size
TRACE_FORMATS = ("mooncake", "azure", "burstgpt", "bailian")
# tokens per hashed block, a property of each format that hashes its prefixes: Mooncake's traces
# hash 512-token blocks (FAST25-release/traces), Alibaba's Qwen/Bailian trace 16-token blocks
FORMAT_BLOCK_TOKENS = {"mooncake": DEFAULT_BLOCK_TOKENS, "bailian": 16}


def _frozen(x: ArrayLike, dtype: type) -> NDArray:
    arr = np.array(x, dtype=dtype)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Trace:
    """n requests; block hashes of request i are ``hash_ids[hash_offsets[i]:hash_offsets[i+1]]``.

    Parameters
    ----------
    arrival_s : float64 (n,), arrival times in seconds (file order, not necessarily sorted).
    input_tokens, output_tokens : int64 (n,), tokens; input_tokens >= 1.
    hash_ids : int64 (total blocks,), all requests' prefix block hashes, concatenated.
    hash_offsets : int64 (n + 1,), start of each request's blocks in ``hash_ids``.
    block_tokens : tokens per hashed block.
    """

    arrival_s: NDArray[np.float64]
    input_tokens: NDArray[np.int64]
    output_tokens: NDArray[np.int64]
    hash_ids: NDArray[np.int64]
    hash_offsets: NDArray[np.int64]
    block_tokens: int = DEFAULT_BLOCK_TOKENS

    def __post_init__(self) -> None:
        for name, dtype in (("arrival_s", np.float64), ("input_tokens", np.int64),
                            ("output_tokens", np.int64), ("hash_ids", np.int64), ("hash_offsets", np.int64)):
            object.__setattr__(self, name, _frozen(getattr(self, name), dtype))
        n = self.arrival_s.size
        if n == 0:
            raise SpecError("the trace holds no requests")
        if self.input_tokens.shape != (n,) or self.output_tokens.shape != (n,):
            raise SpecError("arrival_s, input_tokens and output_tokens must have one entry per request")
        off = self.hash_offsets
        if off.shape != (n + 1,) or off[0] != 0 or off[-1] != self.hash_ids.size or np.any(np.diff(off) < 0):
            raise SpecError("hash_offsets must rise from 0 to len(hash_ids), one step per request")
        if not np.all(np.isfinite(self.arrival_s)):
            raise SpecError("arrival times must be finite")
        if np.any(self.input_tokens < 1) or np.any(self.output_tokens < 0):
            raise SpecError("input lengths must be >= 1 and output lengths >= 0 tokens")
        if int(self.block_tokens) < 1:
            raise SpecError(f"block_tokens must be >= 1, got {self.block_tokens}", field="block_tokens")

    @classmethod
    def from_requests(cls, *, arrival_s: ArrayLike, input_tokens: ArrayLike, output_tokens: ArrayLike,
                      hash_ids: Sequence[Sequence[int]], block_tokens: int = DEFAULT_BLOCK_TOKENS) -> Trace:
        """Build from per-request lists of block hashes."""
        counts = [len(h) for h in hash_ids]
        flat = [x for h in hash_ids for x in h]
        return cls(arrival_s=arrival_s, input_tokens=input_tokens, output_tokens=output_tokens,
                   hash_ids=np.array(flat, dtype=np.int64), hash_offsets=np.concatenate([[0], np.cumsum(counts)]),
                   block_tokens=block_tokens)

    def __len__(self) -> int:
        return int(self.arrival_s.size)

    @property
    def span_s(self) -> float:
        """Last arrival minus first, s: 0 for one request or when every timestamp is equal (then
        the trace has no arrival rate, and nothing to scale to one)."""
        return float(self.arrival_s.max() - self.arrival_s.min())

    @property
    def mean_rate_rps(self) -> float | None:
        """The trace's mean arrival rate, (n - 1) / span, req/s; None without a span (one request,
        or every timestamp equal)."""
        span = self.span_s
        return (len(self) - 1) / span if len(self) >= 2 and span > 0 else None

    def request_hash_ids(self, i: int) -> NDArray[np.int64]:
        """Block hashes of request i, in prefix order."""
        return self.hash_ids[self.hash_offsets[i]:self.hash_offsets[i + 1]]

    @property
    def decode_tokens(self) -> NDArray[np.int64]:
        """Output tokens each request is served for: max(output_tokens, 1).

        A request with 0 output tokens (a trace may record one) is counted as 1 output token,
        as engines do (vLLM and SGLang require max_tokens >= 1): its first token comes from
        prefill and it still takes a decode slot for one step. The analytic model (the mean
        L_out of Eq. 5) and the simulator (each request's decode hold) both use these counts.
        """
        return np.maximum(self.output_tokens, 1)

    def input_distribution(self) -> Empirical:
        """The full input lengths (no prefix cache) as an ``Empirical`` distribution."""
        return Empirical(values=self.input_tokens)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TraceFile:
    """A trace as read from a file of one of ``TRACE_FORMATS``, with what the reading dropped.

    ``has_hashes`` is False for formats that record no prefix blocks (Azure, BurstGPT): their
    ``trace`` has no hash ids (all-zero offsets), so its prefix hit rate is unknown, not 0.
    ``failed_excluded`` counts BurstGPT rows with 0 response tokens (failed requests), left out;
    ``filtered_out`` the rows of other models than the model filter; ``models`` the BurstGPT model
    names present in the file (before any filter), sorted; both 0 / empty for other formats.
    """

    trace: Trace
    format: str
    has_hashes: bool
    failed_excluded: int = 0
    filtered_out: int = 0
    models: tuple[str, ...] = ()
    source: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CacheReplay:
    """Per-request outcome of a prefix-cache replay, in the trace's request order.

    ``hit_rate`` is token-weighted: sum(cached_tokens) / sum(input_tokens). ``block_hit_rate`` is
    sum(hit_blocks) / total blocks, where hit_blocks counts the leading blocks found in the cache.
    """

    cached_tokens: NDArray[np.int64]
    uncached_tokens: NDArray[np.int64]
    hit_blocks: NDArray[np.int64]
    hit_rate: float
    block_hit_rate: float
    capacity_blocks: int | None
    block_tokens: int

    def uncached_distribution(self) -> Empirical:
        """L, the uncached input lengths, as an ``Empirical`` distribution."""
        return Empirical(values=self.uncached_tokens)


def blocks_for_capacity(capacity_bytes: float, bytes_per_token: float,
                        block_tokens: int = DEFAULT_BLOCK_TOKENS) -> int | None:
    """Whole blocks a cache of ``capacity_bytes`` holds (bytes per block = bytes_per_token x block_tokens).

    ``capacity_bytes = inf`` gives None (unbounded).
    """
    if not bytes_per_token > 0 or not math.isfinite(bytes_per_token):
        raise SpecError(f"KV bytes per token must be finite and > 0, got {bytes_per_token!r}",
                        field="bytes_per_token")
    if not capacity_bytes >= 0:
        raise SpecError(f"cache capacity must be >= 0 bytes, got {capacity_bytes!r}", field="capacity_bytes")
    if math.isinf(capacity_bytes):
        return None
    blocks = capacity_bytes / (bytes_per_token * block_tokens)
    return math.floor(blocks * (1 + 1e-12))  # 10 blocks' worth of bytes is 10 blocks despite rounding


class BlockCache:
    """One cluster's prefix cache of hashed blocks, LRU when ``capacity_blocks`` is set.

    A request's hit is its number of leading blocks present (the first miss ends it); afterwards
    all its blocks are inserted or touched in prefix order and the least recently used block is
    evicted beyond capacity. The replay below and the simulator's per-cluster caches share it.
    """

    __slots__ = ("_blocks", "capacity")

    def __init__(self, capacity_blocks: int | None = None) -> None:
        self.capacity = capacity_blocks
        self._blocks: OrderedDict[int, None] | set[int] = set() if capacity_blocks is None else OrderedDict()

    def hits(self, blocks: list[int]) -> int:
        cache = self._blocks
        n = 0
        for h in blocks:
            if h not in cache:
                break
            n += 1
        return n

    def insert(self, blocks: list[int]) -> None:
        cache = self._blocks
        if isinstance(cache, set):
            cache.update(blocks)
            return
        cap = self.capacity
        assert cap is not None
        for h in blocks:
            if h in cache:
                cache.move_to_end(h)
            else:
                cache[h] = None
                if len(cache) > cap:
                    cache.popitem(last=False)


def replay_prefix_cache(trace: Trace, *, capacity_blocks: int | None,
                        block_tokens: int | None = None) -> CacheReplay:
    """Replay ``trace`` in arrival order through one LRU cache of prefix blocks.

    A request's cached prefix is its number of leading block hashes present in the cache (the
    first miss ends it): cached_tokens = min(hits x block_tokens, input_tokens - 1), so at least
    one token is always computed; uncached_tokens = input_tokens - cached_tokens. After the
    request all its blocks are inserted or touched, in prefix order; when the cache holds more
    than ``capacity_blocks`` blocks the least recently used one is evicted. Requests with equal
    arrival times keep their file order.

    Parameters
    ----------
    trace : the requests.
    capacity_blocks : cache size in blocks (``blocks_for_capacity`` converts bytes); None = unbounded.
    block_tokens : tokens per block; defaults to ``trace.block_tokens`` (512).
    """
    if capacity_blocks is not None and (isinstance(capacity_blocks, bool) or int(capacity_blocks) < 0
                                        or int(capacity_blocks) != capacity_blocks):
        raise SpecError(f"capacity must be a whole number of blocks >= 0, got {capacity_blocks!r}",
                        field="capacity_blocks")
    bt = int(trace.block_tokens if block_tokens is None else block_tokens)
    if bt < 1:
        raise SpecError(f"block_tokens must be >= 1, got {block_tokens!r}", field="block_tokens")
    cap = None if capacity_blocks is None else int(capacity_blocks)

    n = len(trace)
    order = np.argsort(trace.arrival_s, kind="stable")
    flat = trace.hash_ids.tolist()
    offsets = trace.hash_offsets.tolist()
    hits_out = np.zeros(n, dtype=np.int64)
    cache = BlockCache(cap)
    for i in order.tolist():
        blocks = flat[offsets[i]:offsets[i + 1]]
        hits_out[i] = cache.hits(blocks)
        cache.insert(blocks)

    cached = np.minimum(hits_out * bt, trace.input_tokens - 1)
    uncached = trace.input_tokens - cached
    total_blocks = int(trace.hash_ids.size)
    return CacheReplay(
        cached_tokens=_frozen(cached, np.int64),
        uncached_tokens=_frozen(uncached, np.int64),
        hit_blocks=_frozen(hits_out, np.int64),
        hit_rate=float(cached.sum() / trace.input_tokens.sum()),
        block_hit_rate=float(hits_out.sum() / total_blocks) if total_blocks else 0.0,
        capacity_blocks=cap,
        block_tokens=bt,
    )


def assumed_prefix_cache(trace: Trace, hit_rate: float) -> CacheReplay:
    """The cached/uncached split an assumed prefix hit rate h gives, for a trace without hashes.

    Each request's cached tokens = min(round(h x input_tokens), input_tokens - 1), rounding half
    up, so at least one token is computed (as in ``replay_prefix_cache``); uncached = input -
    cached. ``hit_rate`` of the result is the token-weighted rate realised, which equals h up to
    that rounding and the one-token floor. No blocks are involved: ``hit_blocks`` are 0.
    """
    if not 0.0 <= hit_rate < 1.0:
        raise SpecError(f"an assumed hit rate must be in [0, 1), got {hit_rate!r}", field="assumed_hit_rate")
    inp = trace.input_tokens
    cached = np.minimum(np.floor(hit_rate * inp + 0.5).astype(np.int64), inp - 1)
    return CacheReplay(
        cached_tokens=_frozen(cached, np.int64),
        uncached_tokens=_frozen(inp - cached, np.int64),
        hit_blocks=_frozen(np.zeros(inp.size), np.int64),
        hit_rate=float(cached.sum() / inp.sum()),
        block_hit_rate=0.0,
        capacity_blocks=None,
        block_tokens=int(trace.block_tokens),
    )
