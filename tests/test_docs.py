"""Every command has help with an example and appears in the README; the README's set-up lines hold."""

import re

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.conftest import ROOT

runner = CliRunner()
README = (ROOT / "README.md").read_text()
COMMANDS = ["models", "hardware", "stacks", "model show", "model import", "kv-rate", "optimize", "size", "sweep",
            "latency", "degrade", "simulate", "replay", "perf", "calibrate", "thresholds", "report", "trace stats",
            "study",
            "study-report"]


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_command_has_help_with_example_and_is_in_readme(command):
    res = runner.invoke(app, [*command.split(), "--help"])
    assert res.exit_code == 0
    assert "Example: prfaas-plan" in res.stdout
    assert f"prfaas-plan {command}" in README


def test_readme_opens_with_the_two_setup_commands():
    block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert len(block) == 2
    assert block[0].endswith("prfaas-plan optimize")
    assert ".ci/run" in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert block[1] in ci  # CI runs the README's test command verbatim


def test_console_script_usage_errors_are_one_line():
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "prfaas_plan", "latency", "--rate", "abc"], capture_output=True,
                         text=True)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: Invalid value for '--rate': 'abc' is not a valid float. (see `python -m prfaas_plan latency --help`)"
    ] or (len(res.stderr.strip().splitlines()) == 1 and "--rate" in res.stderr)


def test_readme_library_snippet_runs(capsys):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    t, n_p, n_d, lam, binding = capsys.readouterr().out.split()
    assert float(t) > 19400 and binding == "link"  # a 10 Gbps link binds and moves t up
    assert int(n_p) + int(n_d) == 8 and float(lam) > 0


README_BLOCKS = re.findall(r"```\n\$ (prfaas-plan [^\n]*)\n(.*?)```", README, re.S)


@pytest.mark.slow
@pytest.mark.parametrize(("command", "body"), README_BLOCKS, ids=[c for c, _ in README_BLOCKS])
def test_readme_outputs_are_what_the_commands_print(command, body, tmp_path, monkeypatch):
    """Each README block is the first lines of its command's real output (a block may stop early;
    `# its last table` shows the output's last table)."""
    import shlex

    monkeypatch.chdir(ROOT)
    args = shlex.split(command.split("    #")[0])[1:]
    args = [str(tmp_path / a) if a.endswith(".png") else a for a in args]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    out = res.stdout
    if "its last table" in command:
        out = out[out.rindex("Under the TTFT SLO"):]
    want = body.splitlines()
    assert out.splitlines()[: len(want)] == want


@pytest.mark.slow
def test_readme_prose_numbers_are_what_the_commands_print():
    """Numbers the README quotes in its prose, from the outputs that give them (once the README said
    two-regions' fleet saved 18.6% where its cheapest homogeneous rival is 1.4% dearer, and 0.18
    staged requests per instance where optimize printed 0.0249)."""
    import json

    size = json.loads(runner.invoke(app, ["size", "two-regions", "--format", "json"]).stdout)
    best = size["best"]["cost"]["per_hour"]
    homs = sorted(p["cost"]["per_hour"] for p in size["homogeneous"].values() if isinstance(p, dict) and "cost" in p)
    assert f"${best:,.2f}/h: 18.6% below homogeneous H20 or H200" in README
    assert f"{1 - best / homs[0]:.1%} below the cheapest homogeneous fleet" in README
    assert f"(${homs[0]:,.0f}/h)" in README
    staged = json.loads(runner.invoke(app, ["optimize", "--format", "json"]).stdout)["decode"]
    assert f"stages {staged['staged_requests_per_instance']:.3f} requests per decode instance" in README
    assert f"`decode.staged_requests_per_instance` {staged['staged_requests_per_instance']:.3g}" in README


@pytest.mark.slow
def test_readme_busy_hour_numbers_are_what_trace_stats_prints():
    """The busy-hour paragraph quotes the Azure slice's mean and planning rates from `trace stats`."""
    out = runner.invoke(app, ["trace", "stats", str(ROOT / "tests/fixtures/traces/azure_code_2023_2000.csv")]).stdout
    mean = re.search(r"mean rate\s+(\S+) req/s", out).group(1)
    p50, p90 = re.search(r"planning rate\s+P50 (\S+), P90 (\S+),", out).groups()
    assert f"mean rate {mean} req/s,\nplanning rate P50 {p50}, P90 {p90} req/s" in README


def test_readme_llm_d_excerpt_is_what_deploy_writes(tmp_path, monkeypatch):
    """The README's llm-d files for the case study are `deploy`'s, byte for byte, and its numbers hold."""
    monkeypatch.chdir(tmp_path)
    excerpts = re.findall(r"<!-- deploy: (\S+) -->\n```yaml\n(.*?)```", README, re.S)
    assert excerpts, "the README shows no deploy excerpt"
    for name, body in excerpts:
        command = re.search(r"```bash\n(prfaas-plan deploy [^\n]*)\n```", README).group(1)
        res = runner.invoke(app, command.split()[1:])
        assert res.exit_code == 0, res.output
        assert (tmp_path / name).read_text() == body
        assert "nonCachedTokens: 19195" in body and "(t = 19,194.8)" in README
