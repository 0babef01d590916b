"""The `lettuce-build` command line: options in, library calls out.

Heavy modules (datasets, vLLM, the sources) are imported inside the commands, so that
``--help`` answers at once. Printing lives in view/summary.py; errors a user can act on
(`LettuceError`) print as one line, with the traceback only under ``--verbose``. Commands
live in the modules of this package by subject; this module assembles them.

The top layer: imports anything.
"""

from __future__ import annotations

import os
import sys

import click

from lettuce_build.cli import build, builds, data, publish, swebench, translate
from lettuce_build.core.errors import LettuceError
from lettuce_build.core.interrupts import Interrupted, stops_when_asked
from lettuce_build.core.lifeline import children_die_with_this_process
from lettuce_build.core.quiet import quiet
from lettuce_build.core.version import VERSION

VERBOSE = "lettuce_build.verbose"


class _UsageLine(click.ClickException):
    """A usage error told in one line, with the exit code of click's own usage errors."""

    exit_code = click.UsageError.exit_code


class _Commands(click.Group):
    """Errors a user can act on print as one line; their traceback only with --verbose.

    A bad option value is one line too, naming the option and where the help is, instead of
    click's usage block."""

    def invoke(self, ctx: click.Context) -> object:
        children_die_with_this_process()  # a SIGKILL included
        try:
            with stops_when_asked():
                return super().invoke(ctx)
        except Interrupted as stop:  # Ctrl-C or SIGTERM: one line, and the shell's exit status
            # on a line of its own: a progress bar may be drawn up to the moment of the stop
            line = stop.line or "interrupted: all that was finished is kept; run the same command to continue"
            click.echo(f"\n{line}", err=True)
            raise SystemExit(stop.exit_code) from None
        except LettuceError as err:
            if ctx.meta.get(VERBOSE):
                raise
            raise click.ClickException(str(err)) from err
        except BrokenPipeError:  # the reader went away (`... | head`): nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(1) from None
        except OSError as err:  # a path the user gave that cannot be read or written
            if ctx.meta.get(VERBOSE):
                raise
            where = f": {err.filename}" if err.filename else ""
            raise click.ClickException(f"{err.strerror or err}{where}") from err
        except click.UsageError as err:
            if ctx.meta.get(VERBOSE) or err.ctx is None:
                raise
            raise _UsageLine(f"{err.format_message()} (see `{err.ctx.command_path} --help`)") from err
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as err:
            # a bug, not the user's doing: still one line, which says how to see the traceback
            if ctx.meta.get(VERBOSE):
                raise
            first = (str(err).strip().splitlines() or [""])[0][:300]
            raise click.ClickException(
                f"unexpected {type(err).__name__}: {first} (a bug: run with -v for the traceback, "
                "and please report it)"
            ) from err


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(VERSION, prog_name="lettuce-build")
@click.option(
    "-v", "--verbose", is_flag=True, help="Show tracebacks, and the logs of vLLM, torch and datasets."
)
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Build span-labelled hallucination and tool-output datasets for Hugging Face `datasets`."""
    ctx.meta[VERBOSE] = verbose
    quiet(verbose)


for command in (
    data.taxonomy,
    data.validate,
    data.audit,
    data.dedup,
    swebench.sift,
    builds.status,
    builds.show,
    builds.review,
    builds.report,
    builds.failures,
    builds.cache,
    builds.sources,
    build.build,
    builds.merge,
    swebench.squeez,
    publish.push,
    publish.export,
    translate.translate,
):
    main.add_command(command)
