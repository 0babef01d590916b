"""The one progress bar a stage shows: its items, how many are done, ok and failed."""

from __future__ import annotations

import time

from tqdm.auto import tqdm


class StageBar:
    """Items of one stage, across its attempts: an item counts once, when its first attempt ends;
    a retried item that then succeeds moves from failed to ok.

    The bar is drawn when the first batch has finished, so whatever starts inside that batch (a
    model engine loading) is done before the bar appears and never splits it.
    """

    def __init__(self, stage: str, total: int) -> None:
        self.stage = stage
        self.total = total
        self.ok = 0
        self.failed = 0
        self._started = time.time()
        self._bar: tqdm | None = None

    def batch(self, attempt: int, ok: int, failed: int) -> None:
        """A finished batch of ``attempt``: ``ok`` items succeeded, ``failed`` did not (yet)."""
        if self._bar is None:
            self._bar = tqdm(total=self.total, desc=f"stage {self.stage}", unit="item", dynamic_ncols=True)
            self._bar.start_t = self._started  # its rate counts from the stage's start
        if attempt == 0:
            self._bar.update(ok + failed)
            self.ok, self.failed = self.ok + ok, self.failed + failed
        else:
            self._bar.set_description(f"stage {self.stage} (retry {attempt})")
            self.ok, self.failed = self.ok + ok, self.failed - ok
        self._bar.set_postfix(ok=self.ok, failed=self.failed, refresh=True)

    def rejected(self, count: int) -> None:
        """``count`` items the last pass finished were rejected by a check: failed after all."""
        if self._bar is not None and count:
            self.ok, self.failed = self.ok - count, self.failed + count
            self._bar.set_postfix(ok=self.ok, failed=self.failed, refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.set_description(f"stage {self.stage}")
            self._bar.close()
