"""A shard of a readme build in a subprocess, slowly, for the kill -9 test.

python -m tests.support.shard_build DOCS OUT SHARD DELAY LOG
"""

from __future__ import annotations

import sys
from pathlib import Path

import lettuce_build
from tests.support.documents import flaky_respond
from tests.support.scripted import ScriptedBackend


def main() -> None:
    docs, out, shard, delay, log = sys.argv[1:6]
    backend = ScriptedBackend(flaky_respond, model="smollm2-135m", delay=float(delay), log=Path(log))
    lettuce_build.build("readme", input=docs, out=out, shard=shard, batch_size=4, backend=backend)


if __name__ == "__main__":
    main()
