"""The validated-spec cache: same answer as validation, never stale, optional."""

import os
import pickle
import shutil
import time

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.io.load import PACKAGED_CATALOG, load_gpu, load_model


def test_cached_equals_validated(tmp_path, monkeypatch):
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    first = load_model("internal-1t")
    assert len(list((tmp_path / "cache").iterdir())) == 1
    assert load_model("internal-1t") == first
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", "off")
    assert load_model("internal-1t") == first
    assert load_gpu("H200") == load_gpu("H200")


def test_an_edited_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "m.yaml"
    shutil.copy(PACKAGED_CATALOG / "models" / "Llama-3.1-8B.yaml", f)
    assert load_model(str(f)).vocab_size == 128256
    text = f.read_text().replace("vocab_size: 128256", "vocab_size: 1000")
    time.sleep(0.01)
    f.write_text(text)
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert load_model(str(f)).vocab_size == 1000


@pytest.mark.parametrize("make", ["file", "under-a-file"])
def test_an_unusable_cache_named_in_the_environment_is_an_error(tmp_path, monkeypatch, make):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    folder = blocker if make == "file" else blocker / "sub"
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(folder))
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 2 and res.stdout == ""
    reason = ("is a file, not a folder" if make == "file"
              else "cannot make the folder: a part of the path is not a folder")
    assert res.stderr == (f"error: $PRFAAS_PLAN_CACHE {folder}: {reason} "
                          "(set PRFAAS_PLAN_CACHE=off to run without a cache)\n")


