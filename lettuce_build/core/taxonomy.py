"""The unified hallucination taxonomy: categories, subcategories, definitions and label maps.

Two axes: the *category* says how a span relates to the context, the
*subcategory* which surface element is wrong. Prompts quote the one-line
definitions below verbatim, so prompts and taxonomy cannot drift apart.

Native labels of upstream sources and of our own injection menus are turned
into (category, subcategory) pairs by `map_label`, which raises on anything it
does not know: a silent fallback is how an empty category once reached a
published dataset.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import regex
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lettuce_build.core.errors import TaxonomyError

SUPPORTED = "supported"
CONTRADICTION = "contradiction"
UNSUPPORTED_ADDITION = "unsupported_addition"
FABRICATED_REFERENCE = "fabricated_reference"
OMISSION = "omission"

#: The categories a span label may carry (``supported`` is the default class, never a label).
INJECTABLE_CATEGORIES: tuple[str, ...] = (CONTRADICTION, UNSUPPORTED_ADDITION, FABRICATED_REFERENCE)

CATEGORY_DEFINITIONS: dict[str, str] = {
    SUPPORTED: "The span is entailed by the context.",
    CONTRADICTION: "The context says one thing and the span asserts something incompatible with it.",
    UNSUPPORTED_ADDITION: "The span is plausible but neither stated nor implied by the context.",
    FABRICATED_REFERENCE: (
        "The span names something (identifier, section, file, entity, attribute) "
        "that appears nowhere in the context."
    ),
}

#: Document-level flags: problems that cannot be localised to a span.
DOCUMENT_LEVEL_DEFINITIONS: dict[str, str] = {
    OMISSION: "The answer leaves out content the context requires; it is a flag on the sample.",
}

BUILTIN_SUBCATEGORIES: dict[str, dict[str, str]] = {
    CONTRADICTION: {
        "numerical": "A number, count or quantity that disagrees with the context.",
        "temporal": "A date, time or ordering that disagrees with the context.",
        "entity": "A named thing (person, place, library, commit) swapped for another.",
        "relational": "A relation or mapping between entities that the context states differently.",
        "value": "A value, argument, setting or condition that differs from the context.",
    },
    UNSUPPORTED_ADDITION: {
        "claim": "A standalone factual claim the context does not support.",
        "elaboration": "Added explanatory detail the context does not support.",
        "subjective": "An opinion or evaluation the context does not express.",
        "behavior": "A described behaviour or effect the context does not support.",
    },
    FABRICATED_REFERENCE: {
        "entity": "An entity that is absent from the context.",
        "section": "A section, line number or location that does not exist in the context.",
        "identifier": "A function, method, class or variable name absent from the context.",
        "attribute": "A field or property name absent from the context.",
    },
}


class Taxonomy(BaseModel):
    """Categories with their subcategories and one-line definitions.

    The categories are fixed; subcategories are an open set a user may extend
    with `Taxonomy.extended`, keeping the built-in ones as the contract.
    """

    model_config = ConfigDict(frozen=True)

    subcategories: dict[str, dict[str, str]] = Field(
        default_factory=lambda: {k: dict(v) for k, v in BUILTIN_SUBCATEGORIES.items()}
    )

    @property
    def categories(self) -> tuple[str, ...]:
        return INJECTABLE_CATEGORIES

    def subcategory_names(self) -> list[str]:
        """Distinct subcategory names in definition order (``entity`` appears once)."""
        seen: dict[str, None] = {}
        for category in INJECTABLE_CATEGORIES:
            for name in self.subcategories[category]:
                seen.setdefault(name, None)
        return list(seen)

    def is_valid(self, category: str, subcategory: str | None) -> bool:
        if category not in INJECTABLE_CATEGORIES:
            return False
        return subcategory is None or subcategory in self.subcategories[category]

    def definition(self, category: str, subcategory: str | None = None) -> str:
        """The one-line definition prompts quote for a category or a (category, subcategory)."""
        if subcategory is None:
            if category not in CATEGORY_DEFINITIONS:
                raise TaxonomyError(f"unknown category {category!r}")
            return CATEGORY_DEFINITIONS[category]
        if not self.is_valid(category, subcategory):
            raise TaxonomyError(
                f"unknown subcategory {subcategory!r} for category {category!r}; "
                f"allowed: {sorted(self.subcategories.get(category, {}))}"
            )
        return self.subcategories[category][subcategory]

    def extended(self, additions: dict[str, dict[str, str]]) -> Taxonomy:
        """A new taxonomy with extra subcategories; built-ins cannot be redefined."""
        merged = {k: dict(v) for k, v in self.subcategories.items()}
        for category, subs in additions.items():
            if category not in INJECTABLE_CATEGORIES:
                raise TaxonomyError(
                    f"cannot extend unknown category {category!r}; allowed: {list(INJECTABLE_CATEGORIES)}"
                )
            for name, definition in subs.items():
                if not regex.fullmatch(r"[a-z][a-z0-9_]*", name):
                    raise TaxonomyError(f"subcategory name {name!r} must be lower_snake_case")
                if name in BUILTIN_SUBCATEGORIES[category]:
                    raise TaxonomyError(f"subcategory {category}/{name} is built in and cannot be redefined")
                if not definition.strip():
                    raise TaxonomyError(f"subcategory {category}/{name} needs a one-line definition")
                merged[category][name] = definition.strip()
        return Taxonomy(subcategories=merged)

    @classmethod
    def from_file(cls, path: str | Path) -> Taxonomy:
        """The built-in taxonomy extended by a YAML or JSON file.

        The file holds ``{"subcategories": {category: {name: definition}}}``.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as err:
            raise TaxonomyError(f"{path}: cannot read taxonomy extension: {err}") from err
        try:
            extension = _TaxonomyFile.model_validate(data)
        except ValidationError as err:
            raise TaxonomyError(f"{path}: {err}") from err
        return DEFAULT_TAXONOMY.extended(extension.subcategories)


