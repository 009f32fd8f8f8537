"""The validated-spec cache: same answer as validation, never stale, optional."""

import os
import shutil
import time

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


def test_unwritable_cache_folder_is_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(blocker / "sub"))
    assert load_model("internal-1t").name == "internal-1t"
