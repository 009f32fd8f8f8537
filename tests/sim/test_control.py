"""The scheduler's short-term control from the scenario YAML (`control:`), through the CLI."""

import json

from typer.testing import CliRunner

from prfaas_plan.cli import app

runner = CliRunner()


def simulate(*sets):
    args = ["simulate", "--requests", "3000", "--format", "json", "--set", "link.bandwidth=3Gbps"]
    for s in sets:
        args += ["--set", s]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["systems"]["prfaas"]


def test_busy_link_keeps_requests_near_t_local():
    off = simulate()
    on = simulate("control.max_link_utilization=0.2", "control.margin=1.0")
    assert off["kept_local"] == 0
    assert on["kept_local"] > 0
    assert on["link_utilization"] < off["link_utilization"]


def test_bad_control_value_exit_2():
    res = runner.invoke(app, ["simulate", "--requests", "100", "--set", "control.max_link_utilization=1.5"])
    assert res.exit_code == 2 and "control.max_link_utilization" in res.stderr
