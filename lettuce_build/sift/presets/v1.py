"""The broad v1 set (~736 candidates, 40-50% false positives), rebuilt from the spec's list of
how it differed from v2: bare GET/POST, `path(` for routing, `SQL` for database, bare
password/token/session for auth, and no exclusions."""

from lettuce_build.sift.patterns import PatternSet
from lettuce_build.sift.presets.v2 import PRESET as V2

_categories = {name: list(patterns) for name, patterns in V2.categories.items()}
_categories["user_input"] = [r"\brequest\.", r"\bGET\b", r"\bPOST\b"] + _categories["user_input"][3:]
_categories["database"] = _categories["database"] + [r"\bSQL\b"]
_categories["auth"] = _categories["auth"][:6] + [r"\bpassword\b", r"\btoken\b", r"\bsession\b"]
_categories["url_routing"] = _categories["url_routing"][:5] + [r"\bpath\s*\("]

PRESET = PatternSet(
    name="v1",
    description="The first, broad pattern set; kept to show what v2 narrowed.",
    categories=_categories,
    exclusions=[],
)
