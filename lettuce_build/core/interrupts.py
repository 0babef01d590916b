"""Stopping when asked: the first Ctrl-C (SIGINT) or SIGTERM (what a scheduler sends at the end of
a job's time) raises `Interrupted` where the command is; a second Ctrl-C ends the process at once.

Nothing committed is lost either way: answers are committed per batch as they arrive (the
request cache), so what is in flight when the signal comes is all a stop abandons (an engine
batch returns only whole; it is asked again next run). The command that catches `Interrupted`
records its state (a build's manifest says ``interrupted``), prints one line and exits with
128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM), as shells expect.

Some libraries replace the process's handlers when they start (an engine, a server): whoever
starts one calls `reinstall` after it, so the handlers stay ours while a command runs.

A signal can land while Python runs a finalizer or a weakref callback (a garbage collection in
the middle of the build); an exception raised there is dropped by Python, not propagated. So
the stop is also remembered, and `check` raises it at the next commit point: the long loops call
it after each committed chunk, and the dropped exception is not printed.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A long command was asked to stop (a `KeyboardInterrupt`: code that catches "any error"
    never mistakes it for one, and a stop is no error)."""

    def __init__(self, signum: int, line: str = "") -> None:
        super().__init__(line or f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        #: what the command prints: what was kept, and how to continue
        self.line = line

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _State:
    active = False
    received: int | None = None
    #: a signal that came while the command was still loading (see `until_started`)
    before_start: int | None = None
    unraisable = sys.unraisablehook  # the hook before ours, that every other exception goes to


def _handler(signum: int, frame: FrameType | None) -> None:
    if _State.received is not None and signum == signal.SIGINT:
        os._exit(128 + signum)  # the second Ctrl-C: at once (every committed answer is on disk)
    _State.received = signum
    raise Interrupted(signum)


def _while_loading(signum: int, frame: FrameType | None) -> None:
    _State.before_start = signum
    sys.stderr.write("\ninterrupted before the command started: nothing was done\n")
    raise SystemExit(128 + signum)


def until_started() -> None:
    """Until the command runs (`stops_when_asked`), a SIGINT or SIGTERM ends the process with
    the shell's status and one line. A stop that lands in a finalizer while modules load is
    dropped by Python (see the module): it is remembered, and the command stops as it starts."""
    for number in SIGNALS:
        signal.signal(number, _while_loading)
    if sys.unraisablehook is not _unraisable:
        _State.unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable


def asked() -> bool:
    """Whether a stop was asked (a signal came while `stops_when_asked` holds): for the threads
    that wait on a process of their own (a sandbox), which the signal does not interrupt."""
    return _State.active and _State.received is not None


def check() -> None:
    """Raise the stop asked for, if its signal came while Python dropped exceptions (see the
    module); nothing otherwise. Called where a loop has just committed its work."""
    if _State.active and _State.received is not None:
        raise Interrupted(_State.received)


def _unraisable(hook: sys.UnraisableHookArgs) -> None:
    if isinstance(hook.exc_value, Interrupted):
        return  # a stop that landed in a finalizer: `check` raises it where it is seen
    if isinstance(hook.exc_value, SystemExit) and _State.before_start is not None:
        return  # the same while the command loads: it stops as it starts
    _State.unraisable(hook)


def reinstall() -> None:
    """Make the handlers ours again (after a library set its own), while `stops_when_asked` holds."""
    if _State.active:
        for number in SIGNALS:
            signal.signal(number, _handler)


@contextmanager
def stops_when_asked() -> Iterator[None]:
    """Within: SIGINT and SIGTERM raise `Interrupted` (see the module); the handlers before are
    put back after. Only the main thread may set handlers: elsewhere this does nothing."""
    try:
        previous = {number: signal.signal(number, _handler) for number in SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    _State.active, _State.received = True, None
    hook_before = sys.unraisablehook
    if hook_before is not _unraisable:  # (already ours since `until_started`)
        _State.unraisable = hook_before
    sys.unraisablehook = _unraisable
    try:
        if _State.before_start is not None:  # asked while loading, and dropped there
            _State.received, _State.before_start = _State.before_start, None
            raise Interrupted(_State.received)
        yield
    finally:
        _State.active = False
        sys.unraisablehook = hook_before
        for number, handler in previous.items():
            signal.signal(number, handler)
