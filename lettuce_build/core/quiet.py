"""Quiet by default: the third-party libraries a build runs on speak only about errors.

vLLM, torch, transformers, `datasets` and the Hub client log their start-up and progress at
length (on stdout and stderr, from Python and from C++); a build's user wants one bar per
stage, the summary and a sample. `quiet()` sets their log levels and environment switches
before they are imported and hides `datasets`' internal bars (saving, flattening, parquet);
lettuce-build's own stage bars are drawn by the runner. ``verbose=True`` leaves everything on.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

#: libraries whose logs and warnings a default run does not show
THIRD_PARTY = (
    "vllm",
    "torch",
    "transformers",
    "datasets",
    "huggingface_hub",
    "gguf",
    "xgrammar",
    "httpx",
    "openai",
    "ray",
)

_ENVIRONMENT = {
    "VLLM_LOGGING_LEVEL": "ERROR",
    "TORCH_CPP_LOG_LEVEL": "ERROR",  # torch's C++ warnings (NUMA binding and the like)
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "DATASETS_VERBOSITY": "error",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",  # saving, flattening, parquet: internal steps
    # Ray's C++ core worker logs advice at error level (it keeps an actor's constructor
    # arguments in the object store); an actor that really fails raises in Python all the same
    "RAY_BACKEND_LOG_LEVEL": "fatal",
}

_quiet = False


def quiet(verbose: bool = False) -> None:
    """Turn third-party output down to errors (a user's own settings of these variables win)."""
    global _quiet
    if verbose:
        return
    _quiet = True
    for name, value in _ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    pattern = "|".join(THIRD_PARTY)
    warnings.filterwarnings("ignore", module=rf"(?:{pattern})(?:\.|$)")
    for name in THIRD_PARTY:
        logging.getLogger(name).setLevel(logging.ERROR)
    if "datasets" in sys.modules:  # already imported: its environment switches were read
        import datasets

        datasets.logging.set_verbosity_error()
        datasets.disable_progress_bars()


def requiet(*names: str) -> None:
    """Loggers a library sets the levels of when imported (Ray's) are turned down again after."""
    if _quiet:
        for name in names:
            logging.getLogger(name).setLevel(logging.ERROR)
