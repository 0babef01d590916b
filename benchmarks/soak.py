"""A long night of faults: a readme build of many items through a loopback OpenAI-compatible
server that fails at random, killed and interrupted on the way, then finished.

The server answers as the suite's scripted model does (tests/support/documents.py) and, with a
fixed seed per request and attempt, misbehaves as hosted providers do: 3% 500s, 2% 429s with
``Retry-After``, 1% dropped connections, 1% answers slower than ``--request-timeout``, 0.5%
refusals (a content filter's 400) and 0.5% malformed bodies. The build runs in a process of its
own and is killed with SIGKILL three times and stopped with SIGINT once, at random moments, then
run to the end. Then it checks and prints:

- every item is a sample or has a failure row with its reason;
- no request was answered twice beyond those in flight at a kill and those that timed out;
- the manifest's request count beside the server's count of answers (the difference is what a
  kill or a timeout lost after the server answered);
- the peak memory of the build's processes, and the wall time against an unfaulted build of the
  same items.

    python benchmarks/soak.py [--items 100000] [--seed 0] [--work DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's scripted model
from lettuce_build.builds.storage.folder import BuildDir  # noqa: E402
from lettuce_build.view.samples import load_samples  # noqa: E402
from tests.support.documents import respond  # noqa: E402
from tests.support.openai_server import DROP, Answer, completion_body, serve_http  # noqa: E402

#: each fault's share of requests, drawn per request and attempt
FAULTS = (
    ("server_error", 0.03),
    ("rate_limited", 0.02),
    ("dropped", 0.01),
    ("slow", 0.01),
    ("refused", 0.005),
    ("malformed", 0.005),
)
TIMEOUT = 2.0
#: an answer sent this shortly before a kill counts as in flight (not yet committed by the build)
IN_FLIGHT_SECONDS = 0.5
#: requests in flight, as a long build at a provider runs them: at 16, the answers waited for (a
#: Retry-After, a backoff, a timeout) held most slots (2,000 items: 77 s faulted, 56 s at 64)
CONCURRENCY = int(os.environ.get("SOAK_CONCURRENCY", "64"))

TEMPLATE = """# {name}

{name} renders large tables in the terminal. It is written in Python and needs no compiler.

## Installation

{name} needs Python 3.{minor} or newer and about {size} MB of disk space.

## Usage

Run `{name} show data.csv` to page through a CSV file. The default page size is {rows} rows,
and `--page-size` changes it. Sorting uses the `--sort` option with a column name.
"""


def documents(folder: Path, items: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(items):
        path = folder / f"pkg{i:06d}.md"
        if not path.exists():
            name = f"pkg{i:06d}"
            path.write_text(TEMPLATE.format(name=name, minor=8 + i % 5, size=2 + i % 40, rows=10 + i % 90))
    return folder


class FaultServer:
    """The loopback server: answers, faults, and what it counted."""

    def __init__(self, seed: int, faults: bool) -> None:
        self.seed = seed
        self.faults = faults
        self.lock = threading.Lock()
        self.asked: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.faulted: Counter[str] = Counter()
        self.in_flight = 0
        #: when each answer was sent: those of the last moment before a kill may be on their
        #: way to the build, not yet committed
        self.sent_at: list[float] = []

    def fault(self, digest: str, attempt: int) -> str | None:
        if not self.faults:
            return None
        point = random.Random(f"{self.seed}:{digest}:{attempt}").random()
        for name, share in FAULTS:
            if point < share:
                return name
            point -= share
        return None

    def answer(self, body: bytes) -> bytes:
        return completion_body(body, respond)


def serving(server: FaultServer) -> AbstractContextManager[str]:
    """The server on loopback: its base URL."""

    def handle(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
        digest = hashlib.sha256(body).hexdigest()
        with server.lock:
            server.asked[digest] += 1
            attempt = server.asked[digest]
            server.in_flight += 1
        try:
            return reply(digest, body, server.fault(digest, attempt))
        finally:
            with server.lock:
                server.in_flight -= 1

    def reply(digest: str, body: bytes, fault: str | None) -> Answer:
        if fault is not None:
            with server.lock:
                server.faulted[fault] += 1
        json_type = "application/json"
        if fault == "dropped":
            return DROP, json_type, b"", {}
        if fault == "slow":
            time.sleep(TIMEOUT + 0.5)
        if fault == "server_error":
            return 500, json_type, b'{"error": {"message": "internal error"}}', {}
        if fault == "rate_limited":
            return 429, json_type, b'{"error": {"message": "slow down"}}', {"Retry-After": "1"}
        if fault == "refused":
            return 400, json_type, b'{"error": {"code": "content_filter", "message": "refused"}}', {}
        if fault == "malformed":
            return 200, json_type, b"<html>not json</html>", {}
        payload = server.answer(body)
        with server.lock:
            server.answered[digest] += 1
            server.sent_at.append(time.monotonic())
        return 200, json_type, payload, {}

    return serve_http(handle)


def command(docs: Path, out: Path, url: str) -> list[str]:
    return [
        sys.executable, "-m", "lettuce_build", "build",
        "--source", "readme", "--input", str(docs), "--out", str(out), "--backend", "openai",
        "--base-url", url, "--model", "scripted", "--concurrency", str(CONCURRENCY),
        "--request-timeout", str(TIMEOUT), "--max-retries", "3", "--max-provider-failures", "1",
    ]  # fmt: skip


def run(
    args: list[str], stop_after: float | None, how: signal.Signals, server: FaultServer
) -> tuple[int, int]:
    """Run the build; ``stop_after`` seconds: send ``how``. Its exit code and the requests the
    server had in flight when it was stopped."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=stop_after)
        return process.returncode, 0
    except subprocess.TimeoutExpired:
        now = time.monotonic()
        # in flight: being answered, or answered in the last half second (on the way back)
        in_flight = server.in_flight + sum(now - sent < IN_FLIGHT_SECONDS for sent in server.sent_at[-1000:])
        process.send_signal(how)
        return process.wait(), in_flight


