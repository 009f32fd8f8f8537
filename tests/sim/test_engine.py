"""The event engine, the textbook stations, and the DES held against the analytic queueing model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from prfaas_plan.core.queueing import erlang_c, mg1_wait, mmc_wait, utilisation
from prfaas_plan.sim.engine import Engine
from prfaas_plan.sim.stations import SharedLink, gamma_arrivals, poisson_arrivals
from tests.sim.stations_ref import FifoServers, feed_arrivals

# ---------------------------------------------------------------- engine


def test_events_run_in_time_then_priority_then_scheduling_order():
    engine = Engine()
    log = []
    engine.schedule(2.0, log.append, "t2")
    engine.schedule(1.0, log.append, "t1-first")
    engine.schedule(1.0, log.append, "t1-second")
    engine.schedule(1.0, log.append, "t1-urgent", priority=-1)
    engine.schedule_at(0.5, log.append, "t0.5")
    assert engine.run() == 5
    assert log == ["t0.5", "t1-urgent", "t1-first", "t1-second", "t2"]
    assert engine.now == 2.0
    assert engine.events_processed == 5


def test_callbacks_see_their_own_time_and_schedule_relative_to_it():
    engine = Engine(start=10.0)
    seen = []

    def tick(k):
        seen.append((k, engine.now))
        if k < 3:
            engine.schedule(0.5, tick, k + 1)

    engine.schedule(1.0, tick, 0)
    engine.run()
    assert seen == [(0, 11.0), (1, 11.5), (2, 12.0), (3, 12.5)]


def test_run_until_is_inclusive_and_advances_the_clock():
    engine = Engine()
    log = []
    for t in (1.0, 2.0, 3.0):
        engine.schedule_at(t, log.append, t)
    assert engine.run(until=2.0) == 2
    assert log == [1.0, 2.0]
    assert engine.now == 2.0
    assert engine.run(until=2.5) == 0
    assert engine.now == 2.5  # no event, but the clock reaches the horizon
    assert engine.run(until=10.0) == 1
    assert engine.now == 10.0  # heap ran dry, clock still moves to the horizon
    assert engine.events_processed == 3
    with pytest.raises(ValueError):
        engine.run(until=5.0)


def test_run_max_events():
    engine = Engine()
    for t in range(10):
        engine.schedule_at(float(t), lambda: None)
    assert engine.run(max_events=4) == 4
    assert engine.now == 3.0
    assert engine.run(max_events=0) == 0
    assert engine.run() == 6
    assert engine.events_processed == 10


def test_cancel_and_peek():
    engine = Engine()
    log = []
    handle = engine.schedule(1.0, log.append, "cancelled")
    engine.schedule(2.0, log.append, "kept")
    engine.cancel(handle)
    engine.cancel(handle)  # idempotent
    assert engine.peek() == 2.0
    assert engine.run() == 1
    assert log == ["kept"]
    assert engine.peek() == math.inf


def test_scheduling_in_the_past_or_with_nan_is_refused():
    engine = Engine(start=5.0)
    with pytest.raises(ValueError):
        engine.schedule(-1.0, print)
    with pytest.raises(ValueError):
        engine.schedule(float("nan"), print)
    with pytest.raises(ValueError):
        engine.schedule_at(4.0, print)


def test_engines_do_not_share_state():
    a, b = Engine(), Engine()
    log = []
    a.schedule(1.0, log.append, "a")
    b.schedule(1.0, log.append, "b")
    b.schedule(1.0, log.append, "b2")
    assert a.run() == 1
    assert log == ["a"]
    assert b.pending == 2
    assert b.run() == 2
    assert a.events_processed == 1
    assert b.events_processed == 2


# ---------------------------------------------------------------- arrival processes


def test_poisson_arrivals_rate_and_shape():
    times = poisson_arrivals(np.random.default_rng(1), 4.0, 100_000)
    assert times.shape == (100_000,)
    assert np.all(np.diff(times) >= 0) and times[0] > 0
    gaps = np.diff(times)
    assert gaps.mean() == pytest.approx(0.25, rel=0.02)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.02)


@pytest.mark.parametrize("cv", [0.5, 1.0, 3.0])
def test_gamma_arrivals_rate_and_cv(cv):
    times = gamma_arrivals(np.random.default_rng(2), 2.0, cv, 200_000, start=100.0)
    gaps = np.diff(np.concatenate([[100.0], times]))
    assert gaps.mean() == pytest.approx(0.5, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(cv, rel=0.03)


def test_gamma_arrivals_cv_zero_is_a_clock():
    times = gamma_arrivals(np.random.default_rng(3), 4.0, 0.0, 5)
    np.testing.assert_allclose(times, [0.25, 0.5, 0.75, 1.0, 1.25])


def test_arrivals_are_reproducible_from_the_generator():
    a = poisson_arrivals(np.random.default_rng(7), 1.0, 10)
    b = poisson_arrivals(np.random.default_rng(7), 1.0, 10)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- FIFO servers by hand


def test_fifo_servers_by_hand():
    engine = Engine()
    done = []
    station = FifoServers(engine, 2, on_done=done.append)
    # jobs: (arrival, service): A(0, 3) B(0, 1) C(0.5, 2) D(0.5, 1)
    feed_arrivals(engine, [0.0, 0.0, 0.5, 0.5], lambda i: station.submit("ABCD"[i], [3.0, 1.0, 2.0, 1.0][i]))
    engine.run()
    assert station.started_at == {"A": 0.0, "B": 0.0, "C": 1.0, "D": 3.0}
    assert station.completed_at == {"B": 1.0, "A": 3.0, "C": 3.0, "D": 4.0}
    assert done == ["B", "A", "C", "D"]
    np.testing.assert_allclose(station.waits(), [0.0, 0.0, 0.5, 2.5])
    assert station.wait("D") == 2.5
    # queue: 2 waiting on [0.5, 1), 1 on [1, 3); busy servers: 2 on [0, 3), 1 on [3, 4)
    assert station.mean_queue_length() == pytest.approx((0.5 * 2 + 2.0 * 1) / 4.0, rel=1e-12)
    assert station.utilisation() == pytest.approx((3.0 * 2 + 1.0) / (4.0 * 2), rel=1e-12)


# ---------------------------------------------------------------- shared link by hand

BW = 1e9  # bytes/s
SIZE = 5e8  # bytes


def test_two_equal_transfers_started_together_finish_together():
    engine = Engine()
    done = []
    link = SharedLink(engine, BW, on_done=lambda j: done.append((j, engine.now)))
    link.submit("a", SIZE)
    link.submit("b", SIZE)
    engine.run()
    assert done == [("a", 2 * SIZE / BW), ("b", 2 * SIZE / BW)]
    assert engine.events_processed == 1  # one completion event for both
    assert link.bytes_carried == pytest.approx(2 * SIZE, rel=1e-12)
    assert link.utilisation() == pytest.approx(1.0, rel=1e-12)


def test_transfer_joining_halfway():
    # a starts at 0; b (same size) joins when a is half done, at SIZE/(2 BW) = 0.25 s.
    # a's remaining SIZE/2 goes at BW/2: a ends at 0.25 + 0.5 = 0.75 s. b then has SIZE/2 left
    # at full rate: it ends at 0.75 + 0.25 = 1.0 s (= 2 SIZE / BW, work conservation).
    engine = Engine()
    link = SharedLink(engine, BW)
    link.submit("a", SIZE)
    engine.schedule_at(SIZE / (2 * BW), link.submit, "b", SIZE)
    engine.run()
    assert link.completed_at["a"] == pytest.approx(0.75, rel=1e-12)
    assert link.completed_at["b"] == pytest.approx(1.0, rel=1e-12)


def test_unequal_transfers_and_idle_gap_in_the_utilisation_series():
    # a = 1e9 B and b = 2.5e8 B at t = 0 share 1e9 B/s: b ends at 0.5 s (a has 2.5e8 B by then),
    # a ends at 0.5 + 0.75 = 1.25 s. Idle until c = 5e8 B at 2.0 s, which ends at 2.5 s.
    engine = Engine()
    link = SharedLink(engine, BW, window_s=0.5)
    link.submit("a", 1e9)
    link.submit("b", 2.5e8)
    engine.schedule_at(2.0, link.submit, "c", 5e8)
    engine.run(until=3.0)
    assert link.completed_at == {"b": pytest.approx(0.5), "a": pytest.approx(1.25), "c": pytest.approx(2.5)}
    assert link.busy_time == pytest.approx(1.75, rel=1e-12)
    assert link.bytes_carried == pytest.approx(1.75e9, rel=1e-12)
    assert link.utilisation() == pytest.approx(1.75 / 3.0, rel=1e-12)
    starts, util = link.utilisation_series()
    np.testing.assert_allclose(starts, [0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    np.testing.assert_allclose(util, [1.0, 1.0, 0.5, 0.0, 1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize(("until", "k"), [(4.0, 2), (3.0e6, 15), (1e300, None)])
def test_a_series_longer_than_its_bound_merges_windows_and_keeps_the_bytes(monkeypatch, until, k):
    """The same transfers as above, the run going on to ``until`` with at most 4 windows (k the
    windows merged into one; None: beyond an int64, every byte in the first): bytes are kept."""
    from prfaas_plan.sim import stations

    monkeypatch.setattr(stations, "SERIES_WINDOWS", 4)
    engine = Engine()
    link = SharedLink(engine, BW, window_s=0.5)
    link.submit("a", 1e9)
    link.submit("b", 2.5e8)
    engine.schedule_at(2.0, link.submit, "c", 5e8)
    engine.schedule_at(until, lambda: None)
    engine.run()
    starts, util = link.utilisation_series()
    assert len(starts) == len(util) <= 4 and np.all(np.isfinite(util)) and np.all(np.isfinite(starts))
    window = starts[1] - starts[0]
    assert util.sum() * BW * window == pytest.approx(1.75e9, rel=1e-12)
    if k == 2:  # 8 windows of 0.5 s -> 4 of 1 s: [1, 0.5], [0, 1], [0, 0], [0, 0] averaged
        np.testing.assert_allclose(starts, [0.0, 1.0, 2.0, 3.0])
        np.testing.assert_allclose(util, [1.0, 0.25, 0.5, 0.0], atol=1e-12)
    elif k is not None:
        assert window == pytest.approx(0.5 * math.ceil(until / 0.5 / 4), rel=1e-12)
    else:
        assert util[0] > 0 and not util[1:].any()


def test_zero_byte_transfer_completes_now():
    engine = Engine(start=1.0)
    link = SharedLink(engine, BW)
    link.submit("empty", 0.0)
    engine.run()
    assert link.completed_at == {"empty": 1.0}


def test_bad_station_input():
    engine = Engine()
    with pytest.raises(ValueError):
        FifoServers(engine, 0)
    with pytest.raises(ValueError):
        SharedLink(engine, 0.0)
    with pytest.raises(ValueError):
        FifoServers(engine, 1).submit(0, -1.0)
    with pytest.raises(ValueError):
        SharedLink(engine, BW).submit(0, float("nan"))
    with pytest.raises(ValueError):
        SharedLink(engine, BW).utilisation_series()


# ---------------------------------------------------------------- DES vs analytic (Ciw style)

N_REPLICATIONS = 20
N_CUSTOMERS = 20_000
WARM_UP = 2_000  # customers discarded at the start of each replication (the queue starts empty)


def confidence_interval(samples, level=0.95):
    """Two-sided t-interval for the mean of independent replication means."""
    samples = np.asarray(samples, dtype=float)
    half = stats.t.ppf(0.5 + level / 2, len(samples) - 1) * samples.std(ddof=1) / math.sqrt(len(samples))
    return samples.mean() - half, samples.mean() + half


def replicate_fifo(seed, lam, n_servers, draw_service):
    """Per replication: (mean wait, fraction that waited, busy fraction) after warm-up."""
    out = []
    for child in np.random.SeedSequence(seed).spawn(N_REPLICATIONS):
        rng = np.random.default_rng(child)
        arrivals = poisson_arrivals(rng, lam, N_CUSTOMERS)
        service = draw_service(rng, N_CUSTOMERS).tolist()
        engine = Engine()
        station = FifoServers(engine, n_servers)
        feed_arrivals(engine, arrivals, lambda i, st=station, s=service: st.submit(i, s[i]))
        engine.run()
        waits = station.waits()[WARM_UP:]
        out.append((waits.mean(), np.mean(waits > 0), station.utilisation()))
    return np.array(out)


def assert_inside(analytic, samples, what, max_rel_half_width):
    lo, hi = confidence_interval(samples)
    assert lo <= analytic <= hi, f"{what}: analytic {analytic:.5g} outside 95% CI [{lo:.5g}, {hi:.5g}]"
    # a test that passes only because the interval is huge proves nothing
    assert (hi - lo) / 2 <= max_rel_half_width * analytic, f"{what}: CI too wide [{lo:.5g}, {hi:.5g}]"


@pytest.mark.validation
def test_mm1_mean_wait_inside_ci():
    lam, mean_s = 0.7, 1.0
    reps = replicate_fifo(20260101, lam, 1, lambda rng, n: rng.exponential(mean_s, n))
    assert_inside(mmc_wait(lam, mean_s, 1), reps[:, 0], "M/M/1 Wq", 0.05)
    assert_inside(erlang_c(1, lam * mean_s), reps[:, 1], "M/M/1 P(wait)", 0.02)


@pytest.mark.validation
def test_md1_pollaczek_khinchine_inside_ci():
    lam, d = 0.7, 1.0
    reps = replicate_fifo(20260102, lam, 1, lambda rng, n: np.full(n, d))
    assert_inside(mg1_wait(lam, d, d * d), reps[:, 0], "M/D/1 Wq", 0.05)


@pytest.mark.validation
def test_mmc_mean_wait_and_erlang_c_inside_ci():
    lam, mean_s, c = 3.0, 1.0, 4
    reps = replicate_fifo(20260103, lam, c, lambda rng, n: rng.exponential(mean_s, n))
    assert_inside(mmc_wait(lam, mean_s, c), reps[:, 0], "M/M/4 Wq", 0.05)
    assert_inside(erlang_c(c, lam * mean_s), reps[:, 1], "M/M/4 P(wait)", 0.02)
    assert_inside(utilisation(lam, mean_s, c), reps[:, 2], "M/M/4 utilisation", 0.01)


@pytest.mark.validation
@pytest.mark.parametrize(("sizes", "seed"), [("exponential", 20260104), ("deterministic", 20260105)])
def test_processor_sharing_link_sojourn_inside_ci(sizes, seed):
    # M/G/1-PS: mean sojourn E[T] = E[S] / (1 - rho) whatever the size distribution (insensitivity).
    # Unlike FIFO, a PS sojourn depends on *later* arrivals, so the last jobs of a finite arrival
    # stream finish too early: discard a cool-down tail as well as the warm-up.
    lam, mean_bytes, rho = 0.6, 1e8, 0.6
    bandwidth = lam * mean_bytes / rho
    n_jobs, means = 12_000, []
    for child in np.random.SeedSequence(seed).spawn(N_REPLICATIONS):
        rng = np.random.default_rng(child)
        arrivals = poisson_arrivals(rng, lam, n_jobs)
        exponential = sizes == "exponential"
        size = rng.exponential(mean_bytes, n_jobs).tolist() if exponential else [mean_bytes] * n_jobs
        engine = Engine()
        link = SharedLink(engine, bandwidth)
        feed_arrivals(engine, arrivals, lambda i, ln=link, s=size: ln.submit(i, s[i]))
        engine.run()
        sojourn = [link.completed_at[i] - link.started_at[i] for i in range(WARM_UP, n_jobs - WARM_UP)]
        means.append(np.mean(sojourn))
    assert_inside(mean_bytes / bandwidth / (1 - rho), means, f"M/{sizes[0].upper()}/1-PS sojourn", 0.05)


def test_replications_are_reproducible():
    first = replicate_fifo_small(5)
    second = replicate_fifo_small(5)
    np.testing.assert_array_equal(first, second)


def replicate_fifo_small(seed):
    rng = np.random.default_rng(seed)
    arrivals = poisson_arrivals(rng, 3.0, 500)
    service = rng.exponential(1.0, 500).tolist()
    engine = Engine()
    station = FifoServers(engine, 4)
    feed_arrivals(engine, arrivals, lambda i: station.submit(i, service[i]))
    engine.run()
    return station.waits()
