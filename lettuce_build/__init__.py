"""lettuce-build: span-labelled hallucination and tool-output datasets for Hugging Face `datasets`."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lettuce-build")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
