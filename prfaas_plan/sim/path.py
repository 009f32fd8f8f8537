"""The life cycle of a request between its prefill and decode admission, shared by the simulators.

``KvPath`` holds the event callbacks of one PD site's path (docs/model.md#routing-by-threshold,
docs/model.md#latency-and-queueing): the layer-wise pipelined KV shipment of an offloaded request over the site's link,
the instantaneous RDMA hand-off of a local one, the RTT, and a prefix-cache prefetch joining its
prefill queue. ``sim.site.Site`` mixes it in (one object per PD site, the PrfaaS pool shared);
the fast path (``sim.kernel``) plays the same steps.
"""

from __future__ import annotations

from typing import Any

from prfaas_plan.sim.engine import Engine
from prfaas_plan.sim.entities import DecodeSlots, Pool, Req
from prfaas_plan.sim.parts import BULK, BULK_AFTER_PREFILL, BULK_SENT, LAST, PREFETCH
from prfaas_plan.sim.stations import SharedLink

__all__ = ["BULK", "BULK_AFTER_PREFILL", "BULK_SENT", "LAST", "PREFETCH", "KvPath"]  # the states of Req.part


class KvPath:
    """Callbacks of one path; the host sets ``engine``, ``system`` (rtt_s), ``pool_p``, ``pool_l``,
    ``link``, ``decode``, ``n_layers`` (1 without pipelining) and the counter ``link_done``."""

    engine: Engine
    system: Any
    pool_p: Pool | None
    pool_l: Pool | None
    link: SharedLink
    decode: DecodeSlots
    n_layers: int
    link_done: int

    def _prefill_start_p(self, r: Req) -> None:
        if self.n_layers > 1:
            self.engine.schedule(r.service / self.n_layers, self._bulk_start, r)

    def _bulk_start(self, r: Req) -> None:
        if r.part != 0:  # a zero-length prefill already sent everything
            return
        r.part = BULK
        self.link.submit(r, r.kv * (self.n_layers - 1) / self.n_layers)

    def _prefill_done_p(self, r: Req) -> None:
        if r.part == BULK:
            r.part = BULK_AFTER_PREFILL
        elif r.part == BULK_SENT:
            r.part = LAST
            self.link.submit(r, r.kv / self.n_layers)
        else:  # no pipelining: everything goes now
            r.part = LAST
            self.link.submit(r, r.kv)

    def _prefill_done_l(self, r: Req) -> None:
        r.kv_transfer_completed_at = r.prefill_completed_at  # RDMA inside the cluster: instantaneous
        self.decode.ready(r)

    def _link_done(self, r: Req) -> None:
        link = self.link  # a lean link (records=False): nothing per transfer to drop
        part = r.part
        if part == LAST:
            self.link_done += 1
            now = self.engine.now
            r.kv_transfer_completed_at = now
            if self.system.landing_s > 0:  # RTT and the handoff
                self.engine.schedule(self.system.landing_s, self.decode.ready, r)
            else:
                self.decode.ready(r)
        elif part == BULK:
            r.part = BULK_SENT
        elif part == BULK_AFTER_PREFILL:
            r.part = LAST
            link.submit(r, r.kv / self.n_layers)
        else:  # prefix-cache prefetch done: the request joins its prefill queue
            r.part = 0
            (self.pool_p if r.offload else self.pool_l).submit(r)  # type: ignore[union-attr]
