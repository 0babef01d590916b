"""lettuce-build: span-labelled hallucination and tool-output datasets for Hugging Face `datasets`."""

from lettuce_build.core.version import VERSION as __version__

__all__ = ["__version__", "build", "dry_run", "merge", "push"]


def __getattr__(name: str) -> object:
    # `import lettuce_build` stays light (the command line's --help answers at once); the API
    # and its heavy dependencies load on first use
    if name in ("build", "dry_run", "merge", "push"):
        from lettuce_build import api

        return getattr(api, name)
    raise AttributeError(f"module 'lettuce_build' has no attribute {name!r}")