def build(docs: Path, out: Path, seed: int, faults: bool, stops: list[tuple[float, signal.Signals]]) -> dict:
    server = FaultServer(seed, faults)
    started = time.perf_counter()
    lost_at_stops = 0
    codes = []
    with serving(server) as url:
        for after, how in stops:
            code, in_flight = run(command(docs, out, url), after, how, server)
            codes.append(code)
            lost_at_stops += in_flight
        code, _ = run(command(docs, out, url), None, signal.SIGTERM, server)
        codes.append(code)
    return {
        "seconds": time.perf_counter() - started,
        "codes": codes,
        "server": server,
        "in_flight_at_stops": lost_at_stops,
        "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/soak"))
    args = parser.parse_args()
    docs = documents(args.work / f"docs-{args.items}", args.items)
    draw = random.Random(args.seed)
    # stops at random moments within the first minutes of the build
    horizon = max(10.0, args.items / 200)
    stops = [(draw.uniform(3.0, horizon), signal.SIGKILL) for _ in range(3)]
    stops.insert(draw.randrange(4), (draw.uniform(3.0, horizon), signal.SIGINT))
    for folder in ("soak", "calm"):
        shutil.rmtree(args.work / folder, ignore_errors=True)
    soak = build(docs, args.work / "soak", args.seed, True, stops)
    calm = build(docs, args.work / "calm", args.seed, False, [])
    check(args.items, args.work / "soak", soak, calm, stops)


def check(items: int, out: Path, soak: dict, calm: dict, stops: list[tuple[float, signal.Signals]]) -> None:
    server: FaultServer = soak["server"]
    folder = BuildDir(out)
    manifest = folder.read_manifest()
    sample_keys = {sample.metadata["key"] for sample in load_samples(out)}
    failed_keys = {row.key for row in folder.failures()} - sample_keys  # a failed edit: a clean sample
    unexplained = [row.key for row in folder.failures() if not row.reason]
    twice = sum(n - 1 for n in server.answered.values() if n > 1)
    allowed = soak["in_flight_at_stops"] + server.faulted["slow"]
    answers = sum(server.answered.values())
    print(f"{items} items; stops {[(round(t, 1), s.name) for t, s in stops]}; exit codes {soak['codes']}")
    print(f"faults served: {dict(server.faulted)}")
    accounted = len(sample_keys) + len(failed_keys)
    print(
        f"samples {len(sample_keys)} + items with only a failure row {len(failed_keys)} "
        f"= {accounted} of {items}"
    )
    print(
        f"answered twice: {twice} (allowed: {soak['in_flight_at_stops']} in flight at a stop + "
        f"{server.faulted['slow']} timed out = {allowed})"
    )
    print(
        f"requests in the manifest {manifest.cost.requests}, answers the server sent {answers} "
        f"(lost after answering: {answers - manifest.cost.requests})"
    )
    print(f"peak memory of a build process {soak['peak_mb']:.0f} MB")
    print(
        f"wall time {soak['seconds']:.0f} s with faults and stops, {calm['seconds']:.0f} s without: "
        f"{soak['seconds'] / calm['seconds']:.2f}x"
    )
    ok = accounted == items and not unexplained and twice <= allowed
    ok = ok and manifest.status == "finished" and soak["codes"][-1] == 0
    print("soak: passed" if ok else "soak: FAILED")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
