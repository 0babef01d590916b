"""One build's walk through the package, from the command line to the written dataset: how many
of the package's modules it enters, how many of them it enters again after leaving them (each
module counted once), and how many distinct calls climb from a lower layer into a higher one
(the layers of tests/test_layers.py). A readme build of the suite's three READMEs, in this
process, over a loopback endpoint that answers as the suite's scripted model does.

    python benchmarks/recipe_walk.py
"""

from __future__ import annotations

import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's scripted model
from tests.support.documents import respond, write_readmes  # noqa: E402
from tests.support.openai_server import serve  # noqa: E402
from tests.test_layers import LAYERS, layer_of  # noqa: E402

PACKAGE = "lettuce_build"


class Walk:
    """Module-to-module calls inside the package, as they happen."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active: Counter[str] = Counter()
        self.entered: set[str] = set()
        self.returned_to: set[str] = set()
        self.climbs: set[tuple[str, str]] = set()

    @staticmethod
    def module(frame: FrameType | None) -> str | None:
        name = frame.f_globals.get("__name__", "") if frame is not None else ""
        return name if name == PACKAGE or name.startswith(PACKAGE + ".") else None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or (here := self.module(frame)) is None:
            return
        with self.lock:
            if event == "return":
                self.active[here] -= 1
                return
            caller, outer = None, frame.f_back
            while outer is not None and (caller := self.module(outer)) is None:
                outer = outer.f_back
            if caller is not None and caller != here:
                if here in self.entered and self.active[here] == 0:
                    self.returned_to.add(here)
                if LAYERS[layer_of(here)] > LAYERS[layer_of(caller)]:
                    self.climbs.add((caller, here))
            self.entered.add(here)
            self.active[here] += 1


def main() -> None:
    from lettuce_build.cli import main as cli

    with tempfile.TemporaryDirectory() as temporary, serve(respond) as url:
        docs = write_readmes(Path(temporary) / "docs")
        args = ["build", "--source", "readme", "--input", str(docs), "--out", f"{temporary}/out"]
        args += ["--backend", "openai", "--base-url", url, "--model", "scripted"]
        walk = Walk()
        threading.setprofile(walk)
        sys.setprofile(walk)
        try:
            cli.main(args, standalone_mode=False)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    print(f"modules entered: {len(walk.entered)}")
    print(f"modules entered again after being left: {len(walk.returned_to)}")
    print(f"climbs from a lower layer into a higher one: {len(walk.climbs)}")
    for caller, callee in sorted(walk.climbs):
        print(f"  {caller} -> {callee}")


if __name__ == "__main__":
    main()
