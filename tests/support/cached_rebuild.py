"""Re-run the capital stage in a fresh process and report whether vLLM was ever imported.

python -m tests.support.cached_rebuild BUILD_DIR
"""

from __future__ import annotations

import json
import sys

from datasets import Dataset

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.engine.completions import Completions
from lettuce_build.engine.runner import Runner
from lettuce_build.llm.vllm_backend import VLLMBackend
from tests.support.stages import COUNTRIES, CapitalStage


def main() -> None:
    items = Dataset.from_list([{"key": c, "country": c} for c in COUNTRIES])
    backend = VLLMBackend("smollm2-135m")
    result = Runner(Completions(backend, BuildDir(sys.argv[1]).open_cache())).run(items, CapitalStage())
    print(
        json.dumps(
            {
                "hits": result.stats.cache_hits,
                "misses": result.stats.cache_misses,
                "engine_started": backend.started,
                "vllm_imported": "vllm" in sys.modules,
                "cities": list(result.ok["city"]),
            }
        )
    )


if __name__ == "__main__":
    main()
