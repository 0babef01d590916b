"""Pattern presets are data: one module per preset, each defining a `PatternSet` named PRESET."""

from __future__ import annotations

from lettuce_build.sift.options import PresetName
from lettuce_build.sift.patterns import PatternSet
from lettuce_build.sift.presets import v1, v2, v3

PRESETS: dict[PresetName, PatternSet] = {"v1": v1.PRESET, "v2": v2.PRESET, "v3": v3.PRESET}


def load_preset(name: PresetName) -> PatternSet:
    """The preset ``name`` (the command line's choices are `PresetName`'s: no other reaches here)."""
    return PRESETS[name]
