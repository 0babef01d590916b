"""Code edits that look like a coding agent's errors, in two prompts.

- intent (``inject_code_intent``): ``wrong_implementation``, code that does something other
  than the request asks, and ``unrequested_change``, code that also does what nobody asked for
  (it may insert a block of several lines after a line it keeps; only the block is labelled);
- structural (``inject_code_structural``): ``fabricated_api``, a member or function that does
  not exist on an existing object or module. The invented name must be absent from the whole
  repository tree at the base commit, not only from the context the sample carries.

Each item's error is drawn by the code source (``code_error``, see `draw_error`); the native
labels map to the taxonomy through the ``code_agent`` label map. Whether a name occurs in the
repository is asked of the `NameLookup` the source gives the stage: the stage reads no tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Protocol

import regex
from pydantic import BaseModel, Field

from lettuce_build.core.edits import Edit
from lettuce_build.core.error_types import allows
from lettuce_build.core.errors import RepoError, TaxonomyError
from lettuce_build.core.seeding import fraction, item_parts
from lettuce_build.core.taxonomy import map_label
from lettuce_build.engine.stage import ParseFailure, Sampling, length_checked
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.prompts import load_prompt
from lettuce_build.rules.code_mutations import Mutation, MutationChoice, mutations
from lettuce_build.stages.injection import InjectStageBase

STRUCTURAL = "fabricated_api"
INTENT = ("wrong_implementation", "unrequested_change")
#: what each error means, as the prompts show it
ERROR_DEFINITIONS = {
    "wrong_implementation": "the code does something other than the request asks (a wrong condition, "
    "value, operator, argument, call or return) while still looking deliberate",
    "unrequested_change": "the code also does something the request never asked for (an extra check, a "
    "changed default, a side effect, a new behaviour)",
    STRUCTURAL: "the code uses a method, attribute or function that does not exist on an existing object "
    "or module",
}
#: the share of code items given a structural error when the build does not choose (LettuceDetect
#: publishes 0.15-0.25; the middle keeps intent errors, the harder ones, the majority)
DEFAULT_STRUCT_RATIO = 0.2
_NAME = regex.compile(r"[A-Za-z_]\w*")
#: a unified diff's hunk header: line numbers, not code
_HUNK_HEADER = regex.compile(r"^@@ .*@@")
#: a ``#`` outside string quotes starts a comment (SWE-bench's code is Python)
_COMMENT_START = regex.compile(r"""^(?:[^#'"]|'[^']*'|"[^"]*")*#""")


def draw_error(seed: int, key: str, struct_ratio: float, allowed: Sequence[str] = ()) -> str:
    """An item's error: structural with probability ``struct_ratio``, else one of the two intent
    errors with equal shares (a seeded draw, stable for the item's key); only the kinds whose
    taxonomy type is ``allowed`` (none given: any), the draw's shares among them kept."""
    kinds = allowed_errors(allowed)
    if not kinds:
        raise TaxonomyError(f"--error-types {list(allowed)}: the code source makes none of them")
    point = fraction(seed, key, "code_error")
    shares = {STRUCTURAL: struct_ratio, INTENT[0]: (1 - struct_ratio) / 2, INTENT[1]: (1 - struct_ratio) / 2}
    total = sum(shares[kind] for kind in kinds) or 1.0
    reached = 0.0
    for kind in kinds:
        reached += shares[kind] / total
        if point < reached:
            return kind
    return kinds[-1]


def allowed_errors(allowed: Sequence[str]) -> tuple[str, ...]:
    """The code errors whose taxonomy type is among ``allowed`` (none given: all three)."""
    return tuple(
        kind
        for kind in (STRUCTURAL, *INTENT)
        if allows(allowed, (mapped := map_label(kind, "code_agent")).category, mapped.subcategory)
    )


class NameLookup(Protocol):
    """Whether ``name`` occurs as a whole word anywhere in ``item``'s repository at its base
    commit; raises `RepoError` when the repository cannot be searched. Its ``repr`` is stable:
    it names the stage's passes kept on disk (see `Stage.identity`)."""

    def __call__(self, item: dict[str, Any], name: str) -> bool: ...


class CodeChange(BaseModel):
    # lengths are checked after decoding, never in the schema (see `length_checked`)
    original: Annotated[str, length_checked(max_chars=300)]
    #: an inserted block of a few lines is longer than a replaced expression
    hallucinated: Annotated[str, length_checked(4, 600)]
    #: structural edits: the invented name
    fabricated_name: Annotated[str, length_checked(max_chars=80)] = ""
    explanation: Annotated[str, length_checked(max_chars=200)] = ""


class CodeChanges(BaseModel):
    changes: list[CodeChange] = Field(max_length=2)


class InjectCodeStage(InjectStageBase):
    """One coding agent's error per item (``code_error``), in the prompt of its kind."""

    name = "inject"
    prompt = "inject_code_intent"
    structural_prompt = "inject_code_structural"

    response_model: type[BaseModel] | None = CodeChanges
    requires = ("context", "question", "answer", "inject", "code_error", "repo_dir", "base_commit")
    sampling = Sampling(temperature=0.4, max_tokens=1000)
    narrows_insertions = True

    def __init__(self, names: NameLookup, *, allowed: Sequence[str] = (), **options: Any) -> None:
        super().__init__(require_fences=True, enforce_in_fence=True, **options)
        self.names = names
        #: the error types the build asks for (``--error-types``; none: any)
        self.allowed = list(allowed)

    @property
    def prompt_version(self) -> str:
        return f"{self.template.version}+{load_prompt(self.structural_prompt).version}"

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        model = self.response_model
        assert model is not None  # a code stage always answers in its model
        schema = super().item_schema(item) or model.model_json_schema()
        if item["code_error"] != STRUCTURAL:  # only a structural edit names what it invented
            schema["$defs"]["CodeChange"]["properties"].pop("fabricated_name", None)
        return schema

    def render(self, item: dict[str, Any]) -> ChatRequest:
        error = item["code_error"]
        template = load_prompt(self.structural_prompt) if error == STRUCTURAL else self.template
        system, user = template.render(
            error=error,
            error_definition=ERROR_DEFINITIONS[error],
            # the whole context the sample carries (the code source fits it to the model): a
            # contradiction must be checkable against what the detector sees
            context=item["context"],
            question=item["question"],
            answer=item["answer"],
        )
        return self.request(system, user)

    def _edits(self, item: dict[str, Any], response: Any) -> tuple[list[Edit], list[dict[str, str]]]:
        error = item["code_error"]
        mapped = map_label(error, "code_agent")
        edits, rejected = [], []
        for change in (changes := self.changes(response)):
            if error == STRUCTURAL and (detail := self._existing(item, change)):
                rejected.append(
                    {"original": change.original, "reason": "fabrication_exists", "detail": detail}
                )
                continue
            edits.append(self.edit_of(change, error, mapped.category, mapped.subcategory))
        if changes and not edits:
            raise ParseFailure(rejected[-1]["reason"], rejected[-1]["detail"])
        return edits, rejected

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        result = super().parse(item, response)
        answer = result["hallucinated_answer"]
        for label in result["labels"]:
            if problem := span_line_problem(answer, label["start"], label["end"]):
                raise ParseFailure(*problem)
        return result

    def _existing(self, item: dict[str, Any], change: CodeChange) -> str | None:
        """Why the edit invents nothing (``fabrication_exists``'s detail): the name it declares,
        or else every name it introduces, already occurs somewhere in the repository's tree at
        the base commit (None: it invents)."""
        before = set(_NAME.findall(change.original))
        introduced = list(dict.fromkeys(n for n in _NAME.findall(change.hallucinated) if n not in before))
        declared = change.fabricated_name.strip()
        checked = [declared] if declared in introduced else introduced
        try:
            existing = [name for name in checked if self.names(item, name)]
        except RepoError as err:
            raise ParseFailure("repository_unavailable", str(err), retry=False) from err
        if not existing or len(existing) < len(checked):
            return None
        return f"{existing[0]!r} exists in the repository at {item['base_commit'][:12]}"


def span_line_problem(answer: str, start: int, end: int) -> tuple[str, str] | None:
    """(reason, detail) when the span ``[start, end)`` changes no code: it lies in a diff's hunk
    header (line numbers) or in comments only. Neither changes what the code does, so labelling
    it ``wrong_implementation`` or ``unrequested_change`` would be false (seen live: a hunk's
    line number replaced by a date, a word of a comment misspelt)."""
    line_start = answer.rfind("\n", 0, start) + 1
    line_end = answer.find("\n", end)
    kinds = set()
    for line in answer[line_start : len(answer) if line_end == -1 else line_end].split("\n"):
        covered = answer[max(start, line_start) : min(end, line_start + len(line))]
        if covered.strip():
            kinds.add(_line_kind(line, max(start, line_start) - line_start))
        line_start += len(line) + 1
    if kinds == {"header"}:
        return "edit_in_diff_header", f"{answer[start:end]!r} is in a hunk header, not in code"
    if kinds and kinds <= {"header", "comment"}:
        return "edit_in_comment", f"{answer[start:end]!r} changes only a comment"
    return None


def _line_kind(line: str, column: int) -> str:
    """What the span's part of ``line`` from ``column`` on is: header, comment or code."""
    if _HUNK_HEADER.match(line):
        return "header"
    comment = _COMMENT_START.match(line)
    return "comment" if comment and column >= comment.end() - 1 else "code"


class InjectCodeMenuStage(InjectCodeStage):
    """`InjectCodeStage` for small models: the mistake is one of the fix's mechanical mutations
    (stages/code_mutations.py), chosen through a JSON-schema enum, of the item's drawn kind when
    the fix offers one, else of any kind (labelled by its own). An item whose fix offers none
    fails with ``no_mutation`` without a model call, and keeps its clean answer."""

    prompt = "inject_code_menu"
    response_model = MutationChoice
    sampling = Sampling(temperature=0.4, max_tokens=300)

    @property
    def prompt_version(self) -> str:
        return self.template.version

    def offered(self, item: dict[str, Any]) -> tuple[Mutation, ...]:
        draw = item_parts(item["key"], self.seed)
        own = mutations(item["answer"], item["context"], item["code_error"], draw)
        if own:
            return own
        kinds = [kind for kind in (*INTENT, STRUCTURAL) if kind in allowed_errors(self.allowed)]
        return tuple(m for kind in kinds for m in mutations(item["answer"], item["context"], kind, draw))

    def applies(self, item: dict[str, Any]) -> bool:
        return bool(item["inject"]) and bool(self.offered(item))

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        if item["inject"]:
            raise ParseFailure("no_mutation", "the fix's new lines offer no mistake to make", retry=False)
        return {}

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        choice = {"type": "string", "enum": [m.entry for m in self.offered(item)]}
        return {"type": "object", "properties": {"mistake": choice}, "required": ["mistake"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        offered = self.offered(item)
        system, user = self.template.render(
            question=item["question"], answer=item["answer"], mistakes=[m.entry for m in offered]
        )
        return self.request(system, user)

    def _edits(self, item: dict[str, Any], response: Any) -> tuple[list[Edit], list[dict[str, str]]]:
        chosen = {m.entry: m for m in self.offered(item)}.get(response.mistake)
        if chosen is None:
            raise ParseFailure("mistake_not_offered", f"{response.mistake[:80]!r} is not one of the offered")
        mapped = map_label(chosen.error, "code_agent")
        change = CodeChange(original=chosen.original, hallucinated=chosen.hallucinated)
        if chosen.error == STRUCTURAL and (detail := self._existing(item, change)):
            raise ParseFailure("fabrication_exists", detail)
        return [self.edit_of(change, chosen.error, mapped.category, mapped.subcategory)], []
