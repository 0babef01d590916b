"""What the scale benchmarks share: the row counts they are asked for (``--sizes``, ``--big``),
the folder their inputs go to (``--work``, else a temporary one) and the rows they write there:
your own data, made of English words from Debian's word list."""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


def scale_parser(doc: str) -> argparse.ArgumentParser:
    """A parser of the shared options, described by the first paragraph of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--big", action="store_true", help="also 1,000,000 rows")
    parser.add_argument("--sizes", default="10000,100000", help="row counts, comma-separated")
    parser.add_argument("--work", type=Path, help="where the inputs go (default: a temporary folder)")
    return parser


def inputs(
    args: argparse.Namespace, name: str, question: Callable[[list[str]], str]
) -> Iterator[tuple[int, Path, Path]]:
    """Per row count asked for: the count, its rows (``name``, written unless the work folder
    has them) and the build folder beside them."""
    counts = [int(size) for size in args.sizes.split(",")] + ([1_000_000] if args.big else [])
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        for count in counts:
            rows = work / f"{name}{count}.jsonl"
            if not rows.exists():
                write_rows(rows, count, question)
            yield count, rows, work / f"out{count}"


WORDS = Path("/usr/share/dict/american-english")


def write_rows(path: Path, count: int, question: Callable[[list[str]], str], seed: int = 0) -> None:
    """``count`` rows of five twelve-word sentences, each saying in how many ways (a number to
    edit), with the question ``question`` asks of the sentences."""
    draw = random.Random(seed)
    words = [w for w in WORDS.read_text().split() if w.isalpha()][:20000]
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            sentences = [
                " ".join(draw.choice(words) for _ in range(12)).capitalize()
                + f" in {draw.randint(2, 999)} ways"
                for _ in range(5)
            ]
            row = {
                "id": f"row{index}",
                "context": ". ".join(sentences) + ".",
                "question": question(sentences),
            }
            out.write(json.dumps(row) + "\n")
