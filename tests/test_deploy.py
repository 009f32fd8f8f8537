"""`deploy` and `import-deployment` (prfaas_plan/deploy, api/deploy*.py): every target's files for the
case study, two-regions and a `size -o` plan, valid under the targets' recorded definitions
(tests/deploy_check.py), and read back to a scenario whose `optimize` gives the same Lambda_max, t
and split within 1e-9; the validator rejects what it must; bad plans and bad files are one line."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan import __version__
from prfaas_plan.api.optimize import optimize
from prfaas_plan.cli import app
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from tests.conftest import ROOT
from tests.deploy_check import problems

runner = CliRunner()
TARGETS = ("llm-d", "sglang", "vllm", "dynamo")


def invoke(*args: str):
    return runner.invoke(app, list(args))


def best(ref: str) -> tuple[float, dict[str, tuple[float | None, int, int]], int]:
    """Lambda_max, each site's (t, N_p, N_d) and N_prfaas of `optimize`'s headline plan."""
    b = optimize(load_scenario(ref, Catalog.default()), ttft_slo=False).result.head.best
    return b.lambda_max_rps, {s.site: (s.threshold_tokens, s.n_p, s.n_d) for s in b.sites}, round(b.n_prfaas)


def same(a, b) -> None:
    assert a[0] == pytest.approx(b[0], rel=1e-9, abs=1e-9)
    assert a[2] == b[2]
    assert a[1].keys() == b[1].keys()
    for site, (t, n_p, n_d) in a[1].items():
        t2, n_p2, n_d2 = b[1][site]
        assert (n_p, n_d) == (n_p2, n_d2)
        assert t == pytest.approx(t2, rel=1e-9, abs=1e-9)


def deploy(tmp_path, ref: str, target: str):
    out = tmp_path / f"out-{target}"
    res = invoke("deploy", ref, "--target", target, "-o", str(out))
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def sized(tmp_path_factory):
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    assert invoke("size", "-o", str(path)).exit_code == 0
    return str(path)


def round_trip(tmp_path, ref: str, target: str) -> None:
    out = deploy(tmp_path, ref, target)
    assert problems(out) == []
    scenario = tmp_path / f"{target}.yaml"
    res = invoke("import-deployment", str(out), "-o", str(scenario), "--format", "json")
    assert res.exit_code == 0, res.output
    same(best(str(scenario)), best(ref))
    payload = json.loads(res.stdout)
    assert payload["best"]["lambda_max_rps"] == pytest.approx(best(ref)[0], rel=1e-9)
    # the deployed configuration is the plan (the router's threshold within a token of t)
    assert payload["deployed_over_best"] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_case_study_round_trip(tmp_path, target):
    round_trip(tmp_path, str(ROOT / "scenarios" / "paper-case-study.yaml"), target)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_two_regions_round_trip(tmp_path, target):
    round_trip(tmp_path, str(ROOT / "scenarios" / "two-regions.yaml"), target)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_size_plan_round_trip(tmp_path, sized, target):
    round_trip(tmp_path, sized, target)


def test_every_file_carries_its_provenance(tmp_path):
    for target in TARGETS:
        out = deploy(tmp_path, "two-regions", target)
        for path in out.glob("*.yaml"):
            head = path.read_text().split("\n", 5)
            assert __version__ in head[0] and head[1].startswith("# command: prfaas-plan deploy two-regions")
            assert "scenario: two-regions (two-regions.yaml)" in head[2] and "paper-table3" in head[3]
        readme = (out / "README.md").read_text()
        assert "## What" in readme and "cannot express" in readme and "fill in" in readme
        assert "Warnings about this plan" in readme and "prefill-east serves 2 sites" in readme


def test_llm_d_threshold_is_the_plans(tmp_path):
    out = deploy(tmp_path, "paper-case-study", "llm-d")
    values = yaml.safe_load((out / "local-inferencepool-values.yaml").read_text())
    epp = yaml.safe_load(values["inferenceExtension"]["pluginsCustomConfig"]["prfaas-pd.yaml"])
    decider = next(p for p in epp["plugins"] if p["type"] == "prefix-based-pd-decider")
    t = best("paper-case-study")[1]["local"][0]
    assert decider["parameters"]["nonCachedTokens"] == int(t) + 1 == 19195
    docs = list(yaml.safe_load_all((out / "model-servers.yaml").read_text()))
    replicas = {d["metadata"]["name"]: d["spec"]["replicas"] for d in docs if d["kind"] == "Deployment"}
    assert replicas == {"prfaas-prefill": 4, "local-decode": 5, "local-local-prefill": 3}


# --- the validator is not vacuous: what it must reject ---------------------------------------------------------

def _edit(path, change) -> None:
    docs = list(yaml.safe_load_all(path.read_text()))
    change(docs)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


@pytest.mark.parametrize(("target", "file", "change", "expected"), [
    ("llm-d", "model-servers.yaml",
     lambda d: d[1]["spec"]["template"]["spec"]["containers"][0]["args"].append("--no-such-flag"), "--no-such-flag"),
    ("llm-d", "model-servers.yaml",
     lambda d: d[2]["spec"]["template"]["spec"]["containers"][0]["args"].append("--vllm-portt=1"), "--vllm-portt"),
    ("llm-d", "model-servers.yaml", lambda d: d[1]["spec"].update(replicaz=3), "replicaz"),
    ("llm-d", "local-inferencepool-values.yaml", lambda d: d[0]["inferencePool"].update(modelServer={}),
     "modelServer"),
    ("llm-d", "local-inferencepool-values.yaml", lambda d: d[0]["inferenceExtension"]["pluginsCustomConfig"].update(
        {"prfaas-pd.yaml": "apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n"
                           "- type: pd-profile-handler\n  parameters: {threshold: 100}\n"}), "threshold"),
    ("sglang", "local.compose.yaml", lambda d: d[0]["services"]["local-decode-0"]["command"].append("--tp-sise"),
     "--tp-sise"),
    ("sglang", "local.compose.yaml", lambda d: d[0]["services"]["router-long"]["command"].append("--threshold"),
     "--threshold"),
    ("sglang", "local.compose.yaml", lambda d: d[0]["services"]["local-decode-0"].update(gpus_please=8), "gpus_please"),
    ("vllm", "local.compose.yaml", lambda d: d[0]["services"]["local-decode-0"]["command"].__setitem__(
        -1, '{"kv_connector":"NixlConnector","kv_role":"kv_consumer","kv_rol":"x"}'), "kv_rol"),
    ("dynamo", "local.dgd.yaml", lambda d: d[0]["spec"]["services"]["VllmDecodeWorker"].update(replica=2),
     "replica"),
    ("dynamo", "local.dgd.yaml", lambda d: d[0]["spec"]["services"]["VllmDecodeWorker"]["extraPodSpec"][
        "mainContainer"]["args"].append("--max-local-prefill-length"), "--max-local-prefill-length"),
])
def test_validator_rejects_an_unknown_key_or_flag(tmp_path, target, file, change, expected):
    out = deploy(tmp_path, "paper-case-study", target)
    assert problems(out) == []
    _edit(out / file, change)
    found = problems(out)
    assert found and any(expected in p for p in found), found


# --- bad plans and bad files: one line, exit 2 ------------------------------------------------------------------

def one_line(res) -> str:
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1, res.output
    return lines[0]


def test_a_plan_that_offloads_nothing_is_refused(tmp_path):
    res = invoke("deploy", "--set", "link.bandwidth=1Mbps", "--target", "llm-d", "-o", str(tmp_path / "o"))
    line = one_line(res)
    assert "offloads nothing" in line and "paper-case-study.yaml" in line
    assert not (tmp_path / "o").exists()


def test_unknown_target_is_one_line(tmp_path):
    assert "--target" in one_line(invoke("deploy", "--target", "k8s", "-o", str(tmp_path / "o")))


def test_a_site_without_decode_is_refused(tmp_path):
    out = deploy(tmp_path, "paper-case-study", "llm-d")
    _edit(out / "model-servers.yaml", lambda d: d.__delitem__(2))  # local-decode
    line = one_line(invoke("import-deployment", str(out)))
    assert "site local has no decode pool" in line and str(out) in line


def test_a_users_files_need_the_scenario_they_do_not_carry(tmp_path):
    out = deploy(tmp_path, "paper-case-study", "llm-d")
    _edit(out / "model-servers.yaml", lambda d: d.__delitem__(0))  # the plan block
    assert "--scenario" in one_line(invoke("import-deployment", str(out)))
    res = invoke("import-deployment", str(out), "--scenario", "paper-case-study", "-o", str(tmp_path / "s.yaml"))
    assert res.exit_code == 0 and "not the files'" in res.output
    same(best(str(tmp_path / "s.yaml")), best("paper-case-study"))


def test_a_users_plain_files(tmp_path):
    """Files without our annotations: roles from llm-d's label, the threshold from the EPP's decider."""
    out = deploy(tmp_path, "paper-case-study", "llm-d")

    def plain(docs):
        del docs[0]
        for d in docs:
            d["metadata"].pop("annotations")
            d["spec"]["template"]["metadata"].pop("annotations")
    _edit(out / "model-servers.yaml", plain)
    res = invoke("import-deployment", str(out), "--scenario", "paper-case-study", "--format", "json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["deployed"]["n_prfaas"] == 4 and got["deployed"]["sites"] == [
        {"site": "local", "threshold_tokens": 19194.0, "n_p": 0, "n_d": 8}]
    assert got["best"]["lambda_max_rps"] == pytest.approx(best("paper-case-study")[0], rel=1e-9)


@pytest.mark.parametrize(("text", "expected"), [
    ("a: [1, 2", "not YAML"),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {annotations: {prfaas-plan.io/role: decode}}\n"
     "spec: {replicas: -3, template: {}}\n", "spec.replicas"),
    ("apiVersion: apps/v1\nkind: Deployment\nspec: [1]\n", "documents[0].spec"),
])
def test_bad_deployment_files(tmp_path, text, expected):
    (tmp_path / "bad.yaml").write_text(text)
    line = one_line(invoke("import-deployment", str(tmp_path), "--scenario", "paper-case-study"))
    assert "bad.yaml" in line and expected in line


def test_an_empty_folder(tmp_path):
    assert "no deployment files" in one_line(invoke("import-deployment", str(tmp_path)))


def test_output_folder_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    assert "is a file" in one_line(invoke("deploy", "--target", "vllm", "-o", str(tmp_path / "f")))
    shutil.rmtree(tmp_path)


# --- a value of the wrong kind anywhere in the files: one line naming the file, the key path, the value ---------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Each target's files for the case study, written once (a test edits a copy)."""
    out = {}
    for target in TARGETS:
        path = tmp_path_factory.mktemp("gen") / target
        assert invoke("deploy", "--target", target, "-o", str(path)).exit_code == 0
        out[target] = path
    return out


