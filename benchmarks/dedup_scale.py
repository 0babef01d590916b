"""Near-duplicate rows at scale, and how well planted duplicates are found.

Rows are made of real text nobody here wrote: the markdown long descriptions of the packages
installed in this environment, cut into paragraphs. Each row's context joins two paragraphs of
two READMEs; its answer is a sentence of each. Into every 20 rows one near-duplicate is
planted, of a kind taken in turn: a word of the context changed, its whitespace changed, its two
paragraphs swapped; and one hard negative: a row with the same context and another answer,
which must not count (rows sharing only a context are not duplicates). Per size it prints the
rows per second of `NearDuplicates` and of exact-duplicate hashing (the baseline, the same rows
in the same run), the peak resident memory of a process that did only this, and the precision
and recall of the planted pairs.

    python benchmarks/dedup_scale.py [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from edit_anchors import installed_readmes  # noqa: E402

from lettuce_build.core.near_duplicates import NearDuplicates  # noqa: E402
from lettuce_build.core.sentences import split_sentences  # noqa: E402

PLANT_EVERY = 20


def paragraphs(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.glob("*.md")):
        for part in re.split(r"\n\s*\n", path.read_text()):
            # prose paragraphs of 40-300 words: no table, code, or HTML block (a sponsors block
            # several READMEs share would make every row it lands in a duplicate of the others)
            if 40 <= len(part.split()) <= 300 and not any(mark in part for mark in ("|", "```", "<")):
                found.append(part.strip())
    return list(dict.fromkeys(found))  # a paragraph two packages share, once


def rows(size: int, texts: list[str], seed: int = 0) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """``size`` rows with planted near-duplicates; the planted pairs (first key, copy key)."""
    draw = random.Random(seed)
    made: list[dict[str, Any]] = []
    planted: set[tuple[str, str]] = set()
    used: set[frozenset[str]] = set()
    while len(made) < size:
        key, slot = f"r{len(made)}", len(made) % PLANT_EVERY
        if slot == PLANT_EVERY - 2 and made:
            original = made[draw.randrange(len(made))]
            made.append(
                {
                    "key": key,
                    "context": variant(original["context"], len(made), draw),
                    "answer": original["answer"],
                }
            )
            planted.add((original["key"], key))
            continue
        if slot == PLANT_EVERY - 1 and made:
            other = made[-2]  # the same context, another answer: not a duplicate
            unsaid = " ".join(s for s in split_sentences(other["context"]) if s not in other["answer"])
            if len(unsaid.split()) >= 10:
                made.append({"key": key, "context": other["context"], "answer": unsaid})
                continue
        a, b = draw.sample(range(len(texts)), 2)
        # a sentence of each paragraph: rows enough for 100,000 without an unplanted duplicate
        chosen = [draw.choice(split_sentences(texts[i]) or [texts[i]]) for i in (a, b)]
        said = frozenset(chosen)  # the same sentences again, in either order, would be a duplicate
        if said not in used:
            used.add(said)
            answer = " ".join(chosen)
            made.append({"key": key, "context": texts[a] + "\n\n" + texts[b], "answer": answer})
    return made, planted


def variant(context: str, index: int, draw: random.Random) -> str:
    """A near-duplicate of a context, of a kind taken in turn: a word changed, the whitespace
    changed, or its two paragraphs swapped."""
    first, _, second = context.partition("\n\n")
    kind = (index // PLANT_EVERY) % 3
    if kind == 0:
        words = first.split()
        words[draw.randrange(len(words))] = "changed"
        return " ".join(words) + "\n\n" + second
    if kind == 1:
        return context.replace(" ", "  ").replace("\n\n", "\n\n\n")
    return second + "\n\n" + first


def clusters(pairs: set[tuple[str, str]]) -> dict[str, str]:
    """Each key of the pairs -> the original it was copied from (copies of copies included)."""
    origin: dict[str, str] = {}
    for first, copy in sorted(pairs, key=lambda pair: int(pair[1][1:])):
        origin[copy] = origin.get(first, first)
        origin.setdefault(first, first)
    return origin


def one_size(size: int, texts_file: Path, method: str) -> dict[str, Any]:
    texts = json.loads(texts_file.read_text())
    made, planted = rows(size, texts)
    started = time.perf_counter()
    if method == "exact":
        seen: dict[str, str] = {}
        found = set()
        for row in made:
            digest = hashlib.sha256((row["context"] + "\0" + row["answer"]).encode()).hexdigest()
            if digest in seen:
                found.add((seen[digest], row["key"]))
            seen.setdefault(digest, row["key"])
    else:
        near = NearDuplicates()
        for row in made:
            near.add(row["key"], "train", row["context"], row["answer"])
        found = {(pair.first, pair.second) for pair in near.pairs}
    seconds = time.perf_counter() - started
    group = clusters(planted)
    # a found pair is right when both rows are copies of one original (two copies of it too)
    true = {pair for pair in found if pair[0] in group and group[pair[0]] == group.get(pair[1])}
    return {
        "rows": size,
        "rows_per_second": size / seconds,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "precision": len(true) / len(found) if found else 1.0,
        "recall": len(planted & found) / len(planted) if planted else 1.0,
        "planted": len(planted),
        "found": len(found),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # SIZE TEXTS METHOD, in a child
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(int(args.one[0]), Path(args.one[1]), args.one[2])))
        return
    work = Path("/tmp/dedup-scale")
    texts_file = work / "paragraphs.json"
    work.mkdir(parents=True, exist_ok=True)
    texts = paragraphs(installed_readmes(work / "readmes"))
    texts_file.write_text(json.dumps(texts))
    print(
        f"{len(texts)} paragraphs of installed READMEs; a near-duplicate planted in every {PLANT_EVERY} rows"
    )
    print(f"{'rows':>8} {'method':>8} {'rows/s':>9} {'peak MB':>8} {'precision':>10} {'recall':>7}")
    for size in args.sizes:
        results = {}
        for method in ("exact", "minhash"):
            command = [sys.executable, __file__, "--one", str(size), str(texts_file), method]
            results[method] = json.loads(
                subprocess.run(command, capture_output=True, text=True, check=True).stdout
            )
            r = results[method]
            print(
                f"{size:>8} {method:>8} {r['rows_per_second']:>9.0f} {r['peak_mb']:>8.0f} "
                f"{r['precision']:>10.3f} {r['recall']:>7.3f}"
            )
        ratio = results["exact"]["rows_per_second"] / results["minhash"]["rows_per_second"]
        print(f"{size:>8}: MinHash takes {ratio:.0f}x the time of exact hashing per row")


if __name__ == "__main__":
    main()
