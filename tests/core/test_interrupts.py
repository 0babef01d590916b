"""A stop asked for is never lost: a signal whose exception Python drops (it landed in a
finalizer during a garbage collection) is raised by the next `check`, without a word printed."""

import gc
import os
import signal
import sys

import pytest

from lettuce_build.core import interrupts
from lettuce_build.core.interrupts import Interrupted, stops_when_asked


class SignalledWhenCollected:
    """An object whose finalizer is where the signal lands."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)


def test_a_signal_dropped_by_a_finalizer_is_raised_at_the_next_check(capsys):
    with stops_when_asked():
        SignalledWhenCollected()  # collected at once: the handler's exception is dropped
        gc.collect()
        with pytest.raises(Interrupted) as stopped:
            interrupts.check()
    assert stopped.value.exit_code == 143
    assert "Interrupted" not in capsys.readouterr().err  # no "Exception ignored in" trace


def test_check_does_nothing_when_nothing_was_asked():
    with stops_when_asked():
        interrupts.check()
    interrupts.check()  # and nothing outside a command


def test_a_signal_dropped_while_the_command_loads_stops_it_as_it_starts(capsys):
    before = {number: signal.getsignal(number) for number in interrupts.SIGNALS}
    hook = sys.unraisablehook
    try:
        interrupts.until_started()
        SignalledWhenCollected()  # lands in a finalizer while "modules load": its exit is dropped
        gc.collect()
        printed = capsys.readouterr().err
        assert "interrupted before the command started" in printed and "Exception ignored" not in printed
        with pytest.raises(Interrupted) as stopped, stops_when_asked():
            pass  # the command's body never runs
        assert stopped.value.exit_code == 143
        with stops_when_asked():  # a stop is taken once: the next command runs
            pass
    finally:
        sys.unraisablehook = hook
        for number, handler in before.items():
            signal.signal(number, handler)
