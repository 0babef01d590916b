"""OUT/build.log: what a build did, with timestamps, readable after the fact (a Slurm or Ray job's
terminal is gone by the time someone asks why a build was slow or short).

It holds our own records (the build's options and backend, the load, each stage's start and
end with its counts, the finish or the error) and the warnings of the libraries that the
terminal does not show (core/quiet.py turns them down to errors there). Every run appends, so
a resumed build's log tells its whole history. Secrets found in the environment are redacted
from every record before it is written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lettuce_build.core.leaks import SecretScanner
from lettuce_build.core.quiet import THIRD_PARTY

LOG_FILE = "build.log"
#: the logger every build record goes to
log = logging.getLogger("lettuce_build")
#: what a library's own terminal handler still shows while a build runs
TERMINAL_LEVEL = logging.ERROR


class _Redacting(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.scanner = SecretScanner.from_environment()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self.scanner.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


@contextmanager
def build_log(folder: Path) -> Iterator[None]:
    """Append the build's records, and the libraries' warnings, to ``folder``/build.log."""
    handler = logging.FileHandler(folder / LOG_FILE, encoding="utf-8")
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    handler.addFilter(_Redacting())
    libraries = [logging.getLogger(name) for name in THIRD_PARTY]
    levels = {logger: logger.level for logger in [log, *libraries]}
    # a library's own terminal handlers keep showing errors only, while its warnings reach the file
    terminals = {h: h.level for logger in libraries for h in logger.handlers}
    for shown in terminals:
        shown.setLevel(max(shown.level, TERMINAL_LEVEL))
    log.setLevel(logging.INFO)
    root = logging.getLogger()
    # with a handler on the root logger Python's last-resort one no longer prints errors: ours does
    terminal = logging.StreamHandler() if not root.handlers else None
    if terminal is not None:
        terminal.setLevel(TERMINAL_LEVEL)
        root.addHandler(terminal)
    attached = [root, *(logger for logger in libraries if not logger.propagate)]
    for logger in libraries:
        if logger.getEffectiveLevel() > logging.WARNING:
            logger.setLevel(logging.WARNING)
    for logger in attached:
        logger.addHandler(handler)
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        for logger in attached:
            logger.removeHandler(handler)
        if terminal is not None:
            root.removeHandler(terminal)
        for logger, level in levels.items():
            logger.setLevel(level)
        for shown, level in terminals.items():
            shown.setLevel(level)
        handler.close()
