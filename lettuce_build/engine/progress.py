"""The one progress bar a stage shows: its items, how many are done, ok and failed, and live
figures: cache hits and the model's completion tokens per second since the stage started."""

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
        self.cached = 0
        self.tokens = 0
        self._started = time.time()
        self._bar: tqdm | None = None

    def batch(self, attempt: int, ok: int, failed: int, *, cached: int = 0, tokens: int = 0) -> None:
        """A finished batch of ``attempt``: ``ok`` items succeeded, ``failed`` did not (yet); the
        stage's cache hits and completion tokens so far are ``cached`` and ``tokens``."""
        self.cached, self.tokens = cached, tokens
        if self._bar is None:
            self._bar = tqdm(total=self.total, desc=f"stage {self.stage}", unit="item", dynamic_ncols=True)
            self._bar.start_t = self._started  # its rate counts from the stage's start
        if attempt == 0:
            self._bar.update(ok + failed)
            self.ok, self.failed = self.ok + ok, self.failed + failed
        else:
            self._bar.set_description(f"stage {self.stage} (retry {attempt})")
            self.ok, self.failed = self.ok + ok, self.failed - ok
        self._show()

    def rejected(self, count: int) -> None:
        """``count`` items the last pass finished were rejected by a check: failed after all."""
        if self._bar is not None and count:
            self.ok, self.failed = self.ok - count, self.failed + count
            self._show()

    def figures(self) -> dict[str, object]:
        """What the bar shows after its count: ok, failed, cache hits, tokens per second."""
        elapsed = max(time.time() - self._started, 1e-9)
        return {
            "ok": self.ok,
            "failed": self.failed,
            "cached": self.cached,
            "tok/s": f"{self.tokens / elapsed:.0f}",
        }

    def _show(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix(self.figures(), refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.set_description(f"stage {self.stage}")
            self._bar.close()
