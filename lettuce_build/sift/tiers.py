"""Repository tiers of the sift: how web-facing a repository's code is."""

from __future__ import annotations

TIERS: dict[str, int] = {
    "django/django": 1,
    "pallets/flask": 1,
    "psf/requests": 2,
    "scikit-learn/scikit-learn": 2,
    "pylint-dev/pylint": 2,
    "pytest-dev/pytest": 2,
    "sphinx-doc/sphinx": 3,
}

EXCLUDED_REPOS: frozenset[str] = frozenset(
    {"sympy/sympy", "matplotlib/matplotlib", "mwaskom/seaborn", "pydata/xarray", "astropy/astropy"}
)


def repo_tier(repo: str) -> int | None:
    """1-3 for a tiered repository; None for an excluded or unknown one."""
    return TIERS.get(repo)
