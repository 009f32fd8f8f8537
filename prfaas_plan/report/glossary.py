"""The symbols the report's tables use, in words: the page's glossary (docs/model.md#symbols holds
the same list, with the equations around it; a test keeps the two in step)."""

from __future__ import annotations

GLOSSARY: tuple[tuple[str, str, str], ...] = (
    ("l, L", "a request's uncached input length, what its prefill computes (L: the workload's random length)",
     "tokens"),
    ("1K", "1,024 tokens (a length); a threshold is shown in whole tokens", "tokens"),
    ("L_out", "mean output length", "tokens"),
    ("S_kv(l)", "bytes of KVCache a request of length l leaves behind: full-attention KV, sliding-window KV and "
                "the constant recurrent state", "bytes (MiB = 2^20 B)"),
    ("T_prefill(l)", "prefill time of one request of length l on one instance", "s"),
    ("Phi_kv(l)", "KV throughput of one instance, S_kv(l) / T_prefill(l) (Eq. 1)", "Gbps (10^9 bit/s)"),
    ("B_out", "usable bandwidth of a link from the prefill service to a PD site", "Gbps"),
    ("t", "routing threshold: a request longer than t is prefilled by the prefill service (PrfaaS), the rest "
          "locally", "tokens"),
    ("p", "P(L > t): the share of requests offloaded", "%"),
    ("l_long, l_short", "mean length of the offloaded and of the local requests", "tokens"),
    ("N_prfaas, N_p, N_d", "instances of the prefill service, of local prefill (PD-P) and of local decode (PD-D)",
     "instances"),
    ("prfaas/p/d, split", "N_prfaas / N_p / N_d written together", "instances"),
    ("Theta_prfaas", "requests/s the offload path sustains: the smaller of its compute and its link (Eq. 3)",
     "req/s"),
    ("Theta_pd-p", "requests/s local prefill sustains (Eq. 4)", "req/s"),
    ("Theta_pd-d", "requests/s decode sustains (Eq. 5)", "req/s"),
    ("Lambda, Lambda_max", "an arrival rate; the largest one every stage sustains (Eq. 6)", "req/s"),
    ("bound by", "the stage whose bound is Lambda_max: prfaas-compute, link, pd-prefill or decode; (= x): x is "
                 "equal to it", "-"),
    ("BS_max", "the largest decode batch per instance meeting the TPOT SLO and fitting in memory", "requests"),
    ("T_decode", "one decode step at BS_max: the time per output token", "s"),
    ("TTFT, TPOT", "time to first token; time per output token", "s"),
    ("P50, P90, P99", "percentiles: the value below which 50%, 90%, 99% of requests fall", "as the quantity"),
    ("P10-P90", "the serving-stack profile's band of measured / predicted time, carried to every modelled number",
     "as the quantity"),
    ("load", "the arrival rate over the smallest capacity among the systems compared", "%"),
    ("headroom", "the utilisation every stage is sized at, at most (size)", "fraction"),
    ("homogeneous PD", "one cluster of the local GPU prefilling and decoding every request", "-"),
    ("naive heterogeneous PD", "every request prefilled by the prefill service, every decode local (t below the "
                               "shortest length)", "-"),
    ("paper, exact", "methods: each stage at its mean length (the paper's), or expectations over the lengths", "-"),
)