def _plan_json(key, change):
    """An edit of a JSON plan block held at ``key`` of a mapping (a ConfigMap's data, a graph's annotations)."""
    def edit(holder):
        plan = json.loads(holder[key])
        change(plan)
        holder[key] = json.dumps(plan)
    return edit


def _epp(change):
    def edit(values):
        configs = values[0]["inferenceExtension"]["pluginsCustomConfig"]
        epp = yaml.safe_load(configs["prfaas-pd.yaml"])
        change(epp)
        configs["prfaas-pd.yaml"] = yaml.safe_dump(epp)
    return edit


DECODE_0 = "services.local-decode-0"
PLAN = "prfaas-plan.io/plan"
MUTATIONS = {  # bug class: (target, file, edit of the documents, key path named, message)
    "label not a string": ("sglang", "local.compose.yaml", lambda d: d[0]["services"]["local-decode-0"]["labels"]
                           .update({"prfaas-plan.io/site": True}), f"{DECODE_0}.labels.prfaas-plan.io/site",
                           "expected a non-empty string, got true"),
    "scenario entry null": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"]["scenario_data"][
        "clusters"].update(local=None), "scenario_data.clusters.local", "expected a mapping, got null"),
    "scenario entry in JSON": ("dynamo", "local.dgd.yaml", lambda d: _plan_json(PLAN, lambda p: p["scenario_data"]
                               .update(clusters=[]))(d[0]["metadata"]["annotations"]), "scenario_data.clusters",
                               "expected a mapping, got a list"),
    "scenario sites not a mapping": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"][
        "scenario_data"].update(sites=[]), "scenario_data.sites", "expected a mapping, got a list"),
    "scenario value NaN": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"]["scenario_data"][
        "search"]["threshold"].update(max=float("nan")), "scenario_data.search.threshold.max",
        "Input should be a finite number (got nan)"),
    "scenario profile falling": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"]["scenario_data"][
        "profiles"][0]["points"][0].update(prefill_s=10**7), "scenario_data.profiles[0]",
        "profile prefill times must not fall as the length grows, got [10000000.0, 1.5578, 5.0387, 22.3192]"),
    "scenario profile no curve": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"]["scenario_data"][
        "profiles"][0]["points"][3].update(prefill_s=10**4), "scenario_data.profiles[0]",
        "the curve through these prefill times ([0.6875, 1.5578, 5.0387, 10000.0]) falls to -4.13 s at 8,579 "
        "tokens: the times grow too unevenly for a prefill curve"),
    "plan site not a mapping": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"]["sites"].update(
        local="nan"), "sites.local", "expected a mapping, got 'nan'"),
    "plan threshold NaN": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"]["sites"]["local"].update(
        threshold_tokens=float("nan")), "sites.local.threshold_tokens",
        "expected a number of tokens from 0 to 1000000000 or null, got NaN"),
    "plan site missing": ("sglang", "local.compose.yaml", lambda d: d[0]["x-prfaas-plan"].update(sites={}),
                          "sites.local", "no router threshold for site local in the files and the plan block has "
                          "none for it"),
    "list not a list": ("sglang", "local.compose.yaml", lambda d: d[0]["services"]["local-decode-0"]["deploy"][
        "resources"]["reservations"].update(devices=True), f"{DECODE_0}.deploy.resources.reservations.devices",
        "expected a list, got true"),
    "pools that differ": ("sglang", "local.compose.yaml", lambda d: d[0]["services"]["local-decode-0"]["labels"]
                          .update({"prfaas-plan.io/hardware": "H100"}), f"{DECODE_0}.labels.prfaas-plan.io/hardware",
                          "the pools of site local differ in hardware (a site has one kind of instance): 'H100' "
                          "here, 'H20' at services.local-local-prefill-0.labels.prfaas-plan.io/hardware of "
                          "local.compose.yaml"),
    "fleet over the scenario's bound": ("sglang", "local.compose.yaml", lambda d: d[0]["services"][
        "local-decode-0"]["deploy"].update(replicas=20_000), f"{DECODE_0}.deploy.replicas (and 7 more pools of "
        "site local)", "Input should be less than or equal to 10000 (got 20007)"),
    "command that does not split": ("llm-d", "model-servers.yaml", lambda d: d[1]["spec"]["template"]["spec"][
        "containers"][0].update(args="vllm serve 'x"), "documents[1].spec.template.spec.containers[0].args",
        "expected a command line (no closing quotation), got \"vllm serve 'x\""),
    "count not ASCII digits": ("llm-d", "model-servers.yaml", lambda d: (
        d[1]["spec"]["template"]["spec"]["containers"][0].pop("resources"),  # the GPUs from the TP flag
        d[1]["spec"]["template"]["spec"]["containers"][0]["args"].__setitem__(4, "²")),
        "documents[1].spec.template.spec.containers[0].args (--tensor-parallel-size)",
        "expected a whole number of GPUs from 1 to 1024, got '²'"),
    "kind null": ("llm-d", "model-servers.yaml", lambda d: d[1].update(kind=None), "documents[1].kind",
                  "expected a non-empty string, got null"),
    "plan holder not a mapping": ("llm-d", "model-servers.yaml", lambda d: d[0].update(data="x"), "documents[0].data",
                                  "expected a mapping, got 'x'"),
    "key not a string": ("llm-d", "local-inferencepool-values.yaml", lambda d: d[0]["inferenceExtension"].update(
        pluginsConfigFile=["a"]), "inferenceExtension.pluginsConfigFile", "expected a non-empty string, got a list"),
    "EPP plugins not a list": ("llm-d", "local-inferencepool-values.yaml", _epp(lambda e: e.update(plugins=5)),
                               "inferenceExtension.pluginsCustomConfig.prfaas-pd.yaml.plugins",
                               "expected a list, got 5"),
    "role we do not write": ("dynamo", "local.dgd.yaml", lambda d: d[0]["spec"]["services"]["VllmDecodeWorker"][
        "annotations"].update({"prfaas-plan.io/role": "x"}),
        "spec.services.VllmDecodeWorker.annotations.prfaas-plan.io/role",
        "expected one of prefill-service, local-prefill, decode, router-long, router-short, frontend, got 'x'"),
    "kv_role not a string": ("vllm", "local.compose.yaml", lambda d: (
        d[0]["services"]["local-decode-0"]["labels"].pop("prfaas-plan.io/role"),
        d[0]["services"]["local-decode-0"]["command"].__setitem__(-1, '{"kv_role": ["x"]}')),
        f"{DECODE_0}.command (--kv-transfer-config kv_role)", "expected a non-empty string, got a list"),
}


@pytest.mark.parametrize("case", MUTATIONS)
def test_a_value_of_the_wrong_kind_is_named(tmp_path, generated, case):
    target, file, change, field, message = MUTATIONS[case]
    out = tmp_path / target
    shutil.copytree(generated[target], out)
    _edit(out / file, change)
    assert one_line(invoke("import-deployment", str(out))) == f"error: {out / file}: {field}: {message}"


def test_a_fleet_without_a_prefill_service_is_named(tmp_path, generated):
    out = tmp_path / "llm-d"
    shutil.copytree(generated["llm-d"], out)
    _edit(out / "model-servers.yaml", lambda d: d.__delitem__(1))  # prfaas-prefill
    assert one_line(invoke("import-deployment", str(out))) == (
        f"error: {out}: no prefill-service pool in the files: the prefill site prfaas needs instances")
