"""lettuce-build: span-labelled hallucination and tool-output datasets for Hugging Face `datasets`.

The public surface is what ``__all__`` names: `build`, `dry_run`, `merge`, `push` and `export`
(see `lettuce_build.api`), `register_source` for a source of one's own, `LettuceError`, the base of
every error they raise, and the kinds of it a caller may want to tell apart (a model that cannot
be reached, a spending cap, a provider failing, an input, a recipe, a locked build folder, an
output, a build not fit to publish); `lettuce_build.core.errors` holds the hierarchy. Everything else is the
implementation and may change.
"""

import os

# Arrow allocates through mimalloc, which by default keeps the pages a freed buffer held and hands
# them back only later, when it next looks: writing a build's parquet files left their buffers in
# the process (measured: +53 MB of private memory for a 170 MB split, +1 MB with this set). The
# setting is read when Arrow's library loads, so it is made before anything imports pyarrow; a
# value the user set is kept.
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")

from lettuce_build.core.errors import (  # noqa: E402 (after the allocator's setting)
    BackendError,
    BuildLocked,
    CostCapError,
    LettuceError,
    OutputError,
    ProviderFailuresError,
    PublishError,
    RecipeError,
    SourceError,
)

__all__ = [
    "BackendError",
    "BuildLocked",
    "CostCapError",
    "LettuceError",
    "OutputError",
    "ProviderFailuresError",
    "PublishError",
    "RecipeError",
    "SourceError",
    "__version__",
    "build",
    "dry_run",
    "export",
    "merge",
    "push",
    "register_source",
]

_API = ("build", "dry_run", "export", "merge", "push")


def __getattr__(name: str) -> object:
    # `import lettuce_build` stays light (the command line's --help answers at once); the API
    # and its heavy dependencies load on first use
    if name in _API:
        from lettuce_build import api

        return getattr(api, name)
    if name == "register_source":
        from lettuce_build.sources.registry import register_source

        return register_source
    if name == "__version__":  # read from the installed metadata (40 ms): the command's start-up,
        # when a Ctrl-C is not yet its own (see __main__.py), does without it
        from lettuce_build.core.version import VERSION

        return VERSION
    raise AttributeError(f"module 'lettuce_build' has no attribute {name!r}")
