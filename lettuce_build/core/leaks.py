"""Finding secrets in text before it is published: token-shaped strings and this process's own keys.

Two kinds of leak are caught: strings shaped like the credentials of common services (Hugging
Face, OpenAI, GitHub, AWS, Slack, private keys), and the values of the environment variables
whose names say they hold a secret (``HF_TOKEN``, ``OPENAI_API_KEY``, ``*_SECRET`` ...), whatever
their shape. Reports name the kind of secret, never the secret.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import regex

TOKEN_PATTERNS: dict[str, regex.Pattern[str]] = {
    "huggingface token": regex.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "openai key": regex.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    "github token": regex.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    "aws access key": regex.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "slack token": regex.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "private key": regex.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
    "bearer credential": regex.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}"),
}
SECRET_NAME = regex.compile(
    r"TOKEN|SECRET|PASSW|CREDENTIAL|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|AUTH", regex.I
)
#: shorter values (``DEBUG_TOKEN=1``) would match everywhere and protect nothing
MIN_SECRET_CHARS = 8


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the variables whose names mark them as secrets."""
    environ = os.environ if environ is None else environ
    return sorted(
        {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v.strip()) >= MIN_SECRET_CHARS},
        key=len,
        reverse=True,
    )


class SecretScanner:
    def __init__(self, values: list[str]) -> None:
        self.values = values

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> SecretScanner:
        return cls(secret_values(environ))

    def find(self, text: str) -> list[str]:
        """The kinds of secret in ``text`` (empty when none): never the secrets themselves."""
        found = [kind for kind, pattern in TOKEN_PATTERNS.items() if pattern.search(text)]
        if any(value in text for value in self.values):
            found.append("a secret environment value")
        return found

    def redact(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "[redacted]")
        for pattern in TOKEN_PATTERNS.values():
            text = pattern.sub("[redacted]", text)
        return text


def public_url(url: str) -> str:
    """A URL as it may be recorded: no ``user:password@``, no secret-looking query parameters."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    query = urlencode(
        [
            (k, "[redacted]" if SECRET_NAME.search(k) or k.lower() in {"key", "sig", "signature"} else v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ]
    )
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))
