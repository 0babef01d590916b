"""Languages by their ISO 639-1 codes: the names prompts use, and which language a text is in.

A text's language is told by py3langid (langid.py's model, shipped inside its wheel: no
download, no network), loaded once on first use (about a second).
"""

from __future__ import annotations

from functools import cache
from typing import Any

#: the languages a translation or a generation may target, by code: the name a prompt says
NAMES: dict[str, str] = {
    "ar": "Arabic",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "hu": "Hungarian",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sv": "Swedish",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "vi": "Vietnamese",
    "zh": "Chinese",
}
#: fewer letters than this say too little for the language to be told reliably
MIN_LETTERS = 20


def name_of(code: str) -> str:
    """The language's English name (``de`` -> ``German``); raises ValueError for an unknown code."""
    if code not in NAMES:
        raise ValueError(f"{code!r} is not a language code lettuce-build knows: {', '.join(NAMES)}")
    return NAMES[code]


@cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    # every language the model knows, not only those a build may ask for: a text in Catalan
    # asked to be Spanish must come out as Catalan, not as the nearest language of our list
    return LanguageIdentifier.from_model_file(MODEL_FILE)


def identify(text: str) -> str | None:
    """The language ``text`` is written in, by code; None when it holds too few letters to tell."""
    if sum(ch.isalpha() for ch in text) < MIN_LETTERS:
        return None
    code, _ = _identifier().classify(text)
    return str(code)
