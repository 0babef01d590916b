"""The on-disk request cache: SQLite in the build folder, the mechanism builds resume by.

The key hashes everything that determines a response: model id, rendered
messages, sampling parameters (seed included), JSON schema and the prompt
version. Rows hold raw text, so a parser fix re-runs with no model call.
Never store secrets here: requests carry prompts, never API keys.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from lettuce_build.core.errors import CacheError
from lettuce_build.llm.protocol import ChatRequest, Completion

T = TypeVar("T")

CACHE_FILE = "cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    reasoning TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


def schema_json(schema: dict[str, Any] | None) -> str:
    """The canonical text of a JSON schema, as it enters cache keys."""
    return "" if schema is None else json.dumps(schema, sort_keys=True)


def request_key(model: str, request: ChatRequest, prompt_version: str, schema_text: str | None = None) -> str:
    """A hash of everything that determines a response.

    Parts are hashed one after another with separators rather than as one JSON
    document, so a caller keying a whole batch that shares one schema can pass
    its `schema_json` once instead of re-serialising it per request.
    """
    digest = hashlib.sha256()
    for part in (
        model,
        prompt_version,
        json.dumps([[m.role, m.content] for m in request.messages], ensure_ascii=False),
        # the penalty joins the key only when set, so keys made before it existed stay valid
        repr((request.temperature, request.max_tokens, request.seed))
        + (f"/rp={request.repetition_penalty}" if request.repetition_penalty != 1.0 else "")
        + (
            f"/score={json.dumps(request.continuations, ensure_ascii=False)}" if request.continuations else ""
        ),
        schema_json(request.json_schema) if schema_text is None else schema_text,
    ):
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def _stored(text: str | None) -> str | bytes | None:
    """A model's text as SQLite can keep it whole: text as it is, or, when it holds a lone
    surrogate (which no UTF-8 text can), its code points as bytes (``surrogatepass``) in the
    same column, so the cache keeps exactly what the model wrote and a stage judges it."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _loaded(value: str | bytes | None) -> str | None:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def answered_totals(path: Path) -> tuple[int, int, int]:
    """(answers, prompt tokens, completion tokens) a cache file holds, read without opening it
    for writing (a build may be writing it): what the build's model has answered so far, in any
    run, a killed one included. Zeros when there is no readable file."""
    if not path.exists():
        return 0, 0, 0
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) "
                "FROM responses"
            ).fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError:  # damaged, or no table yet: the runs' own figures stand
        return 0, 0, 0
    return int(row[0]), int(row[1]), int(row[2])


class CacheStats(BaseModel):
    rows: int
    hits: int
    misses: int
    prompt_tokens: int
    completion_tokens: int
    by_model: dict[str, int]
    by_prompt_version: dict[str, int]
    size_bytes: int


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    """SQLite's errors on a damaged file, as a `CacheError` that says how to recover."""

    @functools.wraps(method)
    def wrapper(self: RequestCache, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as err:
            raise self._damaged(err) from err

    return wrapper


#: pages of write-ahead log (4 KiB each) before they are copied into the database file
CHECKPOINT_PAGES = 10_000


class RequestCache:
    """One writer per process; `put_many` commits, so a crash loses at most the batch in flight.
    ``read_only``: an existing cache only looked up (a dry run's of its build), which keeps no
    counters either."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        try:
            if read_only:
                # a log a killed run left holds answers: read through it; with none, the file is
                # all there is, read as it is (a log opened to read it would be left behind)
                log = self.path.with_name(self.path.name + "-wal").exists()
                mode = "mode=ro" if log else "immutable=1"
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?{mode}", uri=True)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                # the log is copied into the file every CHECKPOINT_PAGES pages, not SQLite's
                # 1,000: each batch's keys land on pages all over the key index, and copying
                # them back with every few batches was most of a write (benchmarks/cache_writes.py)
                self._db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
                self._db.executescript(_SCHEMA)
                self._db.commit()
            # a half-written file opens fine and fails on first read: read its structure now
            self._db.execute("PRAGMA quick_check(1)").fetchone()
            self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        except sqlite3.DatabaseError as err:
            raise self._damaged(err) from err

    def _damaged(self, err: sqlite3.DatabaseError) -> CacheError:
        return CacheError(
            f"{self.path} is damaged ({err}); move it aside (mv {self.path} {self.path}.broken) and "
            "re-run: the build then asks the model again for what the cache held"
        )

    @classmethod
    def in_build(cls, build_dir: str | Path) -> RequestCache:
        return cls(Path(build_dir) / CACHE_FILE)

    @_guarded
    def get_many(self, keys: Sequence[str]) -> dict[str, Completion]:
        found: dict[str, Completion] = {}
        for key, text, finish, p_tok, c_tok, reasoning in self._select(
            "key, text, finish_reason, prompt_tokens, completion_tokens, reasoning", keys
        ):
            found[key] = Completion(
                text=_loaded(text) or "",
                finish_reason=finish,
                prompt_tokens=p_tok,
                completion_tokens=c_tok,
                reasoning=_loaded(reasoning),
            )
        return found

    @_guarded
    def present(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` the cache holds, their answers left on disk."""
        return {key for (key,) in self._select("key", keys)}

    def _select(self, columns: str, keys: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):  # SQLite caps bound parameters
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            yield from self._db.execute(f"SELECT {columns} FROM responses WHERE key IN ({marks})", chunk)

    @_guarded
    def put_many(self, model: str, prompt_version: str, entries: Sequence[tuple[str, Completion]]) -> None:
        now = time.time()
        self._db.executemany(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    key,
                    model,
                    prompt_version,
                    _stored(c.text),
                    c.finish_reason,
                    c.prompt_tokens,
                    c.completion_tokens,
                    _stored(c.reasoning),
                    now,
                )
                for key, c in entries
            ],
        )
        self._db.commit()

    @_guarded
    def absorb(self, other: Path) -> int:
        """Copy in the responses of another cache file that this one lacks; how many were new."""
        before = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        self._db.execute("ATTACH DATABASE ? AS other", (str(other),))
        try:
            self._db.execute("INSERT OR IGNORE INTO responses SELECT * FROM other.responses")
            self._db.commit()
        finally:
            self._db.execute("DETACH DATABASE other")
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] - before

    @_guarded
    def count(self, hits: int, misses: int) -> None:
        if self.read_only:
            return
        self._db.executemany(
            "INSERT INTO counters VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            [("hits", hits), ("misses", misses)],
        )
        self._db.commit()

    @_guarded
    def stats(self) -> CacheStats:
        rows, p_tok, c_tok = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) "
            "FROM responses"
        ).fetchone()
        counters = dict(self._db.execute("SELECT name, value FROM counters").fetchall())
        by_model = dict(self._db.execute("SELECT model, COUNT(*) FROM responses GROUP BY model").fetchall())
        by_version = dict(
            self._db.execute(
                "SELECT prompt_version, COUNT(*) FROM responses GROUP BY prompt_version"
            ).fetchall()
        )
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*"))
        return CacheStats(
            rows=rows,
            hits=counters.get("hits", 0),
            misses=counters.get("misses", 0),
            prompt_tokens=p_tok,
            completion_tokens=c_tok,
            by_model=by_model,
            by_prompt_version=by_version,
            size_bytes=size,
        )

    def close(self) -> None:
        self._db.close()
