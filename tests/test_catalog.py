"""The shipped catalog (models/, hardware/) loads, and the catalog commands work and fail cleanly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.io.load import Catalog, load_gpu, load_model

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILES = sorted((ROOT / "models").glob("*.yaml"))
HARDWARE_FILES = sorted(p for p in (ROOT / "hardware").glob("*.yaml") if "overlay" not in yaml.safe_load(p.read_text()))

EXPECTED_MODELS = {
    "internal-1t", "Kimi-Linear-48B-A3B", "MiMo-V2-Flash", "Qwen3.5-397B-A17B", "Ring-2.5-1T", "MiniMax-M2.5",
    "Qwen3-235B-A22B", "DeepSeek-V3", "DeepSeek-V3.2", "Kimi-K2-Instruct", "Llama-3.1-8B", "Llama-3.1-70B",
    "Qwen3-32B", "gpt-oss-120b", "NVIDIA-Nemotron-3-Nano-30B-A3B",
}
EXPECTED_HARDWARE = {"H100", "H200", "H20", "B200", "B300", "GB300", "A100-80GB", "L40S", "MI300X", "MI355X"}

runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_catalog_holds_the_expected_entries() -> None:
    assert {p.stem for p in MODEL_FILES} >= EXPECTED_MODELS
    assert {p.stem for p in HARDWARE_FILES} >= EXPECTED_HARDWARE


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_model_file_loads_and_is_named_as_its_file(path: Path) -> None:
    m = load_model(str(path))
    assert m.name == path.stem
    assert m.source
    assert m.num_hidden_layers == sum(g.count for g in m.layers)
    assert 0 < m.params_active <= m.params_total
    assert load_model(path.stem).name == path.stem  # and by name through the packaged catalog


@pytest.mark.parametrize("path", HARDWARE_FILES, ids=lambda p: p.stem)
def test_hardware_file_loads_and_is_named_as_its_file(path: Path) -> None:
    g = load_gpu(str(path))
    assert g.name == path.stem
    assert g.source
    assert load_gpu(path.stem).name == path.stem
    if g.fp8_flops is not None:  # dense FP8 is twice dense BF16 on every GPU here (L40S: 733 vs 362)
        assert g.fp8_flops == pytest.approx(2 * g.bf16_flops, rel=0.02)


def test_hardware_special_cases() -> None:
    assert load_gpu("A100-80GB").fp8_flops is None  # no FP8 on Ampere
    l40s = load_gpu("L40S")
    assert l40s.scaleup_bytes_per_s == pytest.approx(32e9)  # PCIe Gen4 x16, 64 GB/s bidirectional
    assert load_gpu("H100").scaleup_bytes_per_s == pytest.approx(450e9)  # NVLink 4, 900 bidirectional


def test_catalog_entries_are_unique_by_name() -> None:
    names = [yaml.safe_load(p.read_text())["name"].lower() for p in MODEL_FILES]
    assert len(names) == len(set(names))
    assert set(Catalog.default().entries("models")) >= {n.lower() for n in EXPECTED_MODELS}


# ---------------------------------------------------------------------------- CLI, happy paths


def test_models_command() -> None:
    result = invoke("models")
    assert result.exit_code == 0, result.stderr
    assert "Ring-2.5-1T" in result.stdout
    data = json.loads(invoke("models", "--format", "json").stdout)
    assert {r["name"] for r in data["models"]} >= EXPECTED_MODELS
    assert invoke("models", "--format", "csv").stdout.startswith("name,")


def test_hardware_command() -> None:
    result = invoke("hardware")
    assert result.exit_code == 0, result.stderr
    data = json.loads(invoke("hardware", "--format", "json").stdout)
    assert {r["name"] for r in data["hardware"]} >= EXPECTED_HARDWARE


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED_MODELS))
def test_model_show(name: str) -> None:
    table = invoke("model", "show", name)
    assert table.exit_code == 0, table.stderr
    result = invoke("model", "show", name, "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert {"name", "kv_bytes_per_token", "swa_bytes_per_token", "swa_window_tokens", "state_bytes",
            "layers"} <= set(data)
    assert data["name"] == name
    assert sum(g["count"] for g in data["layers"]) == data["num_hidden_layers"]


def test_model_show_ring_reports_the_saving() -> None:
    data = json.loads(invoke("model", "show", "Ring-2.5-1T", "--format", "json").stdout)
    assert data["saving"]["total_factor"] == pytest.approx(28.44, abs=0.01)
    assert data["state_bytes"] == 293_601_280


def test_model_show_kv_dtype_fp8_for_deepseek_v32() -> None:
    data = json.loads(invoke("model", "show", "DeepSeek-V3.2", "--kv-dtype", "fp8", "--format", "json").stdout)
    assert data["kv_bytes_per_token"] == 48_068


# ---------------------------------------------------------------------------- CLI, bad input


def one_error_line(result: Any) -> str:
    """The command failed as a user error: exit 2, nothing on stdout, one ``error:`` line on stderr."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    return lines[0]


