"""Both notebooks execute, offline, against small local builds; they are committed without outputs."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.publish.hub import FolderTarget, publish

from .support.documents import respond, write_readmes
from .support.scripted import ScriptedBackend

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def execute(name: str) -> nbformat.NotebookNode:
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        book, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    return book


def text_of(book: nbformat.NotebookNode) -> str:
    return "\n".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for cell in book.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    )


@pytest.mark.parametrize("name", ["explore.ipynb", "build.ipynb"])
def test_notebooks_are_committed_without_outputs(name):
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert all(
        not cell.get("outputs") and not cell.get("execution_count")
        for cell in book.cells
        if cell.cell_type == "code"
    )


def test_the_explore_notebook_runs_on_a_local_dataset(tmp_path, monkeypatch):
    run_build(
        Recipe(source="readme", input=str(write_readmes(tmp_path / "docs")), out=tmp_path / "b", ratio=1.0),
        ScriptedBackend(respond),
    )
    publish(tmp_path / "b", "readme", FolderTarget(tmp_path / "hub", "local/x"), max_failure_rate=1.0)
    monkeypatch.setenv("LB_NOTEBOOK_DATASET", str(tmp_path / "hub"))
    monkeypatch.setenv("LB_NOTEBOOK_CONFIG", "readme")
    book = execute("explore.ipynb")
    output = text_of(book)
    assert "3 hallucinated samples shown" in output and "'contradiction': 3" in output
    assert any(o.get("data", {}).get("image/png") for cell in book.cells for o in cell.get("outputs", []))
    assert any(
        "<mark" in str(o.get("data", {}).get("text/html", ""))
        for c in book.cells
        for o in c.get("outputs", [])
    )


@pytest.mark.usefixtures("real_engine")
def test_the_build_notebook_runs_on_the_embedded_model_from_its_own_documents(tmp_path, monkeypatch):
    monkeypatch.delenv("LB_NOTEBOOK_INPUT", raising=False)  # as written: its inline documents
    monkeypatch.setenv("LB_NOTEBOOK_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("LB_NOTEBOOK_LIMIT", "2")
    monkeypatch.delenv("PUSH_REPO", raising=False)
    output = text_of(execute("build.ipynb"))
    assert "model smollm2-135m on CPU" in output and "2 items ->" in output and "documents in" in output
    assert "your data: 3 rows -> " in output
    assert (tmp_path / "out" / "hub-layout" / "README.md").exists()
    assert (tmp_path / "out" / "recipe.yaml").exists()
