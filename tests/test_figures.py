"""The data of Figure 5 (api/figures.py) is the model's bounds, and `optimize --plot` draws it."""

import numpy as np
import pytest
from typer.testing import CliRunner

from prfaas_plan.api.figures import Figure5, figure5_data
from prfaas_plan.api.plan import plan
from prfaas_plan.cli import app
from prfaas_plan.core.throughput import Method, bounds, routing
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.report.plan_json import plan_json


@pytest.fixture(scope="module")
def case():
    p = plan(load_scenario(None, Catalog.default()))
    return p, figure5_data(p)


def test_split_panel_is_the_bounds_at_the_best_threshold(case):
    """(a): one split at a time through core.throughput.bounds, against the figure's arrays."""
    p, f = case
    sc, t, best = p.scenario, p.staged(), plan_json(p.result)["best"]
    r = routing(sc.workload.lengths, t.curves, [best["threshold_tokens"]], Method(sc.search.method))
    total = sc.local.instances
    assert isinstance(f, Figure5) and f.local_instances == total == 8
    assert list(f.split.n_p) == list(range(1, total))
    for i, n_p in enumerate(f.split.n_p):
        b = bounds(r, n_prfaas=best["n_prfaas"], n_p=int(n_p), n_d=total - int(n_p),
                   link_bytes_per_s=sc.link.usable_bytes_per_s, decode_rps_per_instance=t.decode_rps_per_instance)
        prefill = min(b.prfaas_compute[0], b.link[0], b.pd_prefill[0])
        assert f.split.prefill_rps[i] == pytest.approx(prefill, rel=1e-12)
        assert f.split.decode_rps[i] == pytest.approx(b.decode[0], rel=1e-12)
        assert f.split.lambda_max_rps[i] == pytest.approx(b.lambda_max[0], rel=1e-12)
    at_best = f.split.lambda_max_rps[list(f.split.n_p).index(best["n_p"])]
    assert at_best == pytest.approx(best["lambda_max_rps"], rel=1e-9)  # the marked split is the optimum
    assert (f.threshold_tokens, f.n_prfaas, f.n_p, f.n_d) == (best["threshold_tokens"], 4, 3, 5)
    assert f.lambda_max_rps == pytest.approx(3.30, abs=0.005)  # the paper's case study, as in the legend


def test_threshold_panel_is_the_bounds_at_the_best_split(case):
    """(b): the search's thresholds that split the traffic (0 < p < 1), the two prefill bounds at
    the best split, and the decode bound."""
    p, f = case
    sc, t, best = p.scenario, p.staged(), plan_json(p.result)["best"]
    r = p.searches[sc.search.method].routing
    b = bounds(r, n_prfaas=best["n_prfaas"], n_p=best["n_p"], n_d=best["n_d"],
               link_bytes_per_s=sc.link.usable_bytes_per_s, decode_rps_per_instance=t.decode_rps_per_instance)
    split = (r.p > 0) & (r.p < 1)
    assert 0 < split.sum() < len(r.t) and f.thresholds.thresholds_tokens.shape == (split.sum(),)
    np.testing.assert_array_equal(f.thresholds.thresholds_tokens, r.t[split])
    np.testing.assert_allclose(f.thresholds.prfaas_rps, np.minimum(b.prfaas_compute, b.link)[split], rtol=1e-12)
    np.testing.assert_allclose(f.thresholds.pd_prefill_rps, b.pd_prefill[split], rtol=1e-12)
    assert f.thresholds.decode_rps == pytest.approx(best["n_d"] * t.decode_rps_per_instance, rel=1e-12)


@pytest.mark.slow
def test_optimize_plot_writes_a_png(tmp_path):
    path = tmp_path / "F.png"
    res = CliRunner().invoke(app, ["optimize", "--plot", str(path)])
    assert res.exit_code == 0, res.output
    data = path.read_bytes()
    assert len(data) > 10_000 and data.startswith(b"\x89PNG\r\n\x1a\n")