def llama() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "models" / "Llama-3.1-8B.yaml").read_text())


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.yaml")
    line = one_error_line(invoke("model", "show", path))
    assert path in line and "file not found" in line


def test_invalid_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.yaml", "name: [unclosed\nsource: x\n")
    line = one_error_line(invoke("model", "show", path))
    assert path in line and "invalid YAML" in line and "line" in line


def test_misspelt_optional_key(tmp_path: Path) -> None:
    data = llama()
    data["max_position_embedding"] = data.pop("max_position_embeddings")
    path = write(tmp_path, "typo.yaml", data)
    line = one_error_line(invoke("model", "show", path))
    assert path in line and "unknown key 'max_position_embedding'" in line


def test_misspelt_layer_key(tmp_path: Path) -> None:
    data = llama()
    data["layers"][0]["num_kv_head"] = data["layers"][0].pop("num_key_value_heads")
    path = write(tmp_path, "typo.yaml", data)
    line = one_error_line(invoke("model", "show", path))
    # the loader reports the first pydantic error: today the missing key the typo stands for
    assert path in line and "layers[0]" in line
    assert "num_kv_head" in line or "num_key_value_heads" in line


@pytest.mark.parametrize(("key", "value"), [("head_dim", 0), ("num_key_value_heads", -8), ("count", 0)])
def test_non_positive_dimension(tmp_path: Path, key: str, value: int) -> None:
    data = llama()
    data["layers"][0][key] = value
    path = write(tmp_path, "zero.yaml", data)
    line = one_error_line(invoke("model", "show", path))
    assert path in line and f"layers[0].{key}" in line and str(value) in line


def test_non_positive_top_level_dimension(tmp_path: Path) -> None:
    data = llama()
    data["hidden_size"] = 0
    line = one_error_line(invoke("model", "show", write(tmp_path, "zero.yaml", data)))
    assert "hidden_size" in line and "0" in line


def test_unknown_layer_kind(tmp_path: Path) -> None:
    data = llama()
    data["layers"][0]["kind"] = "mamba"
    path = write(tmp_path, "kind.yaml", data)
    line = one_error_line(invoke("model", "show", path))
    assert path in line and "layers[0]" in line and "'mamba'" in line


def test_layer_count_mismatch(tmp_path: Path) -> None:
    data = llama()
    data["num_hidden_layers"] = 33
    line = one_error_line(invoke("model", "show", write(tmp_path, "count.yaml", data)))
    assert "32" in line and "33" in line


def test_unknown_model_name_suggests_the_closest() -> None:
    line = one_error_line(invoke("model", "show", "Llama-3.1-8b-instruct"))
    assert "unknown model 'Llama-3.1-8b-instruct'" in line and "'Llama-3.1-8B'" in line
    line = one_error_line(invoke("model", "show", "lama-3.1-70B"))
    assert "'Llama-3.1-70B'" in line


def test_unknown_hardware_name_suggests_the_closest() -> None:
    line = one_error_line(invoke("kv-rate", "Llama-3.1-8B", "--hardware", "B3000"))
    assert "unknown hardware 'B3000'" in line and "'B300'" in line


def test_bad_hardware_file_in_an_extra_catalog(tmp_path: Path) -> None:
    (tmp_path / "hardware").mkdir()
    hw = yaml.safe_load((ROOT / "hardware" / "H100.yaml").read_text())
    hw |= {"name": "H100-broken", "hbm_gb": -80}
    path = write(tmp_path / "hardware", "H100-broken.yaml", hw)
    line = one_error_line(invoke("hardware", "--catalog", str(tmp_path)))
    assert path in line and "hbm_gb" in line and "-80" in line


def test_csv_of_mixed_layer_kinds_keeps_every_column():
    import csv
    import io

    from typer.testing import CliRunner

    from prfaas_plan.cli import app

    res = CliRunner().invoke(app, ["model", "show", "Ring-2.5-1T", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert {r["kind"] for r in rows} == {"linear", "mla"}
    mla = next(r for r in rows if r["kind"] == "mla")
    assert mla["kv_lora_rank"] == "512" and mla["kv_bytes_per_token"] == "11520.0"


def test_every_bundled_scenario_optimizes():
    import json

    from typer.testing import CliRunner

    from prfaas_plan.cli import app
    from prfaas_plan.io.load import Catalog

    names = sorted(Catalog.default().entries("scenarios"))
    assert "paper-case-study" in names and len(names) >= 2
    for name in names:
        res = CliRunner().invoke(app, ["optimize", name, "--format", "json"])
        assert res.exit_code == 0, (name, res.output)
        assert json.loads(res.stdout)["best"]["lambda_max_rps"] > 0


def _own_h200_catalog(tmp_path: Path) -> tuple[Path, Path]:
    """A catalog folder whose H200 is 1.5x the packaged one's dense peaks, and a scenario whose
    prefill instances are 8xB200: their times are the model's 8xH200 profile scaled by the analytic
    ratio, so they depend on which H200 the profile transfer reads."""
    folder = tmp_path / "catalog"
    (folder / "hardware").mkdir(parents=True)
    h200 = yaml.safe_load((ROOT / "hardware" / "H200.yaml").read_text())
    h200["bf16_dense_tflops"] *= 1.5
    h200["fp8_dense_tflops"] *= 1.5
    (folder / "hardware" / "H200.yaml").write_text(yaml.safe_dump(h200))
    sc = yaml.safe_load((ROOT / "scenarios" / "paper-case-study.yaml").read_text())
    sc["clusters"]["prfaas"]["hardware"] = "B200"
    sc["name"] = "b200-prefill"
    path = tmp_path / "b200-prefill.yaml"
    path.write_text(yaml.safe_dump(sc))
    return folder, path


def _untimed(d: Any) -> Any:
    """The JSON without the search's wall-clock seconds (``search_s``), which differ run to run."""
    if isinstance(d, dict):
        return {k: _untimed(v) for k, v in d.items() if k != "search_s"}
    return [_untimed(v) for v in d] if isinstance(d, list) else d


def test_catalog_option_and_environment_give_the_same_plan(tmp_path: Path) -> None:
    """The profile transfer reads the GPUs of the scenario's own catalog: `--catalog DIR` and
    $PRFAAS_PLAN_CATALOG=DIR plan alike (once the transfer read the packaged catalog with the option:
    3.586 against 3.243 req/s), and the folder's H200 is the one used (the packaged one plans otherwise)."""
    folder, path = _own_h200_catalog(tmp_path)
    by_option = runner.invoke(app, ["optimize", str(path), "--catalog", str(folder), "--format", "json"])
    by_env = runner.invoke(app, ["optimize", str(path), "--format", "json"], env={"PRFAAS_PLAN_CATALOG": str(folder)})
    packaged = runner.invoke(app, ["optimize", str(path), "--format", "json"])
    assert by_option.exit_code == by_env.exit_code == packaged.exit_code == 0, by_option.stdout + by_env.stdout
    option, env = _untimed(json.loads(by_option.stdout)), _untimed(json.loads(by_env.stdout))
    assert option == env
    lam, lam_packaged = option["best"]["lambda_max_rps"], json.loads(packaged.stdout)["best"]["lambda_max_rps"]
    assert lam != pytest.approx(lam_packaged, rel=1e-3)
