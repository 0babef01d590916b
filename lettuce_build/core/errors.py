"""Every error a user can act on, in one place: one base class, `LettuceError`, and a class per
kind of problem (bad input, a model out of reach, a build folder that is busy or broken...).

The command line prints such an error as one line, ``Error: <message>``, and its traceback only
with ``--verbose``; anything else is a bug and says so. A public function raises nothing else.
"""

from __future__ import annotations


class LettuceError(Exception):
    """A problem with what the user asked for or gave, explained in the message."""


# Input that cannot be read or used


class TableError(LettuceError, ValueError):
    """An input file that cannot be read as the table it should be, with where and why."""


class SourceError(TableError):
    """Input a source cannot load, with the file, line or column and what was expected."""


class InstanceLoadError(TableError):
    """An instances file or dataset that cannot be used, with where and why."""


class TaxonomyError(LettuceError, ValueError):
    """A label, source or taxonomy file that the taxonomy does not accept."""


class PatchError(LettuceError):
    """A patch that is not a unified diff."""


# Models and their answers


class BackendError(LettuceError):
    """A model that cannot be loaded or reached, or a request refused for good (or after every retry)."""


class EmbeddedModelError(BackendError):
    """The embedded model that cannot be found or converted, and how to get it."""


class BatchAPIError(BackendError):
    """A call to a provider's Batch API that failed: the status and the provider's message."""


class ProviderFailuresError(LettuceError):
    """The provider failed too many of a run's requests; what it answered is committed."""


class CostCapError(LettuceError):
    """The next pass of a build would take it past its ``--max-cost``; nothing of it was sent."""


class CacheError(LettuceError):
    """A cache file SQLite cannot read: what is wrong and how to recover."""


# Builds, their folders and outputs


class RecipeError(LettuceError):
    """A recipe file that cannot be read: the file, the field and what was expected."""


class UnknownSource(LettuceError):
    """A source name the registry does not know."""


class ShardError(LettuceError):
    """A shard given wrongly on the command line, or shard folders that do not make one build."""


class ManifestError(LettuceError):
    """A build folder without a readable manifest."""


class BuildLocked(LettuceError):
    """Another process is building into the same folder."""


class PathError(LettuceError):
    """An output path that cannot be written, with why."""


class CorruptOutput(LettuceError):
    """A saved dataset whose files cannot be read (truncated, overwritten, half copied)."""


class OutputError(LettuceError):
    """An output to check or show that is missing or of no format the tools read."""


class NoSamples(LettuceError):
    """A folder with no samples to show, and why."""


class PromptError(LettuceError):
    """A prompt template that is missing or malformed."""


# Publishing


class PublishError(LettuceError):
    """A build that must not be published as it is, and why."""


# SWE-bench repositories and the squeez sandbox


class RepoError(LettuceError):
    """A commit that cannot be exported."""


class UserNetError(LettuceError):
    """The user-mode network could not be attached to a sandbox."""


class SandboxError(LettuceError):
    """No sandbox (or no user-mode network for one) on this machine: untrusted code never runs
    outside one."""


class PhaseError(LettuceError):
    """A phase that cannot run (its input is missing) or that failed its checks."""


class MarkupError(LettuceError):
    """A translated text whose span tags or code placeholders did not all come back once each,
    well formed (core/span_markup.py); ``reason`` is the failure row's."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
