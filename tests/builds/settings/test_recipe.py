"""Recipes: every build writes the one it ran; `build --config` replays it from the cache; bad
recipe files are one-line errors naming file and field; engine settings reach vLLM's options."""

import pytest
import yaml
from click.testing import CliRunner

from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.cli import main
from lettuce_build.llm.factory import make_backend
from lettuce_build.llm.settings import EngineSettings
from lettuce_build.llm.vllm_backend import engine_kwargs

from ...support.documents import respond, write_readmes
from ...support.openai_server import serve


def summary(output):
    """The summary a build prints, without its bars and timings."""
    return output[output.index("lettucedetect-readme:") :].split("time:")[0]


def test_a_cli_build_writes_its_recipe_and_the_recipe_replays_it_with_no_model_call(tmp_path, monkeypatch):
    monkeypatch.setenv("LB_TEST_KEY", "sk-never-written")
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    args = ["--source", "readme", "--input", str(docs), "--out", str(out), "--backend", "openai"]
    with serve(respond) as url:
        first = CliRunner().invoke(
            main,
            [
                "build",
                *args,
                "--base-url",
                url,
                "--api-key-env",
                "LB_TEST_KEY",
                "--ratio",
                "1",
                "--limit",
                "3",
            ],
        )
        assert first.exit_code == 0, first.output
    recipe = yaml.safe_load((out / "recipe.yaml").read_text())
    assert recipe["source"] == "readme" and recipe["ratio"] == 1.0 and recipe["limit"] == 3
    assert (
        recipe["api_key_env"] == "LB_TEST_KEY" and "sk-never-written" not in (out / "recipe.yaml").read_text()
    )
    # the endpoint is gone: a replay that asked the model anything would fail
    replay = CliRunner().invoke(main, ["build", "--config", str(out / "recipe.yaml")])
    assert replay.exit_code == 0, replay.output
    assert summary(first.output) == summary(replay.output)  # the same samples, the same summary
    changed = CliRunner().invoke(main, ["build", "--config", str(out / "recipe.yaml"), "--limit", "2"])
    assert changed.exit_code == 0 and "work items 2" in changed.output  # a flag overrides the recipe


def test_a_recipe_with_a_wrong_field_is_a_one_line_error_naming_file_and_field(tmp_path):
    bad = tmp_path / "recipe.yaml"
    bad.write_text("source: readme\nout: o\nratio: 1.5\n")
    result = CliRunner().invoke(main, ["build", "--config", str(bad)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"{bad}: ratio: Input should be less than or equal to 1" in result.output
    bad.write_text("source: readme\nout: o\nratoi: 0.5\n")
    assert (
        "ratoi: Extra inputs are not permitted"
        in CliRunner().invoke(main, ["build", "--config", str(bad)]).output
    )


def test_engine_settings_reach_the_vllm_options_over_the_measured_cpu_defaults():
    engine = EngineSettings(
        max_model_len=2048, dtype="float32", model_revision="abc123", tensor_parallel_size=1
    )
    backend = make_backend("vllm", "smollm2-135m", engine=engine)
    assert backend.options.max_model_len == 2048 and backend.options.dtype == "float32"
    assert engine_kwargs(backend.options)["revision"] == "abc123"
    assert backend.options.enforce_eager  # the CPU default that was not overridden
    thinking_off = EngineSettings(chat_template_kwargs={"enable_thinking": False})
    assert make_backend("vllm", "m", engine=thinking_off).options.chat_template_kwargs == {
        "enable_thinking": False
    }
    assert Recipe(source="readme", out="o", engine=engine).to_yaml().count("max_model_len: 2048") == 1


def test_a_recipe_never_writes_credentials_of_the_base_url():
    recipe = Recipe(
        source="readme", out="o", backend="openai", base_url="https://user:sk-secret@host/v1?api-key=k1"
    )
    text = recipe.to_yaml()
    assert "sk-secret" not in text and "k1" not in text and "host/v1" in text


def test_sampling_and_prompts_flags_go_into_the_recipe_and_a_bad_one_is_a_one_line_error(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve(respond) as url:
        args = ["build", "--source", "readme", "--input", str(docs), "--out", str(out), "--backend", "openai"]
        result = CliRunner().invoke(main, [*args, "--base-url", url, "--sampling", "answer:max_tokens=300"])
        assert result.exit_code == 0, result.output
    assert yaml.safe_load((out / "recipe.yaml").read_text())["sampling"] == {"answer": {"max_tokens": 300}}
    bad = CliRunner().invoke(main, [*args, "--sampling", "answer:top_p=1"])
    assert (
        bad.exit_code == 2
        and "expected STAGE:FIELD=VALUE, FIELD one of temperature, max_tokens, repetition_penalty"
        in bad.output
    )


def test_every_engine_setting_of_a_recipe_survives_build_config(tmp_path, monkeypatch):
    import lettuce_build.api

    engine = {
        "tensor_parallel_size": 2,
        "max_model_len": 4096,
        "gpu_memory_utilization": 0.8,
        "dtype": "float32",
        "chat_template_kwargs": {"enable_thinking": False},
        "model_revision": "main",
        "max_num_seqs": 7,
        "max_num_batched_tokens": 4096,
        "enforce_eager": False,
        "distributed_executor_backend": "mp",
        "trust_remote_code": True,
    }
    assert set(engine) == set(EngineSettings.model_fields)  # a new setting must join this test
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump({"source": "readme", "out": str(tmp_path / "out"), "engine": engine}))
    seen = []

    def capture(recipe, **_):  # the recipe the command would build, and no build
        seen.append(recipe)
        raise SystemExit(0)

    monkeypatch.setattr(lettuce_build.api, "build", capture)
    CliRunner().invoke(main, ["build", "--config", str(path)])
    assert seen[0].engine == EngineSettings(**engine)
    # a flag given beside the recipe wins over it, and --engine-arg reaches every setting
    seen.clear()
    CliRunner().invoke(
        main, ["build", "--config", str(path), "--dtype", "bfloat16", "--engine-arg", "max_num_seqs=9"]
    )
    assert seen[0].engine.dtype == "bfloat16" and seen[0].engine.max_num_seqs == 9


def test_the_recipe_lists_the_stages_of_its_mode_and_a_replay_of_other_stages_is_refused(tmp_path):
    import lettuce_build
    from lettuce_build.core.errors import RecipeError
    from lettuce_build.sources.registry import get_source

    from ...support.scripted import ScriptedBackend

    docs = write_readmes(tmp_path / "docs")
    inject = lettuce_build.build(
        "readme", input=str(docs), out=tmp_path / "a", backend=ScriptedBackend(respond)
    )
    assert Recipe.read(inject.recipe_path).stages == ["question", "answer", "inject"]
    pipeline = get_source("readme").pipeline()
    assert [type(s).__name__ for s in pipeline.generate] == ["QuestionStage", "AnswerStage", "GenerateStage"]
    assert get_source("psiloqa").pipeline().generate is None  # its spans come with its data
    changed = yaml.safe_load(inject.recipe_path.read_text())
    changed["stages"] = ["question", "answer", "judge"]
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(changed))
    with pytest.raises(RecipeError, match=r"the recipe ran \['question', 'answer', 'judge'\]"):
        lettuce_build.build(recipe=tmp_path / "old.yaml", backend=ScriptedBackend(respond))
