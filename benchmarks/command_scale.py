"""The commands around a build at scale: `validate`, `audit`, `export --format lettucedetect`,
`dedup` and `review` on rows in the published schema, each in its own process, with its time and
peak memory, beside the baseline of the same run: a process that only reads every row of the
same files with pyarrow (what any command must at least do).

    python benchmarks/command_scale.py --sizes 50000,500000 [--work /tmp/cmd] [--commands audit,dedup]

`review` serves a build folder: the rows are saved as a build saves them (``save_to_disk``), and
the process opens the review server on them and answers one page of samples (what the command
does before it waits for the browser), then stops.

Rows are realistic and distinct: each context joins three paragraphs of real READMEs (the
markdown long descriptions of the installed packages), no two rows the same three; the answer
joins a sentence of its first paragraph and one of its second, and every other row has one word
replaced and labelled (a contradiction). One row in 1,000 is a planted near-copy of an earlier
row (a word of its context changed, the same answer), which `dedup` must remove. Rows are
written as a Hub-style folder of parquet files (90% train, 10% test), as `push` publishes them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from dedup_scale import paragraphs  # noqa: E402
from edit_anchors import installed_readmes  # noqa: E402

from lettuce_build.core.schema import FEATURES, default_prompt  # noqa: E402
from lettuce_build.core.sentences import split_sentences  # noqa: E402

ROWS_PER_FILE = 50_000
PLANT_EVERY = 1_000
ROW_GROUP_ROWS = 2_000
COMMANDS = ("validate", "audit", "export", "dedup", "review")


def _row(
    index: int, texts: list[list[str]], draw: random.Random, used: set[tuple[int, ...]]
) -> dict[str, Any]:
    while True:
        picked = tuple(draw.sample(range(len(texts)), 3))
        if picked not in used:
            used.add(picked)
            break
    first, second, third = (texts[i] for i in picked)
    context = "\n\n".join(" ".join(part) for part in (first, second, third))
    said = [draw.choice(first), draw.choice(second)]
    answer = " ".join(said)
    labels: list[dict[str, Any]] = []
    if index % 2:
        words = said[1].split()
        at = draw.randrange(len(words))
        old = words[at].strip(".,;:()`*")
        if len(old) > 3:
            new = draw.choice(draw.choice(third).split()).strip(".,;:()`*") or "other"
            start = len(said[0]) + 1 + said[1].find(old)
            answer = answer[:start] + new + answer[start + len(old) :]
            labels.append(
                {
                    "start": start,
                    "end": start + len(new),
                    "text": new,
                    "label": "entity",
                    "category": "contradiction",
                    "subcategory": "entity",
                }
            )
    question = f"What does the passage say about {' '.join(said[0].split()[:5]).rstrip('.,')}?"
    split = "test" if index % 10 == 9 else "train"
    return {
        "prompt": default_prompt(context, question),
        "context": context,
        "question": question,
        "answer": answer,
        "labels": labels,
        "split": split,
        "task_type": "qa",
        "dataset": "lettucedetect-readme",
        "language": "en",
        "context_modality": "markdown",
        "category": 0 if labels else None,
        "subcategory": "entity" if labels else None,
        "metadata": json.dumps({"key": f"bench::{index}"}),
    }


def _planted(original: dict[str, Any], index: int) -> dict[str, Any]:
    """A near-copy: one word of the context changed (the prompt with it), the same answer."""
    words = original["context"].split(" ")
    words[len(words) // 2] = "changed"
    context = " ".join(words)
    return {
        **original,
        "context": context,
        "prompt": default_prompt(context, original["question"]),
        "metadata": json.dumps({"key": f"bench::{index}"}),
    }


def write_rows(folder: Path, count: int, seed: int = 0) -> None:
    """``count`` rows as a Hub-style folder of parquet files per split."""
    texts = [split_sentences(p) for p in paragraphs(installed_readmes(folder.parent / "readmes"))]
    texts = [sentences for sentences in texts if len(sentences) >= 2]
    draw = random.Random(seed)
    used: set[tuple[int, ...]] = set()
    recent: list[dict[str, Any]] = []
    files = max(1, -(-count // ROWS_PER_FILE))
    schema = FEATURES.arrow_schema
    (folder / "data").mkdir(parents=True, exist_ok=True)
    index = 0
    for number in range(files):
        batch: dict[str, list[dict[str, Any]]] = {"train": [], "test": []}
        for _ in range(min(ROWS_PER_FILE, count - index)):
            if index % PLANT_EVERY == PLANT_EVERY - 1 and recent:
                row = _planted(draw.choice(recent), index)
            else:
                row = _row(index, texts, draw, used)
                recent = [*recent[-99:], row]
            batch[row["split"]].append(row)
            index += 1
        for split, rows in batch.items():
            name = folder / "data" / f"{split}-{number:05d}-of-{files:05d}.parquet"
            # row groups of about 8 MB, as `push` writes them (`ROW_GROUP_BYTES`)
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), name, row_group_size=ROW_GROUP_ROWS)


PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree_rss(root: int) -> int:
    """Bytes resident in ``root`` and every process under it (a pool's workers too: each
    counted whole, pages they share with others included, so the figure is an upper bound)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, total = {root}, 0
    for pid in sorted(parents):  # children have larger numbers than parents, but not always:
        for _ in range(2):  # a second look finds those born to a later number
            if parents.get(pid) in tree:
                tree.add(pid)
    for pid in tree:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


