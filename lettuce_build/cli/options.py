"""Option types and options more than one command takes, declared once."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class FloatRange(click.FloatRange):
    """click's FloatRange, which also refuses NaN (it fails every comparison, so the range alone
    lets it through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


#: a share: a number from 0 to 1
SHARE = FloatRange(0.0, 1.0)


class _Price(click.ParamType):
    """Dollars per million prompt and completion tokens, as ``IN/OUT`` (``3/15``)."""

    name = "price"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[float, float]:
        if isinstance(value, tuple):
            return value
        parts = str(value).split("/")
        try:
            prices = tuple(float(part) for part in parts)
        except ValueError:
            prices = ()
        if len(prices) != 2 or not all(0.0 <= p < float("inf") for p in prices):
            self.fail(f"{value!r} is not IN/OUT dollars per million tokens, like 3/15", param, ctx)
        return prices[0], prices[1]


PRICE = _Price()


def folder(exists: bool = False) -> click.Path:
    """A folder option, resolved once here: later code may run in other working directories."""
    return click.Path(exists=exists, file_okay=False, path_type=Path, resolve_path=True)


def count(name: str, help_text: str, default: int | None = None, minimum: int = 1) -> Decorator:
    """A whole-number option with a lower bound (click refuses 0 and negatives with one line)."""
    return click.option(
        name,
        default=default,
        show_default=default is not None,
        type=click.IntRange(min=minimum),
        help=help_text,
    )


def share(name: str, default: float, help_text: str) -> Decorator:
    return click.option(name, default=default, show_default=True, type=SHARE, help=help_text)


def combined(*decorators: Decorator) -> Decorator:
    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


TAXONOMY_FILE = click.option(
    "--taxonomy-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path, resolve_path=True),
    help="YAML/JSON file adding subcategories: {subcategories: {category: {name: definition}}}.",
)


def instances_option(help_text: str) -> Decorator:
    return click.option("--instances", default="princeton-nlp/SWE-bench", show_default=True, help=help_text)


def load_taxonomy(path: Path | None) -> Any:
    from lettuce_build.core.taxonomy import DEFAULT_TAXONOMY, Taxonomy

    return DEFAULT_TAXONOMY if path is None else Taxonomy.from_file(path)
