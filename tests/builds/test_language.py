"""`--language L` makes the build's questions, answers and edits in L: every request it sends asks
for text in L, and its rows say L; an English build's requests are what they always were, so
its cache still answers them."""

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.view.samples import load_samples

from ..support.documents import respond, write_readmes
from ..support.scripted import ScriptedBackend

ASKED = "Write in German: every sentence you write is in German"


def system_messages(backend: ScriptedBackend) -> list[str]:
    return [r.messages[0].content for call in backend.calls for r in call if r.messages[0].role == "system"]


def test_a_build_in_german_asks_for_german_and_an_english_one_asks_as_before(tmp_path):
    readmes = str(write_readmes(tmp_path / "readmes"))
    german, english = ScriptedBackend(respond), ScriptedBackend(respond)
    run_build(Recipe(source="readme", input=readmes, out=tmp_path / "de", language="de", limit=3), german)
    run_build(Recipe(source="readme", input=readmes, out=tmp_path / "en", limit=3), english)
    asked = system_messages(german)
    assert asked and all(ASKED in message for message in asked)
    assert not any("Write in" in message for message in system_messages(english))
    assert {sample.language for sample in load_samples(tmp_path / "de")} == {"de"}
