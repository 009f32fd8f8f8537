"""Bad paths, files, fields and values through the CLI: one line on stderr naming the file or option,
the field and the value, exit code 2, no exception class name; and odd but valid paths just work."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.io.load import PACKAGED_CATALOG

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRACE = FIXTURES / "mooncake_small.jsonl"
HF_CONFIG = FIXTURES / "Jamba-1.5-Mini.json"
CASE = PACKAGED_CATALOG / "scenarios" / "paper-case-study.yaml"
EXCEPTION_NAME = re.compile(r"\w+(Error|Exception)\b|NoneType|Traceback|\bErrno\b")

runner = CliRunner()


def error_line(*args: str) -> str:
    """The command failed as a user error: exit 2, nothing on stdout, one clean line on stderr."""
    res = runner.invoke(app, list(args))
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert not EXCEPTION_NAME.search(lines[0]), lines[0]
    return lines[0]


def best_rate(*args: str) -> float:
    res = runner.invoke(app, ["optimize", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["best"]["lambda_max_rps"]


# ------------------------------------------------------------------------------------- output paths
# every output option, with what must still come after it; the later inputs are broken on purpose
# (a missing scenario / config / CSV): the output check runs first, before any input is read
OUTPUTS = {
    "optimize --plot": (["optimize", "missing-scenario.yaml", "--plot"], ".png"),
    "sweep --plot": (["sweep", "missing-scenario.yaml", "--set", "link.bandwidth=1Gbps..2Gbps:2", "--plot"], ".svg"),
    "simulate --plot": (["simulate", "missing-scenario.yaml", "--plot"], ".pdf"),
    "simulate --records": (["simulate", "missing-scenario.yaml", "--records"], ".csv"),
    "model import -o": (["model", "import", "missing-config.json", "-o"], ".yaml"),
    "model import --output": (["model", "import", "missing-config.json", "--output"], ".yaml"),
    "calibrate --output": (["calibrate", "missing.csv", "--output"], ".yaml"),
}


def _bad_path(tmp_path: Path, kind: str, suffix: str) -> tuple[Path, str]:
    if kind == "missing folder":
        path = tmp_path / "missing" / "dir" / f"x{suffix}"
        return path, f"folder {path.parent} does not exist"
    if kind == "a folder":
        path = tmp_path / f"out{suffix}"
        path.mkdir()
        return path, "is a folder, not a file"
    blocker = tmp_path / "plain-file"  # the parent is a file
    blocker.write_text("x")
    return blocker / f"x{suffix}", f"{blocker} is not a folder"


@pytest.mark.parametrize("kind", ["missing folder", "a folder", "parent is a file"])
@pytest.mark.parametrize("name", list(OUTPUTS))
def test_a_bad_output_path_is_one_line_before_any_work(tmp_path, monkeypatch, name, kind):
    monkeypatch.chdir(tmp_path)
    args, suffix = OUTPUTS[name]
    path, reason = _bad_path(tmp_path, kind, suffix)
    option = args[-1]
    option = "--output" if option == "-o" else option
    assert error_line(*args, str(path)) == f"error: {option} {path}: {reason}"
    assert not (tmp_path / "missing").exists()  # refused, not created


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_output_folder_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        line = error_line("model", "import", str(HF_CONFIG), "-o", str(locked / "x.yaml"))
    finally:
        locked.chmod(0o700)
    assert line == f"error: --output {locked / 'x.yaml'}: folder {locked} is not writable"


@pytest.mark.parametrize(("name", "got"), [("fig.foo", "unknown image type '.foo'"), ("fig", "no image suffix")])
def test_a_figure_needs_an_image_suffix(tmp_path, name, got):
    path = tmp_path / name
    line = error_line("optimize", "--plot", str(path))
    assert line.startswith(f"error: --plot {path}: {got} (use one of .png, .svg, ")
    assert ".pdf" in line and not path.exists()


def test_model_import_writes_where_told(tmp_path):
    out = tmp_path / "jamba.yaml"
    res = runner.invoke(app, ["model", "import", str(HF_CONFIG), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stderr == f"wrote {out}\n"
    assert yaml.safe_load(out.read_text())["num_hidden_layers"] == json.loads(HF_CONFIG.read_text())[
        "num_hidden_layers"]


# -------------------------------------------------------------------------------------- input files
def _bad_file(tmp_path: Path, kind: str, name: str) -> tuple[Path, str]:
    path = tmp_path / name
    if kind == "missing":
        return path, f"error: {path}: file not found"
    if kind == "a folder":
        path.mkdir()
        return path, f"error: {path}: is a folder, not a file"
    if kind == "empty":
        path.write_text("\n  \n")
        return path, f"error: {path}: the file is empty"
    path.write_bytes(b'{"a": 1}\n  \xff\n')  # not UTF-8: line 2, column 3, byte 11
    return path, f"error: {path}: line 2 column 3: not UTF-8 text: byte 0xff at byte offset 11"


# a file that cannot be read at all is named with the option or field that named it
PREFIX = {"--trace": "--trace: ", "lengths CSV": "--set workload.input.file: "}
READERS = {
    "scenario": (lambda p: ["optimize", str(p)], "x.yaml"),
    "--trace": (lambda p: ["optimize", "--trace", str(p)], "t.jsonl"),
    "lengths CSV": (lambda p: ["optimize", "--set", f"workload.input={{kind: empirical, file: {json.dumps(str(p))}}}"],
                    "l.csv"),
    "model YAML": (lambda p: ["model", "show", str(p)], "m.yaml"),
    "HF config (model show)": (lambda p: ["model", "show", str(p)], "c.json"),
    "HF config (model import)": (lambda p: ["model", "import", str(p)], "c.json"),
    "kv-rate model": (lambda p: ["kv-rate", str(p)], "m.yaml"),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["missing", "a folder", "empty", "not UTF-8"])
@pytest.mark.parametrize("reader", list(READERS))
def test_an_unreadable_input_file_is_one_line(tmp_path, reader, kind):
    make_args, name = READERS[reader]
    path, expected = _bad_file(tmp_path, kind, name)
    if kind in ("missing", "a folder"):
        expected = expected.replace("error: ", "error: " + PREFIX.get(reader, ""), 1)
    assert error_line(*make_args(path)) == expected


def test_calibrate_measurements_not_utf8(tmp_path):
    path, expected = _bad_file(tmp_path, "not UTF-8", "m.csv")
    assert error_line("calibrate", str(path)) == expected


# ----------------------------------------------------------------------------- odd but valid paths
@pytest.mark.slow
@pytest.mark.parametrize("name", ["it's.jsonl", "a b.jsonl", "a:b.jsonl", "a #b.jsonl", "ü 中.jsonl", 'q"x.jsonl',
                                  "{x}, [y].jsonl"])
def test_any_trace_path_works(tmp_path, name):
    plain = tmp_path / "plain.jsonl"
    odd = tmp_path / name
    shutil.copy(TRACE, plain)
    shutil.copy(TRACE, odd)
    expected = best_rate("--trace", str(plain))
    assert best_rate("--trace", str(odd)) == expected
    # the same file named in --set (quoted as YAML wants it) reads the same
    assert best_rate("--set", f"workload.input={{kind: trace, file: {json.dumps(str(odd))}}}",
                     "--set", "workload.output_tokens=null") == expected


def test_a_relative_file_from_an_option_is_relative_to_the_working_folder(tmp_path, monkeypatch):
    (tmp_path / "lengths.csv").write_text("4096,3\n65536,1\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["optimize", "--set", "workload.input={kind: empirical, file: lengths.csv}",
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["workload"]["mean_input_tokens"] == pytest.approx((3 * 4096 + 65536) / 4)


def test_a_relative_file_in_a_scenario_is_relative_to_the_scenario(tmp_path, monkeypatch):
    folder = tmp_path / "sc"
    folder.mkdir()
    (folder / "lengths.csv").write_text("8192\n")
    data = yaml.safe_load(CASE.read_text())
    data["workload"]["input"] = {"kind": "empirical", "file": "lengths.csv"}
    data.get("search", {}).pop("threshold", None)
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    (tmp_path / "lengths.csv").write_text("not, a, length\n1,2,3\n")  # a decoy in the working folder
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["optimize", str(folder / "s.yaml"), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["workload"]["mean_input_tokens"] == 8192


# ------------------------------------------------------------------------- fields, values, options
def _scenario(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load(CASE.read_text())
    edit(data)
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_unknown_hardware_in_a_scenario_names_file_and_field(tmp_path):
    path = _scenario(tmp_path, lambda d: d["clusters"]["prfaas"].update(hardware="H2000"))
    assert error_line("optimize", str(path)) == (
        f"error: {path}: clusters.prfaas.hardware: unknown hardware 'H2000'; did you mean 'H200'? "
        "(see `prfaas-plan hardware`)")


def test_unknown_names_from_set_name_the_option():
    assert error_line("optimize", "--set", "clusters.local.hardware=H2000") == (
        "error: --set clusters.local.hardware: unknown hardware 'H2000'; did you mean 'H200'? "
        "(see `prfaas-plan hardware`)")
    line = error_line("optimize", "--set", "model=Kimi-Linear-49B")
    assert line.startswith("error: --set model: unknown model 'Kimi-Linear-49B'")
    # a wrong section is the option's, not the file's
    assert error_line("optimize", "--set", "prfaas.hardware=H200") == "error: --set prfaas: unknown key 'prfaas'"


def test_unknown_names_from_arguments_and_options():
    # perf and calibrate through the CLI's fallback (cli/__init__.py), kv-rate and model show explicitly
    assert error_line("perf", "Nope-1B").startswith("error: MODEL: unknown model 'Nope-1B'")
    assert error_line("perf", "Llama-3.1-8B", "--hardware", "X9").startswith("error: --hardware: unknown hardware 'X9'")
    assert error_line("calibrate", str(FIXTURES / "missing.csv"), "--hardware", "X9").startswith(
        "error: --hardware: unknown hardware 'X9'")
    assert error_line("kv-rate", "Llama-3.1-8B", "--hardware", "B3000").startswith(
        "error: --hardware: unknown hardware 'B3000'; did you mean 'B300'?")
    assert error_line("model", "show", "Nope-1B").startswith("error: MODEL: unknown model 'Nope-1B'")
    assert error_line("optimize", "no-such-scenario").startswith("error: SCENARIO: unknown scenario 'no-such-scenario'")


@pytest.mark.parametrize(("setting", "expected"), [
    ("link.bandwidth=10Gbps", "error: --set link.bandwidth: given twice ('10Gbps', then '20Gbps')"),
    ("search.method=paper", "error: --method: would replace what --set search.method gave; give one"),
])
def test_a_value_given_twice_is_refused(setting, expected):
    second = ["--set", "link.bandwidth=20Gbps"] if setting.startswith("link") else ["--method", "exact"]
    assert error_line("optimize", "--set", setting, *second) == expected


def test_trace_then_set_inside_it():
    assert error_line("optimize", "--trace", str(TRACE), "--set", "workload.input.file=other.jsonl") == (
        "error: --set workload.input.file: would replace what --trace gave; give one")
    # a key the trace does not set is fine, and so is an output length in place of the trace's
    assert best_rate("--trace", str(TRACE), "--set", "workload.input.cache_capacity_gib=1") > 0
    assert best_rate("--trace", str(TRACE), "--set", "workload.output_tokens=512") > 0


def test_the_value_is_shown_once():
    line = error_line("optimize", "--set", "link.bandwidth=0")
    assert line.startswith("error: --set link.bandwidth: ") and line.count("0") == 1 and "(got" not in line


@pytest.mark.parametrize(("setting", "expected"), [
    ("workload.input.mu=", "error: --set workload.input.mu: Input should be a valid number (got null)"),
    ("link=5", "error: --set link: expected a mapping of keys (got 5)"),
    ("link.bandwidth.x=1", "error: --set link.bandwidth.x: link.bandwidth is a value ('100Gbps'), not a section"),
    ("profiles.0.model=x", "error: --set profiles.0.model: profiles is a value (a list), not a section"),
    ("clusters.prfaas.gpus_per_instance=true",
     "error: --set clusters.prfaas.gpus_per_instance: Input should be a valid integer, unable to parse string as an "
     "integer (got 'true')"),
])
def test_kinds_in_words_and_no_true_as_one(setting, expected):
    assert error_line("optimize", "--set", setting) == expected


def test_a_yaml_comment_in_set_is_not_dropped_silently():
    assert error_line("optimize", "--set", "name=case #2") == (
        "error: --set name: ' #' starts a YAML comment, so 'case #2' would read as 'case'; quote the value")


def test_method_into_a_scenario_whose_search_is_not_a_mapping(tmp_path):
    path = _scenario(tmp_path, lambda d: d.update(search=0))
    assert error_line("optimize", str(path), "--method", "exact") == (
        f"error: {path}: search: expected a mapping of keys (got 0)")


def test_a_scenario_of_comments_only(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("# nothing here\n")
    assert error_line("optimize", str(path)) == f"error: {path}: expected a mapping of keys, got null"


# ------------------------------------------------------------------------------- empirical lengths
@pytest.mark.parametrize(("text", "where", "message"), [
    ("100,abc\n", "line 1 column 2", "'abc' is not a count of requests (a number >= 0)"),
    ("length,count\n100,2\nabc,1\n", "line 3 column 1", "'abc' is not a token length (a number >= 1)"),
    ("100,1,7\n", "line 1", "expected `length` or `length,count`, got 3 columns: '100,1,7'"),
    ("# lengths\n\nnan\n", "line 3 column 1", "'nan' is not a token length (a number >= 1)"),
    ("0.5\n", "line 1 column 1", "'0.5' is not a token length (a number >= 1)"),
    ("100,-1\n", "line 1 column 2", "'-1' is not a count of requests (a number >= 0)"),
])
def test_a_bad_lengths_csv_names_line_and_column(tmp_path, text, where, message):
    path = tmp_path / "lengths.csv"
    path.write_text(text)
    assert error_line(*READERS["lengths CSV"][0](path)) == f"error: {path}: {where}: {message}"


@pytest.mark.parametrize(("text", "message"), [
    ("length,count\n# only a header\n", "no lengths: every line is blank, a comment or the header"),
    ("100,0\n200,0\n", "every count is 0: no requests"),
])
def test_a_lengths_csv_without_requests(tmp_path, text, message):
    path = tmp_path / "lengths.csv"
    path.write_text(text)
    assert error_line(*READERS["lengths CSV"][0](path)) == f"error: {path}: {message}"


def test_lengths_csv_header_and_trailing_comma(tmp_path):
    path = tmp_path / "lengths.csv"
    path.write_text("length,count\n4096,3,\n65536,1\n")
    res = runner.invoke(app, [*READERS["lengths CSV"][0](path), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["workload"]["mean_input_tokens"] == pytest.approx((3 * 4096 + 65536) / 4)


# --------------------------------------------------------------------------------------- catalogs
@pytest.mark.parametrize("kind", ["missing", "a file", "no catalog folders"])
def test_a_bad_catalog_folder_is_refused(tmp_path, monkeypatch, kind):
    path = tmp_path / "cat"
    reason = {"missing": "folder not found", "a file": "is a file, not a folder",
              "no catalog folders": "holds none of models/, hardware/, scenarios/, stacks/"}[kind]
    if kind == "a file":
        path.write_text("x")
    elif kind == "no catalog folders":
        (path / "hardwares").mkdir(parents=True)
    assert error_line("models", "--catalog", str(path)) == f"error: --catalog {path}: {reason}"
    monkeypatch.setenv("PRFAAS_PLAN_CATALOG", str(path))
    assert error_line("models") == f"error: $PRFAAS_PLAN_CATALOG {path}: {reason}"


def test_a_catalog_file_that_does_not_read_says_why(tmp_path):
    (tmp_path / "models").mkdir()
    bad = tmp_path / "models" / "Broken-1B.yaml"
    bad.write_text("name: [unclosed\n")
    line = error_line("model", "show", "Broken-1B", "--catalog", str(tmp_path))
    assert line.startswith(f"error: {bad}: line ") and "invalid YAML" in line


@pytest.mark.parametrize(("field", "value"), [("bf16_dense_tflops", "inf"), ("hbm_tb_per_s", ".nan"),
                                            ("price_per_gpu_hour", "-.inf")])
def test_a_datasheet_number_that_is_not_finite_is_refused(tmp_path, field, value):
    """A GPU YAML with inf or NaN for a number (which every prefill time would carry as NaN) is refused
    naming its file and field; the fuzz suite found "inf" read as a float."""
    (tmp_path / "hardware").mkdir()
    raw = yaml.safe_load((PACKAGED_CATALOG / "hardware" / "A100-80GB.yaml").read_text())
    path = tmp_path / "hardware" / "Odd-GPU.yaml"
    path.write_text(yaml.safe_dump(raw | {"name": "Odd-GPU"}).replace(f"{field}: {raw[field]}", f"{field}: {value}"))
    line = error_line("kv-rate", "MiniMax-M2.5", "--hardware", "Odd-GPU", "--catalog", str(tmp_path))
    assert line.startswith(f"error: {path}: {field}: ") and "finite" in line, line


def test_the_console_script_gives_one_line_for_a_usage_error(tmp_path):
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "prfaas_plan", "calibrate", str(tmp_path)], capture_output=True,
                         text=True, check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [f"error: Invalid value for 'measurements': File '{tmp_path}' is a directory. "
                                       "(see `python -m prfaas_plan calibrate --help`)"]


def test_a_kind_set_beside_the_files_fields_names_the_option_and_the_fix():
    """--set workload.input.kind=uniform keeps the file's mu and sigma: the error says which option
    made them wrong and how to replace the section, not only that the file has an unknown key."""
    line = error_line("optimize", "--set", "workload.input.kind=uniform")
    assert "workload.input.mu: unknown key 'mu'" in line
    assert "--set workload.input.kind" in line and "--set 'workload.input={...}'" in line
    assert best_rate("--set", "workload.input={kind: uniform, min: 128, max: 128K}") > 0


@pytest.mark.parametrize(("option", "field"), [
    ("model=/", "--set model"), ("clusters.local.hardware=/", "--set clusters.local.hardware"),
    ("clusters.prfaas.hardware=missing.yaml", "--set clusters.prfaas.hardware")])
def test_a_file_a_field_names_that_cannot_be_read_names_the_field(option, field):
    line = error_line("optimize", "--set", option)
    assert line.startswith(f"error: {field}: ") and ("is a folder" in line or "file not found" in line)


def test_a_scenario_naming_an_unreadable_model_file_names_the_scenario_and_field(tmp_path):
    raw = yaml.safe_load((PACKAGED_CATALOG / "scenarios" / "paper-case-study.yaml").read_text())
    raw["model"] = str(tmp_path)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert error_line("optimize", str(path)) == f"error: {path}: model: {tmp_path}: is a folder, not a file"


@pytest.mark.parametrize(("args", "line"), [
    # finite, yet beyond a float once in SI units, or below the smallest normal one (products round to 0)
    (["optimize", "--set", "link.bandwidth=1e308"],
     "error: --set link.bandwidth: '1e308' is beyond a float in SI units (bandwidth in Gbps above 1.44e+300)"),
    (["optimize", "--set", "link.bandwidth=5e-324Gbps"],
     "error: --set link.bandwidth: '5e-324Gbps' is below the smallest normal float in SI units (bandwidth in Gbps "
     "below 1.78e-316)"),
    (["optimize", "--set", "decode.t_decode=5e-324"],
     "error: --set decode.t_decode: '5e-324' is below the smallest normal float in SI units (time in s below "
     "2.23e-308)"),
    (["latency", "--load", "0.5", "--set", "link.usable_fraction=5e-324"],
     "error: --set link.usable_fraction: 5e-324 is below the smallest normal float, 2.23e-308 (its products round "
     "to 0)"),
    (["size", "--set", "clusters.prfaas.price_per_gpu_hour=5e-324"],
     "error: --set clusters.prfaas.price_per_gpu_hour: 5e-324 is below the smallest normal float, 2.23e-308 (its "
     "products round to 0)"),
    (["simulate", "--rate", "5e-324", "--requests", "100"],
     "error: --rate: '5e-324' is below the smallest normal float, 2.23e-308"),
    (["latency", "--rate", "5e-324"],  # read by the same parser as simulate's --rate
     "error: --rate: '5e-324' is below the smallest normal float, 2.23e-308"),
    # a law's fault of its parameters together is told at the one the option set
    (["optimize", "--set", "workload.input.sigma=1e300"],
     "error: --set workload.input.sigma: [128.0, 131072.0] holds no probability of log-normal(mu=9.9, sigma=1e+300)"),
    (["optimize", "--set", "workload.input.max=100"],
     "error: --set workload.input.max: min must be < max, got min=128.0, max=100.0"),
    # every request decodes at least one token, and no more than its context holds
    (["optimize", "--set", "workload.output_tokens=0.5"],
     "error: --set workload.output_tokens: Input should be greater than or equal to 1 (got 0.5)"),
    (["optimize", "--set", "workload.output_tokens=inf"],
     "error: --set workload.output_tokens: Input should be a finite number (got 'inf')"),
    (["size", "--set", "workload.output_tokens=1e300"],
     "error: --set workload.output_tokens: 1e+300 output tokens are beyond internal-1t's context of 262,144 tokens "
     "(max_position_embeddings)"),
    (["optimize", "--set", "workload.input.max=1e300"],
     "error: --set workload.input.max: the longest input, 1e+300 tokens, is beyond internal-1t's context of 262,144 "
     "tokens (max_position_embeddings)"),
])
def test_magnitudes_beyond_a_float_are_one_line(args, line):
    assert error_line(*args) == line


def test_a_sigma_narrower_than_a_float_and_an_rtt_of_1e300_s_run():
    """Finite inputs a float can hold, at its edges: the log-normal is its median; the run's link
    series merges windows (sim.stations.SERIES_WINDOWS) rather than one per second of the drain."""
    res = runner.invoke(app, ["optimize", "--format", "json", "--set", "workload.input.sigma=1e-300"])
    assert res.exit_code == 0 and res.stderr == ""
    assert json.loads(res.stdout)["best"]["lambda_max_rps"] > 0
    res = runner.invoke(app, ["simulate", "--requests", "500", "--format", "json", "--set", "link.rtt=1e300"])
    assert res.exit_code == 0 and res.stderr == "", res.output
    assert json.loads(res.stdout)["ttft_mean_s"] > 1e299


def test_a_demand_beyond_a_float_is_infeasible_in_one_line():
    res = runner.invoke(app, ["size", "--demand", "1e300rps"])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr == "error: size: no candidate serves 1.25e+300 req/s (demand 1e+300 / headroom 0.8)\n"


@pytest.mark.parametrize("args", [["kv-rate", "/\r.yaml"], ["kv-rate", "Qwen3-32B", "--stack", "/\r\nx"],
                                  ["optimize", "no\tsuch\n"]])
def test_a_control_character_in_a_value_stays_on_the_error_line(args):
    """An error naming a user's value holds it escaped: one line whatever the value holds."""
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("error: ")
    assert "\\r" in res.stderr or "\\t" in res.stderr


