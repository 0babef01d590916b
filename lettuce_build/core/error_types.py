"""The error types a build asks for (``--error-types``): a category of the taxonomy, or one of its
subcategories as ``category/subcategory``. They restrict what the injector is asked to make and
what may be published."""

from __future__ import annotations

from collections.abc import Sequence

from lettuce_build.core.errors import TaxonomyError
from lettuce_build.core.taxonomy import DEFAULT_TAXONOMY, Taxonomy


def error_type_names(taxonomy: Taxonomy = DEFAULT_TAXONOMY) -> list[str]:
    """Every name ``--error-types`` takes: the categories, then each ``category/subcategory``."""
    return [
        *taxonomy.categories,
        *(f"{c}/{s}" for c in taxonomy.categories for s in taxonomy.subcategories[c]),
    ]


def checked_error_types(types: Sequence[str], taxonomy: Taxonomy = DEFAULT_TAXONOMY) -> list[str]:
    """``types`` in order, each once; an unknown one is a `TaxonomyError` that lists the names."""
    valid = error_type_names(taxonomy)
    unknown = [t for t in types if t not in valid]
    if unknown:
        raise TaxonomyError(f"unknown error type(s) {unknown}; the taxonomy's: {', '.join(valid)}")
    return list(dict.fromkeys(types))


def targets(types: Sequence[str], taxonomy: Taxonomy = DEFAULT_TAXONOMY) -> list[tuple[str, str]]:
    """Every (category, subcategory) ``types`` allow (none given: every one of the taxonomy)."""
    every = [(c, s) for c in taxonomy.categories for s in taxonomy.subcategories[c]]
    return [(c, s) for c, s in every if allows(types, c, s)]


def allows(types: Sequence[str], category: str, subcategory: str | None) -> bool:
    """Whether a span of ``category``/``subcategory`` is one of ``types`` (none given: any)."""
    return not types or category in types or f"{category}/{subcategory}" in types
