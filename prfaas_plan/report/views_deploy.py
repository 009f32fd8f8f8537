"""View of `import-deployment` (``api.deploy_import``): the deployed configuration against the best
plan for its fleet; JSON and CSV (one row per site)."""

from __future__ import annotations

from typing import Any

from prfaas_plan.report.render import emit
from prfaas_plan.specs.deploy import ImportResult, SitePlan


def _site(s: SitePlan) -> dict[str, Any]:
    return {"site": s.site, "threshold_tokens": s.threshold_tokens, "n_p": s.n_p, "n_d": s.n_d}


def import_json(r: ImportResult) -> dict[str, Any]:
    return {"scenario": r.scenario, "scenario_file": r.scenario_file, "target": r.target, "context": r.context_from,
            "method": r.method,
            "deployed": {"n_prfaas": r.n_prfaas, "lambda_max_rps": r.deployed_lambda_rps,
                         "binding": r.deployed_binding, "sites": [_site(s) for s in r.deployed]},
            "best": {"n_prfaas": r.best_n_prfaas, "lambda_max_rps": r.best_lambda_rps, "binding": r.best_binding,
                     "sites": [_site(s) for s in r.best]},
            "deployed_over_best": r.ratio, "notes": list(r.notes)}


def _t(t: float | None) -> str:
    return "none" if t is None else f"{t:,.1f}"


def _lines(r: ImportResult) -> list[str]:
    out = [f"{r.scenario}: {r.target} files, context from {r.context_from} (method {r.method})"]
    if r.scenario_file:
        out.append(f"  scenario written to {r.scenario_file}")
    out.append(f"  deployed: N_prfaas {r.n_prfaas}; " + "; ".join(
        f"{s.site} t {_t(s.threshold_tokens)}, N_p/N_d {s.n_p}/{s.n_d}" for s in r.deployed)
        + f": Lambda_max {r.deployed_lambda_rps:.4f} req/s, bound by {r.deployed_binding}")
    out.append(f"  best plan for this fleet: N_prfaas {r.best_n_prfaas}; " + "; ".join(
        f"{s.site} t {_t(s.threshold_tokens)}, N_p/N_d {s.n_p}/{s.n_d}" for s in r.best)
        + f": Lambda_max {r.best_lambda_rps:.4f} req/s, bound by {r.best_binding}")
    out.append(f"  the deployment serves {r.ratio:.1%} of the best plan's Lambda_max")
    out += [f"  note: {n}" for n in r.notes]
    return out


def emit_import(fmt: str, r: ImportResult) -> None:
    payload = import_json(r)
    rows = [{"site": d.site, "deployed_threshold_tokens": d.threshold_tokens, "deployed_n_p": d.n_p,
             "deployed_n_d": d.n_d, "best_threshold_tokens": b.threshold_tokens, "best_n_p": b.n_p, "best_n_d": b.n_d,
             "deployed_lambda_max_rps": r.deployed_lambda_rps, "best_lambda_max_rps": r.best_lambda_rps}
            for d, b in zip(r.deployed, r.best, strict=True)]
    emit(fmt, payload, rows=rows, tables=lambda: _lines(r))
