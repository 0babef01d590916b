"""The driver's own cost at scale: a whole readme build (load, question, answer, inject with
balancing, assemble, write) with a backend that answers instantly (the tests' scripted model),
at 1k, 10k and 100k work items (1M with --big).

For each size: ms per item for the first build and for the fully cached rerun (wall clock, and
the CPU time of the build's process beside it), peak RSS of each (every run in a process of its
own) and of its private memory, the cache's size on disk and the output's, and the growth from
each size to the next (linear is x10 per x10 items; memory should not grow). Then, with --ray,
the same build at 10k items under Ray with 2 actors, the engines started (one line per engine
started, however many passes the build made) and the driver's peak memory beside the local
build's (the driver hands the actors a pass as they take it, so it should hold no more).

    python benchmarks/build_scale.py [--big] [--ray] [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class PeakAnon:
    """The peak of the process's private memory (RssAnon), sampled every 20 ms: peak RSS less
    the pages of files it maps (the libraries', and the Arrow files the build is reading)."""

    def __init__(self) -> None:
        self.peak = 0
        self.running = True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        while self.running:
            status = Path("/proc/self/status").read_text()
            line = next(ln for ln in status.splitlines() if ln.startswith("RssAnon:"))
            self.peak = max(self.peak, int(line.split()[1]))
            time.sleep(0.02)

    def stop(self) -> int:
        self.running = False
        self.thread.join()
        return self.peak


def child(docs: Path, out: Path, items: int, ray: bool, loads: Path) -> None:
    """One build in this process; prints its figures as JSON."""
    sys.path.insert(0, str(ROOT))
    import lettuce_build
    import lettuce_build.api  # noqa: F401 (imported before the clock runs)
    from lettuce_build.builds.storage.folder import BuildDir
    from tests.support.documents import respond
    from tests.support.scripted import ScriptedBackend

    backend = ScriptedBackend(respond, record=False)  # holds no request: RSS is the driver's
    settings = {}
    if ray:
        import ray as ray_module

        from lettuce_build.llm.ray_pool import RayBackend, RayOptions
        from tests.support.ray_engines import LoggedEngine

        ray_module.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
        )
        engine = LoggedEngine(out.parent / "asked.log", loads=loads)
        backend = RayBackend(engine, RayOptions(actors=2, batch_size=256, cpus_per_actor=0.5))
        settings["batch_size"] = 256
    peak_anon = PeakAnon()
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = before.ru_utime + before.ru_stime
    started = time.perf_counter()
    lettuce_build.build(
        "readme", input=str(docs), out=out, limit=items, ratio=0.5, backend=backend, **settings
    )
    seconds = time.perf_counter() - started
    used = resource.getrusage(resource.RUSAGE_SELF)
    made = BuildDir(out).read_manifest().counts
    passes = sum(s.backend_calls for s in BuildDir(out).read_manifest().stages)
    figures = {
        "seconds": seconds,
        "cpu_seconds": used.ru_utime + used.ru_stime - cpu_before,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "anon_mb": peak_anon.stop() / 1024,
        "passes": passes,
        "items": made.items if made else 0,
    }
    print("FIGURES " + json.dumps(figures))


def run(
    docs: Path,
    out: Path,
    items: int,
    ray: bool = False,
    loads: Path | None = None,
) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", str(docs), str(out), str(items), str(ray), str(loads)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    line = next((ln for ln in result.stdout.splitlines() if ln.startswith("FIGURES ")), None)
    if line is None:
        failed = f"the build of {items} items failed (exit {result.returncode})"
        raise SystemExit(f"{failed}:\n{result.stderr[-3000:]}")
    figures = json.loads(line.removeprefix("FIGURES "))
    if figures["items"] != items:  # per-item figures are per work item the build really made
        raise SystemExit(f"asked for {items} work items, the build made {figures['items']}")
    return figures


