"""The CPU engine's dtype follows the processor: bfloat16 only where it is computed natively
(AVX512-BF16 or AMX), float32 where torch would emulate it; `--dtype` overrides; the manifest
and the recipe say what ran."""

import pytest
import yaml

import lettuce_build
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.llm.protocol import ChatRequest, Completion
from lettuce_build.llm.vllm_backend import VLLMBackend, cpu_settings

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend


@pytest.fixture(params=[(True, False), (False, True), (False, False)], ids=["avx512bf16", "amx", "avx2"])
def processor(request, monkeypatch) -> str:
    """The capability check mocked as torch reports it; returns the dtype that should run."""
    import torch  # here, not at the top: importing torch costs seconds of every collection

    avx512_bf16, amx = request.param
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    return "bfloat16" if avx512_bf16 or amx else "float32"


class ScriptedVLLM(VLLMBackend):
    """The vLLM backend's settings and `info()`, answered by the scripted responder (no engine)."""

    def __init__(self) -> None:
        super().__init__("smollm2-135m")
        self.scripted = ScriptedBackend(respond)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        return self.scripted.generate(requests)


def test_the_cpu_settings_pick_the_dtype_the_processor_computes_natively(processor):
    assert cpu_settings().dtype == processor
    assert VLLMBackend("smollm2-135m").options.dtype == processor


def test_a_default_build_records_the_dtype_that_ran_in_its_manifest_and_recipe(tmp_path, processor):
    docs = write_readmes(tmp_path / "docs")
    result = lettuce_build.build("readme", input=str(docs), out=tmp_path / "out", backend=ScriptedVLLM())
    manifest = BuildDir(tmp_path / "out").read_manifest()
    assert manifest.backend.options["dtype"] == processor
    assert yaml.safe_load(result.recipe_path.read_text())["engine"]["dtype"] == processor


def test_dtype_given_by_the_user_overrides_the_processors_choice(processor):
    from lettuce_build.llm.factory import make_backend
    from lettuce_build.llm.settings import EngineSettings

    backend = make_backend("vllm", "smollm2-135m", engine=EngineSettings(dtype="float16"))
    assert backend.info().options["dtype"] == "float16"