@pytest.mark.parametrize(("args", "named"), [
    (["kv-rate", "Qwen3-32B", "--stack", "/\x00"], "--stack: the value '/\\x00'"),
    (["optimize", "--trace", "a/\x00.jsonl"], "--trace: the value 'a/\\x00.jsonl'"),
    (["optimize", "--catalog=/x\x00"], "--catalog: the value '/x\\x00'"),
    (["optimize", "/tmp/x\x00.yaml"], "the argument '/tmp/x\\x00.yaml'")])
def test_a_nul_byte_in_an_argument_is_one_line(args, named):
    """No path, name or number holds a NUL byte (the OS refuses such a path with a ValueError
    click does not catch): one line naming the option and the value, exit 2. Found by the fuzz
    suite at PRFAAS_FUZZ_SCALE=3 (--stack '/\\x00')."""
    from tests.fuzz.harness import run

    r = run(args)
    assert r.code == 2 and r.stdout == ""
    assert r.stderr == f"error: {named} holds a NUL byte, which no path, name or number can\n"


def test_a_nul_byte_in_a_file_name_of_a_scenario_is_one_line(tmp_path):
    """A YAML string may escape a NUL ("\\0"); as a file name it would reach the OS as a ValueError:
    the schema refuses it, naming the file, the field and the value."""
    data = yaml.safe_load((PACKAGED_CATALOG / "scenarios" / "two-regions.yaml").read_text())
    data["workload"]["input"] = {"kind": "trace", "file": "x\x00y.jsonl"}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(app, ["optimize", str(path)])
    assert r.exit_code == 2
    assert r.output.strip().endswith(f"{path}: workload.input.file: 'x\\x00y.jsonl' holds a NUL byte")


@pytest.mark.parametrize(("ref", "shown"), [("./nope.yaml", "nope.yaml"), ("nope/", "nope"), ("0/", "0")])
def test_a_missing_stack_file_is_placed_at_the_option(ref, shown):
    """A stack file that is not there, written with "./" or a trailing "/" (which the path reads
    without), is named with ``--stack``. Found by the fuzz suite at PRFAAS_FUZZ_SCALE=5 (``0/``)."""
    r = CliRunner().invoke(app, ["kv-rate", "Qwen3-32B", "--lengths", "1K", "--stack", ref])
    assert r.exit_code == 2 and r.output.strip() == f"error: {shown}: --stack: file not found"