def warm(folder: Path) -> None:
    """Every input file read once, as a folder just written or recently read would be: the first
    build then measures the driver, not how fast the disk gives back files the kernel dropped
    from its cache (on this VM, 100,000 READMEs took 1.3 s to read warm and 10-60 s cold)."""
    for file in folder.iterdir():
        file.read_bytes()


def write_docs(folder: Path, items: int) -> Path:
    """READMEs of one work item each, as the tests write them."""
    sys.path.insert(0, str(ROOT))
    from tests.support.documents import write_many_readmes

    return write_many_readmes(folder, items)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", action="store_true", help="also 1M work items")
    parser.add_argument("--ray", action="store_true", help="also 10k items on Ray with 2 actors")
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] + ([1_000_000] if args.big else [])
    print(
        f"{'items':>8} {'first ms/item':>14} {'(CPU)':>6} {'rerun ms/item':>14} {'(CPU)':>6} "
        f"{'first RSS MB':>13} {'rerun RSS MB':>13} {'first anon MB':>14} {'rerun anon MB':>14} "
        f"{'cache MB':>9} {'output MB':>10}"
    )
    rows: list[dict[str, float]] = []  # one per size
    with tempfile.TemporaryDirectory() as tmp:
        for items in sizes:
            docs = write_docs(Path(tmp) / f"docs-{items}", items)
            warm(docs)
            out = Path(tmp) / f"out-{items}"
            first = run(docs, out, items)
            again = run(docs, out, items)
            row = {
                "first": first["seconds"] * 1000 / items,
                "first_cpu": first["cpu_seconds"] * 1000 / items,
                "rerun": again["seconds"] * 1000 / items,
                "rerun_cpu": again["cpu_seconds"] * 1000 / items,
                "first_rss": first["rss_mb"],
                "rerun_rss": again["rss_mb"],
                "first_anon": first["anon_mb"],
                "rerun_anon": again["anon_mb"],
                "cache": (out / "cache.sqlite").stat().st_size / 1e6,
                "output": (folder_bytes(out / "dataset") + folder_bytes(out / "hub")) / 1e6,
            }
            print(
                f"{items:>8} {row['first']:>14.2f} {row['first_cpu']:>6.2f} {row['rerun']:>14.2f} "
                f"{row['rerun_cpu']:>6.2f} {row['first_rss']:>13.0f} "
                f"{row['rerun_rss']:>13.0f} {row['first_anon']:>14.0f} {row['rerun_anon']:>14.0f} "
                f"{row['cache']:>9.1f} {row['output']:>10.1f}"
            )
            if rows:
                previous = rows[-1]
                growth = {k: row[k] / previous[k] if previous[k] else float("nan") for k in row}
                print(
                    "   growth: "
                    + ", ".join(f"{k} x{v:.2f}" for k, v in growth.items())
                    + "  (per-item figures: x1.00 is linear; sizes: x10 is linear)"
                )
            rows.append(row)
        if args.ray:
            items = 10_000
            docs = Path(tmp) / f"docs-{items}"
            if not docs.exists():
                write_docs(docs, items)
            local = run(docs, Path(tmp) / "ray-local", items)
            loads = Path(tmp) / "loads.log"
            (Path(tmp) / "ray").mkdir()
            remote = run(docs, Path(tmp) / "ray" / "out", items, ray=True, loads=loads)
            started = len(loads.read_text().split()) if loads.exists() else 0
            print(
                f"Ray, 2 actors, {items} items: {remote['seconds'] * 1000 / items:.2f} ms per item "
                f"({remote['seconds'] / local['seconds']:.2f}x the local build), {remote['passes']} passes "
                f"asked the model, {started} engines started; the driver's peak RSS "
                f"{remote['rss_mb']:.0f} MB, private {remote['anon_mb']:.0f} MB (local build: "
                f"{local['rss_mb']:.0f} and {local['anon_mb']:.0f} MB)"
            )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        docs, out, items, ray, loads = sys.argv[2:7]
        child(Path(docs), Path(out), int(items), ray == "True", Path(loads))
    else:
        main()
