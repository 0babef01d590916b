"""A build's cost in dollars (``--price-per-mtok``) and its cap (``--max-cost``): every run is
priced in the summary, manifest and card; a pass that would take the build past the cap is never
sent, and the build stops in one line that says what it spent and how to go on."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import lettuce_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.core.errors import CostCapError, RecipeError
from lettuce_build.publish.hub import FolderTarget, publish
from lettuce_build.view.summary import summary_text

from ..support.documents import respond, write_readmes
from ..support.openai_server import serve

PRICE = (3.0, 15.0)


def dollars(prompt: int, completion: int) -> float:
    return prompt * 3e-6 + completion * 15e-6


def test_every_run_is_priced_in_the_summary_the_manifest_and_the_card(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve(respond) as url:
        first = lettuce_build.build(
            "readme", input=docs, out=out, backend="openai", base_url=url, model="m", price_per_mtok=PRICE
        )
    cost = first.summary.cost
    assert cost.requests > 0 and cost.dollars == pytest.approx(
        dollars(cost.prompt_tokens, cost.completion_tokens)
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["cost"]["dollars"] == pytest.approx(cost.dollars)
    assert f"${cost.dollars:.4f}" in summary_text(first.summary)
    publish(out, "readme", FolderTarget(tmp_path / "hub", "org/x"), max_failure_rate=1.0)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert f"${cost.dollars:.2f} at $3/$15 per million tokens in/out" in card
    assert f"{cost.prompt_tokens:,} prompt and {cost.completion_tokens:,} completion tokens" in card


def test_a_pass_past_the_cap_is_not_sent_and_a_higher_cap_goes_on(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    asked = []

    def counted(request):
        asked.append(request)
        return respond(request)

    settings = {"input": docs, "out": out, "backend": "openai", "model": "m", "price_per_mtok": PRICE}
    with serve(counted) as url:
        # three questions of max_tokens 96 at $15 per million cost about half a cent: the first
        # pass fits a cap of one cent, the answers' pass does not
        with pytest.raises(CostCapError) as stopped:
            lettuce_build.build("readme", base_url=url, max_cost=0.01, **settings)
        sent = len(asked)
        message = str(stopped.value)
        assert message.startswith("--max-cost $0.01: the build has spent $")
        assert "would cost up to $" in message and "of stage answer" in message
        assert "run the same command with --max-cost" in message
        assert sent == 3  # the questions: the pass that would pass the cap sent nothing
        manifest = BuildDir(out).read_manifest()
        assert manifest.status == "failed" and manifest.cost.dollars is not None
        again = lettuce_build.build("readme", base_url=url, max_cost=1.0, **settings)
    assert sum(again.summary.by_split.values()) == 3
    # the questions were cached: the second run asked only what the first had not
    assert len({request.messages for request in asked}) == len(asked) > sent
    assert again.summary.total_cost.dollars <= 1.0


def test_the_cap_counts_what_earlier_runs_spent(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    settings = {"input": docs, "out": out, "backend": "openai", "model": "m", "price_per_mtok": PRICE}
    with serve(respond) as url:
        lettuce_build.build("readme", base_url=url, limit=1, **settings)
        spent = BuildDir(out).read_manifest().cost.dollars
        assert spent and spent > 0
        with pytest.raises(CostCapError, match=f"the build has spent \\${spent:.2f}"):
            lettuce_build.build("readme", base_url=url, max_cost=spent, **settings)


def test_a_cap_needs_a_price_and_the_command_line_says_so_in_one_line(tmp_path):
    with pytest.raises(RecipeError, match="--max-cost needs --price-per-mtok"):
        Recipe.checked({"source": "readme", "out": tmp_path / "o", "max_cost": 1.0})
    docs = write_readmes(tmp_path / "docs")
    with serve(respond) as url:
        result = CliRunner().invoke(
            main,
            ["build", "--source", "readme", "--input", str(docs), "--out", str(tmp_path / "out")]
            + ["--backend", "openai", "--base-url", url, "--model", "m"]
            + ["--price-per-mtok", "3/15", "--max-cost", "0.001"],
        )
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("Error: --max-cost $0.00: the build has spent $0.00 and its next pass")
    assert "Traceback" not in result.output
