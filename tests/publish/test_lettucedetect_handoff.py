"""The hand-off to the detector trainer, with LettuceDetect's own code (the pinned package): its
data classes load an export, its token-level dataset labels exactly our spans (given a
tokenizer with an encoder's pair template), its Trainer trains a tiny encoder on them and its
evaluators run."""

import json
from importlib.util import find_spec

import pytest

import lettuce_build
from lettuce_build.llm.embedded import embedded_model_path

# looked up, not imported: importing LettuceDetect (and torch) costs seconds of every collection
pytestmark = pytest.mark.skipif(find_spec("lettucedetect") is None, reason="lettucedetect is not installed")

MAX_LENGTH = 512


def tokenizer(pair_template: bool):
    """The embedded model's tokenizer; with ``pair_template`` it marks a pair as an encoder's does
    (``<|im_start|> A <|im_end|> B <|im_end|>``, as [CLS] A [SEP] B [SEP])."""
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(embedded_model_path())
    if pair_template:
        start, end = loaded.convert_tokens_to_ids(["<|im_start|>", "<|im_end|>"])
        loaded._tokenizer.post_processor = TemplateProcessing(
            single="<|im_start|> $A <|im_end|>",
            pair="<|im_start|> $A <|im_end|> $B:1 <|im_end|>:1",
            special_tokens=[("<|im_start|>", start), ("<|im_end|>", end)],
        )
    return loaded


@pytest.fixture(scope="module")
def samples(scripted_build, tmp_path_factory):
    from lettucedetect.datasets.hallucination_dataset import HallucinationData

    root = tmp_path_factory.mktemp("handoff")
    lettuce_build.export(scripted_build, format="lettucedetect", out=root / "data.json")
    return HallucinationData.from_json(json.loads((root / "data.json").read_text())).samples


def runs(flags: list[bool], offsets: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each run of consecutive flagged answer tokens, as the characters it covers."""
    found: list[tuple[int, int]] = []
    for index, (flagged, (start, end)) in enumerate(zip(flags, offsets, strict=True)):
        if flagged and index and flags[index - 1]:
            found[-1] = (found[-1][0], end)
        elif flagged:
            found.append((start, end))
    return found


def token_spans(tok, sample, labels) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(what LettuceDetect's labels mark, what our spans cover), as runs of answer tokens."""
    encoding = tok(
        sample.prompt,
        sample.answer,
        truncation="only_first",
        max_length=MAX_LENGTH,
        return_offsets_mapping=True,
    )
    answer = [i for i, seq in enumerate(encoding.sequence_ids()) if seq == 1]
    offsets = [tuple(encoding["offset_mapping"][i]) for i in answer]
    marked = [bool(labels[i] == 1) for i in answer]
    ours = [any(end > s["start"] and start < s["end"] for s in sample.labels) for start, end in offsets]
    return runs(marked, offsets), runs(ours, offsets)


def test_its_token_labels_are_exactly_our_spans_with_an_encoder_pair_template(samples):
    from lettucedetect.datasets.hallucination_dataset import HallucinationDataset

    tok = tokenizer(pair_template=True)
    dataset = HallucinationDataset(samples, tok, max_length=MAX_LENGTH)
    hallucinated = [i for i, s in enumerate(samples) if s.labels]
    assert hallucinated and len(hallucinated) < len(samples)
    for index, sample in enumerate(samples):
        marked, ours = token_spans(tok, sample, dataset[index]["labels"].tolist())
        assert marked == ours, (sample.answer, sample.labels)
        for span in sample.labels:  # every span inside what its tokens cover
            assert any(start <= span["start"] and span["end"] <= end for start, end in marked)


def test_without_special_tokens_its_answer_start_is_off_which_the_audit_warns_of(samples, tmp_path):
    from lettucedetect.datasets.hallucination_dataset import HallucinationDataset

    from lettuce_build.view.token_windows import TokenWindows

    tok = tokenizer(pair_template=False)
    dataset = HallucinationDataset(samples, tok, max_length=MAX_LENGTH)
    wrong = sum(
        token_spans(tok, s, dataset[i]["labels"].tolist())[0]
        != token_spans(tok, s, dataset[i]["labels"].tolist())[1]
        for i, s in enumerate(samples)
        if s.labels
    )
    assert wrong > 0
    assert TokenWindows(str(embedded_model_path()), [MAX_LENGTH]).report.warning is not None


def test_its_trainer_and_evaluators_run_on_the_export(samples, tmp_path):
    import torch
    from lettucedetect.datasets.hallucination_dataset import HallucinationDataset
    from lettucedetect.models.evaluator import evaluate_model, evaluate_model_example_level
    from lettucedetect.models.trainer import Trainer
    from torch.utils.data import DataLoader
    from transformers import BertConfig, BertForTokenClassification, DataCollatorForTokenClassification

    torch.manual_seed(0)
    tok = tokenizer(pair_template=True)
    train = [s for s in samples if s.split == "train"]
    held_out = [s for s in samples if s.split in ("dev", "test")]
    assert train and held_out
    collate = DataCollatorForTokenClassification(tok, label_pad_token_id=-100)
    loaders = [
        DataLoader(HallucinationDataset(part, tok, max_length=MAX_LENGTH), batch_size=4, collate_fn=collate)
        for part in (train, held_out)
    ]
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_LENGTH,
        num_labels=2,
    )
    model = BertForTokenClassification(config)  # randomly initialised: a few steps, no download
    trainer = Trainer(
        model,
        tok,
        *loaders,
        epochs=1,
        learning_rate=1e-3,
        save_path=str(tmp_path / "best"),
        device=torch.device("cpu"),
    )
    best = trainer.train()
    assert 0.0 <= best <= 1.0
    tokens = evaluate_model(model, loaders[1], torch.device("cpu"), verbose=False)
    examples = evaluate_model_example_level(model, loaders[1], torch.device("cpu"), verbose=False)
    assert {"supported", "hallucinated"} <= set(tokens) and {"supported", "hallucinated"} <= set(examples)