def _timed(command: list[str]) -> tuple[float, float, str]:
    """(seconds, peak MB of the process and its children together, last line of output) of one
    command in its own process."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        out.seek(0)
        said = [line for line in out.read().splitlines() if line.strip()]
    return seconds, peak / 1024**2, said[-1][:100] if said else ""


BASELINE = (
    "import sys, pyarrow.parquet as pq, pathlib\n"
    "n = 0\n"
    "for f in sorted(pathlib.Path(sys.argv[1]).rglob('*.parquet')):\n"
    "    for batch in pq.ParquetFile(f).iter_batches(batch_size=1024):\n"
    "        n += len(batch.to_pylist())\n"
    "print(n, 'rows read')\n"
)


REVIEW = (
    "import sys, time, pathlib\n"
    "from lettuce_build.view.review_samples import ReviewSamples\n"
    "from lettuce_build.view.review_server import ReviewServer\n"
    "from lettuce_build.view.reviews import ReviewLog\n"
    "build = pathlib.Path(sys.argv[1])\n"
    "started = time.perf_counter()\n"
    "server = ReviewServer(ReviewSamples(build), log=ReviewLog(build / 'reviews.jsonl'), reviewer='bench')\n"
    "indexed = time.perf_counter()\n"
    "page = server.samples_json(len(server.samples) // 2, 100)\n"
    "served = time.perf_counter()\n"
    "server.httpd.server_close()\n"
    "print(f\"{page['total']} samples indexed in {indexed - started:.1f} s; a page of \"\n"
    "      f\"{len(page['samples'])} from the middle in {(served - indexed) * 1000:.0f} ms\")\n"
)


def saved_build(rows: Path, build: Path) -> Path:
    """The rows saved as a build saves its samples (``build/dataset``), once per work folder."""
    if not (build / "dataset").is_dir():
        from datasets import disable_progress_bars, load_dataset

        disable_progress_bars()
        files = {split: str(rows / "data" / f"{split}-*.parquet") for split in ("train", "test")}
        load_dataset("parquet", data_files=files, features=FEATURES).save_to_disk(str(build / "dataset"))
    return build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50000", help="row counts, comma-separated")
    parser.add_argument("--work", type=Path, help="where the rows go (kept between runs; default: temporary)")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="which commands, comma-separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        for count in (int(size) for size in args.sizes.split(",")):
            rows = work / f"rows{count}"
            if not (rows / "data").is_dir():
                write_rows(rows, count)
            out = work / f"out{count}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            out.mkdir(parents=True)
            base = _timed([sys.executable, "-c", BASELINE, str(rows)])
            print(f"{count:,} rows: read with pyarrow (baseline): {base[0]:.1f} s, {base[1]:.0f} MB")
            for name in args.commands.split(","):
                command = {
                    "validate": ["lettuce-build", "validate", str(rows)],
                    "audit": ["lettuce-build", "audit", str(rows)],
                    "export": [
                        "lettuce-build",
                        "export",
                        str(rows),
                        "--format",
                        "lettucedetect",
                        "--out",
                        str(out / "export.json"),
                    ],
                    "dedup": ["lettuce-build", "dedup", str(rows), "--out", str(out / "dedup")],
                    "review": [sys.executable, "-c", REVIEW, str(saved_build(rows, work / f"build{count}"))],
                }[name]
                seconds, peak, said = _timed(command)
                print(
                    f"{count:,} rows: {name}: {seconds:.1f} s ({seconds / base[0]:.1f}x the read), "
                    f"{peak:.0f} MB ({peak / base[1]:.1f}x) | {said}"
                )


if __name__ == "__main__":
    main()