class _TaxonomyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subcategories: dict[str, dict[str, str]]


DEFAULT_TAXONOMY = Taxonomy()


class MappedLabel(BaseModel):
    """Where a native label lands in the taxonomy.

    ``category`` is one of the injectable categories, or ``omission`` for a
    document-level flag (then ``subcategory`` is None).
    """

    model_config = ConfigDict(frozen=True)

    category: str
    subcategory: str | None = None

    @property
    def document_level(self) -> bool:
        return self.category == OMISSION


def _m(category: str, subcategory: str | None = None) -> MappedLabel:
    return MappedLabel(category=category, subcategory=subcategory)


#: Native label maps, keyed by source name, then by the native label as the source spells it.
LABEL_MAPS: dict[str, dict[str, MappedLabel]] = {
    "ragtruth": {
        "Evident Conflict": _m(CONTRADICTION),
        "Subtle Conflict": _m(CONTRADICTION),
        "Evident Baseless Info": _m(UNSUPPORTED_ADDITION, "claim"),
        "Subtle Baseless Info": _m(UNSUPPORTED_ADDITION, "elaboration"),
    },
    "markdown": {
        "NUMERICAL": _m(CONTRADICTION, "numerical"),
        "TEMPORAL": _m(CONTRADICTION, "temporal"),
        "ENTITY": _m(CONTRADICTION, "entity"),
        "RELATIONAL": _m(CONTRADICTION, "relational"),
        "FABRICATED": _m(FABRICATED_REFERENCE, "entity"),
        "CLAIM": _m(UNSUPPORTED_ADDITION, "claim"),
    },
    "paper": {
        "NUMERICAL": _m(CONTRADICTION, "numerical"),
        "ENTITY": _m(CONTRADICTION, "entity"),
        "RELATIONAL": _m(CONTRADICTION, "relational"),
        "METHODOLOGICAL": _m(CONTRADICTION, "value"),
        "CITATIONAL": _m(CONTRADICTION, "entity"),
    },
    "code_agent": {
        "wrong_implementation": _m(CONTRADICTION, "value"),
        "unrequested_change": _m(UNSUPPORTED_ADDITION, "behavior"),
        "fabricated_api": _m(FABRICATED_REFERENCE, "identifier"),
        "omission": _m(OMISSION),
    },
    "legacy_code": {
        "structural": _m(FABRICATED_REFERENCE, "identifier"),
        "behavioral": _m(CONTRADICTION, "value"),
        "semantic": _m(UNSUPPORTED_ADDITION, "behavior"),
    },
    "fava": {
        "Entity": _m(CONTRADICTION, "entity"),
        "Relation": _m(CONTRADICTION, "relational"),
        "Contradictory": _m(CONTRADICTION),
        "Invented": _m(FABRICATED_REFERENCE, "entity"),
        "Subjective": _m(UNSUPPORTED_ADDITION, "subjective"),
        "Unverifiable": _m(UNSUPPORTED_ADDITION, "claim"),
    },
    "prose": {
        "FACTUAL": _m(CONTRADICTION, "entity"),
        "TEMPORAL": _m(CONTRADICTION, "temporal"),
        "NUMERICAL": _m(CONTRADICTION, "numerical"),
        "RELATIONAL": _m(CONTRADICTION, "relational"),
        "CONTEXTUAL": _m(UNSUPPORTED_ADDITION, "claim"),
        "OMISSION": _m(OMISSION),
        "FABRICATED_ENTITY": _m(FABRICATED_REFERENCE, "entity"),
        "SUBJECTIVE": _m(UNSUPPORTED_ADDITION, "subjective"),
        "UNVERIFIABLE": _m(UNSUPPORTED_ADDITION, "claim"),
    },
}


