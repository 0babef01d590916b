"""The viewer: samples in the terminal with their spans, one self-contained page filtered by split
and category, checked in a real headless Chromium from a screenshot."""

import shutil
import subprocess

import pytest
from click.testing import CliRunner
from PIL import Image

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.cli import main
from lettuce_build.view.samples import CATEGORY_STYLES, iter_samples, load_samples, page_html

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def built(tmp_path):
    docs = write_readmes(tmp_path / "docs")
    out = tmp_path / "out"
    run_build(Recipe(source="readme", input=str(docs), out=out, ratio=0.5), ScriptedBackend(respond))
    return out


def test_show_prints_samples_with_their_spans_and_types(built):
    result = CliRunner().invoke(main, ["show", str(built), "-n", "10", "--category", "clean"])
    assert result.exit_code == 0, result.output
    assert "clean sample: no hallucinated spans" in result.output and "question" in result.output
    hallucinated = [s for s in load_samples(built) if s.labels]
    span = hallucinated[0].labels[0]
    shown = CliRunner().invoke(main, ["show", str(built), "--category", span.category, "-n", "1"])
    assert f"{span.category}/{span.subcategory or '-'} ({span.label}): {span.text!r}" in shown.output
    failures = CliRunner().invoke(main, ["show", str(built), "--failures"])
    assert failures.exit_code == 0


def test_a_build_without_samples_says_where_its_failures_are(tmp_path):
    from lettuce_build.builds.storage.folder import BuildDir, Manifest

    BuildDir(tmp_path / "empty").write_manifest(Manifest(source="readme", status="finished"))
    result = CliRunner().invoke(main, ["show", str(tmp_path / "empty")])
    assert (
        result.exit_code == 1
        and "the build made no samples; its failures: `lettuce-build failures" in result.output
    )


def test_the_page_marks_every_span_with_its_type_and_needs_no_other_file(built, tmp_path):
    page = tmp_path / "page.html"
    assert CliRunner().invoke(main, ["show", str(built), "--html", str(page)]).exit_code == 0
    text = page.read_text()
    samples = load_samples(built)
    spans = [span for sample in samples for span in sample.labels]
    assert text.count("<mark style=") == len(spans) + len(CATEGORY_STYLES)  # the spans and the legend
    for span in spans:
        assert f'data-type="{span.category}/{span.subcategory or "-"} ({span.label})"' in text
    assert "src=" not in text and "href=" not in text  # no external script, style or image


def test_the_page_is_written_a_sample_at_a_time_as_it_was_made_whole(built, tmp_path):
    """`show --html` streams the samples to the page; the page is the one made in memory."""
    page = tmp_path / "page.html"
    assert (
        CliRunner().invoke(main, ["show", str(built), "--html", str(page), "--split", "train"]).exit_code == 0
    )
    train = load_samples(built, split="train")
    assert page.read_text() == page_html(train, f"{built.name}: {len(train)} samples")
    assert list(iter_samples(built, split="train")) == train
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["page.html"]  # no scratch file left


def colours(png, top):
    """The set of RGB colours below ``top`` pixels of a screenshot."""
    image = Image.open(png).convert("RGB")
    width, height = image.size
    return {image.getpixel((x, y)) for x in range(0, width, 2) for y in range(top, height, 2)}


def hex_rgb(color):
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (make install adds Debian's package)")
def test_in_a_real_browser_the_filters_show_one_category_and_its_colour_only(built, tmp_path):
    samples = load_samples(built)
    categories = sorted({span.category for sample in samples for span in sample.labels})
    page = tmp_path / "page.html"
    page.write_text(page_html(samples, "test"))
    assert any(not sample.labels for sample in samples) and categories
    for category in [*categories, "clean"]:
        shot = tmp_path / f"{category}.png"
        subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--window-size=1000,1400",
                f"--screenshot={shot}",
                f"file://{page}#category={category}",
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
        seen = colours(shot, top=150)  # below the filter bar and its legend
        shown = {span.category for sample in samples for span in sample.labels} & {
            c
            for sample in samples
            if category in {s.category for s in sample.labels}
            for c in {s.category for s in sample.labels}
        }
        if category != "clean":
            assert hex_rgb(CATEGORY_STYLES[category][1]) in seen
        for hidden in set(CATEGORY_STYLES) - shown:
            assert hex_rgb(CATEGORY_STYLES[hidden][1]) not in seen, (category, hidden)
