"""``--rpm`` and ``--tpm``: requests and tokens per minute, held by every request in flight.

Each limit is a token bucket that holds one second of its rate (a burst of at most that much),
refilled continuously. A request reserves its share at once, before it waits, so requests leave
in the order they asked and need no lock inside one event loop; a request larger than the
bucket waits until its whole size has been refilled. The tokens a request reserves are its
estimate (prompt + ``max_tokens``); what the provider reports it used is settled afterwards.

The provider's own word wins over ours: ``x-ratelimit-remaining-requests: 0`` (or
``-tokens: 0``) pauses every request until its ``x-ratelimit-reset-*`` time has passed. A 429's
``Retry-After`` is the SDK's to honour, as it retries.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping

#: the duration format of ``x-ratelimit-reset-*``: ``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


class _Bucket:
    def __init__(self, per_minute: int, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self.last = now

    def reserve(self, amount: float, now: float) -> float:
        """Take ``amount`` (the level may go below zero); the seconds until it is covered."""
        self.level = min(self.capacity, self.level + (now - self.last) * self.rate)
        self.last = now
        self.level -= amount
        return max(0.0, -self.level / self.rate)

    def give_back(self, amount: float) -> None:
        self.level = min(self.capacity, self.level + amount)


class RateLimiter:
    def __init__(self, rpm: int | None, tpm: int | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        now = clock()
        self.requests = _Bucket(rpm, now) if rpm else None
        self.tokens = _Bucket(tpm, now) if tpm else None
        self.paused_until = 0.0

    def reserve(self, tokens: int) -> float:
        """Reserve one request of ``tokens`` tokens; the seconds to wait before sending it."""
        now = self.clock()
        wait = self.paused_until - now
        if self.requests is not None:
            wait = max(wait, self.requests.reserve(1, now))
        if self.tokens is not None:
            wait = max(wait, self.tokens.reserve(tokens, now))
        return max(0.0, wait)

    def pause_left(self) -> float:
        """Seconds until the provider's pause ends (0: none)."""
        return max(0.0, self.paused_until - self.clock())

    def settle(self, reserved: int, used: int) -> None:
        """A request reserved ``reserved`` tokens and the provider says it used ``used``."""
        if self.tokens is not None and used:
            self.tokens.give_back(reserved - used)

    def observe(self, headers: Mapping[str, str]) -> None:
        """Pause every request while the provider says a limit is used up."""
        for kind in ("requests", "tokens"):
            remaining = headers.get(f"x-ratelimit-remaining-{kind}")
            reset = reset_seconds(headers.get(f"x-ratelimit-reset-{kind}", ""))
            if remaining is not None and remaining.strip() == "0" and reset:
                self.paused_until = max(self.paused_until, self.clock() + reset)


def reset_seconds(text: str) -> float:
    """``6m0s`` -> 360.0; a plain number is seconds; anything else 0."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    return sum(float(number) * _SECONDS[unit] for number, unit in _DURATION.findall(text))