def _normalise(label: str) -> str:
    # Models and upstream files disagree on case and on "_" vs " " ("Evident_Conflict",
    # "wrong implementation"); those are spellings of one label, not different labels.
    return regex.sub(r"[\s_\-]+", "_", label.strip()).casefold()


_NORMALISED_MAPS: dict[str, dict[str, MappedLabel]] = {
    source: {_normalise(native): mapped for native, mapped in table.items()}
    for source, table in LABEL_MAPS.items()
}


def map_label(native: str, source: str) -> MappedLabel:
    """Map a source's native label to the taxonomy; raise `TaxonomyError` on anything unknown."""
    if source not in LABEL_MAPS:
        raise TaxonomyError(f"unknown label source {source!r}; known sources: {sorted(LABEL_MAPS)}")
    if not isinstance(native, str):
        raise TaxonomyError(f"{source}: native label must be a string, got {type(native).__name__}")
    mapped = _NORMALISED_MAPS[source].get(_normalise(native))
    if mapped is None:
        raise TaxonomyError(f"{source}: unknown native label {native!r}; allowed: {list(LABEL_MAPS[source])}")
    return mapped


_CAPITALISED_TOKEN = regex.compile(r"\b\p{Lu}[\p{L}\p{N}_\-]+")


def refine_ragtruth(mapped: MappedLabel, span_text: str, context: str) -> MappedLabel:
    """RAGTruth's optional refinement: a Baseless span naming an entity the context never mentions.

    A Baseless (unsupported_addition) span that contains a capitalised token of
    length > 1 whose lowercase form is absent from the lowercased context
    becomes fabricated_reference/entity. Other labels pass through unchanged.
    """
    if mapped.category != UNSUPPORTED_ADDITION:
        return mapped
    lowered_context = context.lower()
    for token in _CAPITALISED_TOKEN.findall(span_text):
        if len(token) > 1 and token.lower() not in lowered_context:
            return _m(FABRICATED_REFERENCE, "entity")
    return mapped


class SampleCategory(BaseModel):
    category: str | None
    subcategory: str | None


def sample_category(spans: Sequence[tuple[str, str | None]]) -> SampleCategory:
    """The sample-level (category, subcategory) from its spans' (category, subcategory) pairs.

    Category: the majority over spans; a tie goes to the category whose first
    span comes first. Subcategory: the most common non-null subcategory inside
    that category, ties again to the first seen. Clean samples: both None.
    """
    if not spans:
        return SampleCategory(category=None, subcategory=None)
    category = _most_common_first_seen(c for c, _ in spans)
    subcategory = _most_common_first_seen(s for c, s in spans if c == category and s is not None)
    return SampleCategory(category=category, subcategory=subcategory)


def _most_common_first_seen(values: Iterable[str]) -> str | None:
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for i, value in enumerate(values):
        counts[value] += 1
        first_seen.setdefault(value, i)
    if not counts:
        return None
    return max(counts, key=lambda v: (counts[v], -first_seen[v]))
