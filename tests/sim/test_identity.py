"""The simulator gives identical results for a seed (issue 13): every case of
``tests/sim/identity_cases.py`` (case study PrfaaS-PD / homogeneous / naive at two seeds, a heavier
load, a duration-bounded run, RTT + handoff, no pipelining, a thin link, both control loops, the
Mooncake trace in both cache modes, the two-regions topology, saturation runs, a replayed
bandwidth series with the static, rule and table policies) is rerun and every per-request array
(arrival, prefill start/end, KV transfer end, decode admission, completion, TTFT, path) and every
histogram, event count and summary compared, bit for bit, with what the event-per-step simulator
recorded (tests/sim/identity.json, written at 5ccb815)."""

from __future__ import annotations

import json

import pytest

from tests.sim.identity_cases import CASES, DATA, digest, run_case

REFERENCE = json.loads(DATA.read_text())


def test_every_case_is_recorded():
    assert sorted(REFERENCE) == sorted(CASES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_per_request_results_are_identical(name: str) -> None:
    want, got = REFERENCE[name], digest(run_case(name))
    assert sorted(got) == sorted(want)
    bad = {k: (got[k][1:], want[k][1:]) for k in want if got[k] != want[k]}
    assert not bad, bad  # (sum, length) now and recorded, for each array that differs
