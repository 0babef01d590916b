"""lettuce-build's own version, as installed (cards and manifests record it)."""

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("lettuce-build")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0.0.0+unknown"
