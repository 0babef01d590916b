"""One build's walk through the package, from the command line to the written dataset: how many
of the package's modules it enters, how many of them it enters again after leaving them (each
module counted once), and how many distinct calls climb from a lower layer into a higher one
(the layers of tests/test_layers.py). A readme build of the suite's three READMEs, in this
process, over a loopback endpoint that answers as the suite's scripted model does.

Two walks are counted: every call between two of the package's modules, and the recipe's own:
only the calls that are handed the build's settings (a recipe, its options or a part of them,
as an argument or as the object called), which is where a recipe unpacked and packed again
shows. For the recipe's walk, a return is counted each time (and per module) a module is
entered again after the recipe left it.

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


#: the models that hold a build's settings, and the run context and records that carry them on
#: (builds/running/context.py); by name: the walk is also run on older trees
SETTINGS = {
    "Recipe",
    "BuildOptions",
    "ItemOptions",
    "LoadOptions",
    "EndpointSettings",
    "EngineSettings",
    "ModelChoice",
    "RunSpec",
    "RunContext",
    "LoopSettings",
    "BuildState",
}


def holds_settings(frame: FrameType) -> bool:
    """Whether a call that just began was handed the build's settings (its arguments are all
    its locals yet)."""
    return any(
        type(value).__name__ in SETTINGS and type(value).__module__.startswith(PACKAGE)
        for value in frame.f_locals.values()
    )


class Walk:
    """Module-to-module calls inside the package, as they happen (``recipe``: only the calls
    handed the build's settings)."""

    def __init__(self, recipe: bool = False) -> None:
        self.recipe = recipe
        self.lock = threading.Lock()
        self.active: Counter[str] = Counter()
        self.entered: set[str] = set()
        self.returned_to: set[str] = set()
        self.returns = 0
        self.climbs: set[tuple[str, str]] = set()
        #: the recipe's walk: the frames it counted (a return ends only those)
        self.counted: set[int] = set()
        #: per (caller, function entered again), how many times
        self.events: Counter[tuple[str, str]] = Counter()
        #: per (caller, function of a module still on the stack it called), how many times
        self.callbacks: Counter[tuple[str, str]] = Counter()

    @staticmethod
    def module(frame: FrameType | None) -> str | None:
        name = frame.f_globals.get("__name__", "") if frame is not None else ""
        return name if name == PACKAGE or name.startswith(PACKAGE + ".") else None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or (here := self.module(frame)) is None:
            return
        with self.lock:
            if event == "return":
                if not self.recipe or id(frame) in self.counted:
                    self.counted.discard(id(frame))
                    self.active[here] -= 1
                return
            if self.recipe:
                if not holds_settings(frame):
                    return
                self.counted.add(id(frame))
            caller, outer = None, frame.f_back
            while outer is not None and (caller := self.module(outer)) is None:
                outer = outer.f_back
            if caller is not None and caller != here:
                if here in self.entered and self.active[here] == 0:
                    self.returned_to.add(here)
                    self.returns += 1
                    self.events[(caller, f"{here}.{frame.f_code.co_name}")] += 1
                if self.active[here] > 0:  # called back from below: the walk climbs back up
                    self.callbacks[(caller, f"{here}.{frame.f_code.co_name}")] += 1
                if LAYERS[layer_of(here)] > LAYERS[layer_of(caller)]:
                    self.climbs.add((caller, here))
            self.entered.add(here)
            self.active[here] += 1


def walked(recipe: bool) -> Walk:
    """One build, walked."""
    from lettuce_build.cli import main as cli

    with tempfile.TemporaryDirectory() as temporary, serve(respond) as url:
        docs = write_readmes(Path(temporary) / "docs")
        args = ["build", "--source", "readme", "--input", str(docs), "--out", f"{temporary}/out"]
        args += ["--backend", "openai", "--base-url", url, "--model", "scripted"]
        walk = Walk(recipe)
        threading.setprofile(walk)
        sys.setprofile(walk)
        try:
            cli.main(args, standalone_mode=False)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    return walk


def main() -> None:
    for recipe in (False, True):
        walk = walked(recipe)
        print("the recipe's walk (calls handed the settings):" if recipe else "every call:")
        print(f"  modules entered: {len(walk.entered)}")
        print(
            f"  modules entered again after being left: {len(walk.returned_to)}"
            + (f" ({walk.returns} returns)" if recipe else "")
        )
        print(f"  climbs from a lower layer into a higher one: {len(walk.climbs)}")
        for caller, callee in sorted(walk.climbs):
            print(f"    {caller} -> {callee}")
        if recipe:
            print("  entered: " + ", ".join(sorted(m.removeprefix(PACKAGE + ".") for m in walk.entered)))
            for (caller, entered), times in sorted(walk.events.items()):
                print(f"    {caller} -> {entered}: {times}")
            print(f"  calls back up into a module still on the stack: {sum(walk.callbacks.values())}")
            for (caller, entered), times in sorted(walk.callbacks.items()):
                print(f"    {caller} -> {entered}: {times}")


if __name__ == "__main__":
    main()
