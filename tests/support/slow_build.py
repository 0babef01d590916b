"""A build in a subprocess, for the kill -9 test: N items through DoubleStage, slowly.

python -m tests.support.slow_build BUILD_DIR N DELAY LOG RESULT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from datasets import Dataset

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from tests.support.scripted import ScriptedBackend
from tests.support.stages import DoubleStage, correct


def main() -> None:
    build_dir, n, delay, log, result = (
        sys.argv[1],
        int(sys.argv[2]),
        float(sys.argv[3]),
        Path(sys.argv[4]),
        sys.argv[5],
    )
    build = BuildDir(build_dir)
    backend = ScriptedBackend(correct, delay=delay, log=log)
    items = Dataset.from_list([{"key": f"item-{i:04d}", "n": i} for i in range(n)])
    outcome = Runner(Completions(backend, build.open_cache()), batch_size=8).run(items, DoubleStage())
    Path(result).write_text(json.dumps({"keys": list(outcome.ok["key"]), "asked": len(backend.requests)}))


if __name__ == "__main__":
    main()