def test_an_unusable_default_cache_is_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.delenv("PRFAAS_PLAN_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the default folder cannot be made
    assert load_model("internal-1t").name == "internal-1t"
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("value", ["off", "OFF", " Off "])
def test_off_in_any_case_turns_the_cache_off(tmp_path, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", value)
    assert load_model("internal-1t").name == "internal-1t"
    assert list(tmp_path.iterdir()) == []  # no folder named "OFF" made


# ----------------------------------------------------------------------------- whole scenarios

def _scenario_entries(folder):  # a catalog spec's entry is < 1 KB; a distribution's is named for its kind
    return [p for p in folder.iterdir() if p.stat().st_size > 10_000 and not p.name.startswith("lengths-")]


@pytest.mark.parametrize(("ref", "overrides"), [(None, []), ("two-regions", []), ("qwen35-b200-h200", []),
                                                (None, ["link.bandwidth=10Gbps", "search.method=exact"])])
def test_a_cached_scenario_is_the_one_a_cold_load_gives(tmp_path, monkeypatch, ref, overrides):
    from prfaas_plan.io import scenario
    from prfaas_plan.io.load import Catalog

    monkeypatch.setenv("PRFAAS_PLAN_CACHE", "off")
    cold = scenario.load_scenario(ref, Catalog.default(), overrides=overrides)
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    first = scenario.load_scenario(ref, Catalog.default(), overrides=overrides)
    assert len(_scenario_entries(tmp_path / "cache")) == 1

    def no_build(*args):
        raise AssertionError("built again")

    monkeypatch.setattr(scenario, "_validated", no_build)
    warm = scenario.load_scenario(ref, Catalog.default(), overrides=overrides)
    assert warm == cold == first and warm is not first
    assert pickle.dumps(warm) == pickle.dumps(first)  # every field, grids and all
    # a cold load's pickle may share objects a cached distribution's does not (a float of the spec):
    # its grids, compared bit for bit, are what equality does not see
    def sites(sc):
        return [sc.workload, *(s.workload for s in sc.topology.sites)] if sc.topology else [sc.workload]

    assert len(sites(warm)) == len(sites(cold))
    for wl, cold_wl in zip(sites(warm), sites(cold), strict=True):
        for name in ("edges", "masses", "nodes", "head_mass", "tail_mass"):
            assert getattr(wl.lengths._grid, name).tobytes() == getattr(cold_wl.lengths._grid, name).tobytes()


def _catalog(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(PACKAGED_CATALOG, root)
    return root


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # the catalog specs' cache goes by mtime


def test_what_a_scenario_reads_decides_a_hit(tmp_path, monkeypatch):
    """Editing the scenario, a catalog entry it names, a CSV it reads, adding a file that shadows
    a name, or another --set value: each is seen; the same inputs again are a hit."""
    from prfaas_plan.io import scenario
    from prfaas_plan.io.load import Catalog

    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    root = _catalog(tmp_path)
    catalog = Catalog((root,))
    path = root / "scenarios" / "paper-case-study.yaml"
    builds = []
    real = scenario._validated
    monkeypatch.setattr(scenario, "_validated", lambda *a: builds.append(1) or real(*a))

    def load(*overrides):
        return scenario.load_scenario(str(path), catalog, overrides=list(overrides))

    base = load()
    assert load() == base and len(builds) == 1
    assert load("link.bandwidth=10Gbps").link != base.link and len(builds) == 2
    assert load() == base and len(builds) == 3  # one entry per scenario file: the last options win
    assert load() == base and len(builds) == 3

    model_file = next(f for f in (root / "models").iterdir() if f"name: {base.model.name}\n" in f.read_text())
    _edit(model_file, f"vocab_size: {base.model.vocab_size}", "vocab_size: 1000")
    assert load().model.vocab_size == 1000 and len(builds) == 4

    gpu = base.prfaas.instance.gpu
    hw_file = next(f for f in (root / "hardware").iterdir() if f"name: {gpu.name}\n" in f.read_text())
    peak = f"{gpu.name} peak"
    _edit(hw_file, f"name: {gpu.name}\n", f"name: {gpu.name}\n# {peak}\n")  # a comment: same spec, a rebuild
    assert load() == load() and len(builds) == 5

    _edit(path, "decode_tokens_per_s: 40", "decode_tokens_per_s: 25")
    assert load().decode_tokens_per_s == 25 and len(builds) == 6

    csv = tmp_path / "lengths.csv"
    csv.write_text("length\n1000\n2000\n")
    empirical = f"workload.input={{kind: empirical, file: {csv}}}"
    assert load(empirical).workload.lengths.mean == 1500 and len(builds) == 7
    csv.write_text("length\n3000\n4000\n")  # same size, maybe the same mtime tick: read by content
    assert load(empirical).workload.lengths.mean == 3500 and len(builds) == 8
    assert load(empirical).workload.lengths.mean == 3500 and len(builds) == 8

    (root / "hardware" / "zz-copy.yaml").write_text(hw_file.read_text())
    load(empirical)
    assert len(builds) == 9  # a file added to a folder searched for a name


# a run of the CLI that reports, on stderr at exit, which of pydantic and scipy it imported
_PROBE = ("import atexit, sys; atexit.register(lambda: sys.stderr.write(repr(sorted({m.split('.')[0] for m in "
          "sys.modules} & {'pydantic', 'scipy'})))); sys.argv[0] = 'prfaas-plan'; "
          "from prfaas_plan.cli import main; main()")


@pytest.mark.slow
def test_a_warm_command_imports_neither_pydantic_nor_scipy_and_prints_the_same(tmp_path):
    """Run 1 validates and evaluates; what the distributions were asked is written back with the
    spec, so runs 2 and 3 need neither library and print the same bytes (timings aside)."""
    import json
    import subprocess
    import sys

    from tests.test_golden import _leaves, _timing

    env = {**os.environ, "PRFAAS_PLAN_CACHE": str(tmp_path / "cache")}
    cold = "['pydantic', 'scipy']"
    cases = ((["optimize", "--format", "json"], cold), (["optimize", "two-regions", "--format", "json"], cold),
             (["optimize"], "[]"))  # the table after the JSON: the same scenario, the same questions
    for args, first in cases:
        runs = [subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, capture_output=True, text=True,
                               check=True) for _ in range(3)]
        assert [r.stderr for r in runs] == [first, "[]", "[]"], args
        if "json" in args:
            first, *rest = ({k: v for k, v in _leaves(json.loads(r.stdout)) if not _timing(k)} for r in runs)
            assert all(r == first for r in rest)
        else:
            assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    env["PRFAAS_PLAN_CACHE"] = "off"
    off = subprocess.run([sys.executable, "-c", _PROBE, "optimize"], env=env, capture_output=True, text=True,
                         check=True)
    assert off.stdout == runs[0].stdout


def test_a_large_load_is_not_kept(tmp_path, monkeypatch):
    from prfaas_plan.io import cache

    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1000)
    assert cache.cached_load("test", "here", "k", lambda: b"x" * 2000) == b"x" * 2000
    assert list((tmp_path / "cache").iterdir()) == []
    assert cache.cached_load("test", "here", "k", lambda: b"small") == b"small"
    assert cache.cached_load("test", "here", "k", lambda: b"other") == b"small"


def test_a_remembered_answer_is_the_computed_one_bit_for_bit(monkeypatch):
    import numpy as np

    from prfaas_plan.core.lengths import continuous as C
    from prfaas_plan.core.lengths import parametric as P

    def answers(d):
        t = np.linspace(100.0, 140_000.0, 257)
        return [np.asarray(v).tobytes() for v in (
            d.tail_prob(t), d.mean_above(t), d.mean_below(19_400), d.quantile([0.1, 0.5, 0.99]),
            d.expect_above(np.sqrt, t), d.expect_below(np.square, 3_000.0))]

    laws = (P.TruncatedLogNormal.paper(), P.Gamma(shape=1.5, scale=9_000.0, lo=1.0, hi=2e5))
    asked, again = [answers(d) for d in laws], [answers(d) for d in laws]  # again: from the memo
    assert all(d._memo.cells > 0 for d in laws) and asked == again
    unpickled = [pickle.loads(pickle.dumps(d)) for d in laws]
    assert [answers(d) for d in unpickled] == asked and unpickled == list(laws)
    monkeypatch.setattr(C, "_MEMO_CELLS", 0)  # nothing remembered: every answer computed
    fresh = (P.TruncatedLogNormal.paper(), P.Gamma(shape=1.5, scale=9_000.0, lo=1.0, hi=2e5))
    assert [answers(d) for d in fresh] == asked and all(d._memo.cells == 0 for d in fresh)


@pytest.mark.slow
def test_a_distribution_outlives_an_edit_elsewhere_in_its_scenario(tmp_path):
    """A new --set value replaces the scenario's entry (pydantic again) but finds the workload's
    distribution, grid and answers, in its own entry: no scipy, and the very output of a run
    without a cache. A new mu is a new distribution, computed (scipy) and kept beside the first."""
    import subprocess
    import sys

    env = {**os.environ, "PRFAAS_PLAN_CACHE": str(tmp_path / "cache")}

    def run(*args, cache=env):
        r = subprocess.run([sys.executable, "-c", _PROBE, "optimize", *args], env=cache, capture_output=True,
                           text=True, check=True)
        return r.stdout, r.stderr

    assert run()[1] == "['pydantic', 'scipy']"
    out, libraries = run("--set", "link.bandwidth=40Gbps")
    assert libraries == "['pydantic']"
    assert out == run("--set", "link.bandwidth=40Gbps", cache={**env, "PRFAAS_PLAN_CACHE": "off"})[0]
    assert "40.0 Gbps usable link" in out
    moved, libraries = run("--set", "workload.input.mu=9.5")
    assert libraries == "['pydantic', 'scipy']" and moved != out
    assert len(list((tmp_path / "cache").glob("lengths-*.pickle"))) == 2
    assert run("--set", "workload.input.mu=9.5") == (moved, "[]")


def test_cached_values_keep_the_last_used_of_a_kind(tmp_path, monkeypatch):
    from prfaas_plan.io import cache

    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    builds = []

    def value(key):
        return cache.cached_value("test", key, lambda: builds.append(key) or f"value of {key}", keep=3)

    for key in "abcd":  # a is pruned when d comes
        assert value(key) == f"value of {key}"
        time.sleep(0.01)  # distinct modification times
    assert value("b") == "value of b" and builds == list("abcd")  # a hit marks b used
    time.sleep(0.01)
    assert value("e") == "value of e"  # c, now the least recently used, goes
    assert len(list((tmp_path / "cache").glob("test-*.pickle"))) == 3
    assert [value(k) for k in "bde"] == ["value of b", "value of d", "value of e"] and builds == list("abcde")
    assert value("a") == "value of a" and value("c") == "value of c" and builds == list("abcdeac")


def test_a_value_that_fails_to_build_is_not_kept(tmp_path, monkeypatch):
    from prfaas_plan.errors import SpecError
    from prfaas_plan.io import cache

    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))

    def fail():
        raise SpecError("sigma must be > 0", field="workload.input.sigma")

    with pytest.raises(SpecError):
        cache.cached_value("test", "k", fail)
    assert not list((tmp_path / "cache").glob("test-*"))
    assert cache.cached_value("test", "k", lambda: 5) == 5
