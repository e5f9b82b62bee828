"""A Python file's bytes as source text, by Python's own rule (PEP 263, ``tokenize.detect_encoding``).

A UTF-8 byte order mark, else a coding declaration on line 1 or 2 (``# -*- coding: latin-1 -*-``), else UTF-8. A
file whose bytes do not decode under the encoding it declares (or UTF-8 when it declares none), whose declaration
names a codec Python does not know or one that is no text codec, or that starts with the mark and declares another
encoding, is refused by Python, and so is unreadable here, with one reason. Nothing is decoded with replacement
characters: text with U+FFFD in it is not what Python runs.

Every reader of a workspace's Python (the diagnoser's evidence, the validator's targeting, the repairer, the patch
guard) turns bytes into text here, so they agree on what a file says and on which files cannot be read. The
unreadable reason is a SyntaxError, as Python raises for such a file, so a reader that already takes "does not
parse" as a SyntaxError takes this too.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

UTF8_BYTE_ORDER_MARK = codecs.BOM_UTF8


class UnreadableSource(SyntaxError):
    """Python would not read the file: its bytes do not decode under its declared (or default) encoding."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DecodedSource:
    text: str
    """The source as Python reads it; a UTF-8 byte order mark is kept as U+FEFF (``SourceText`` puts it on no line,
    ``parse_module`` drops it)."""
    encoding: str
    """The codec it was decoded with, as ``codecs.lookup`` names it (``utf-8``, ``iso8859-1``, ``cp1252``)."""

    @property
    def is_utf8(self) -> bool:
        return self.encoding == "utf-8"


def decode_source(raw: bytes) -> DecodedSource:
    """The text Python reads from ``raw``; raises UnreadableSource, with the reason, for bytes Python refuses."""
    declared = _declared_encoding(raw)
    try:
        codec = codecs.lookup(declared)
    except LookupError:
        raise UnreadableSource(f"declares encoding {declared!r}, which Python does not know") from None
    if not codec._is_text_encoding:  # what bytes.decode itself checks; rot13, hex, zlib
        raise UnreadableSource(f"declares encoding {declared!r}, which is not a text encoding")
    body = raw.removeprefix(UTF8_BYTE_ORDER_MARK) if codec.name == "utf-8" else raw
    try:
        text = body.decode(codec.name)
    except UnicodeDecodeError as error:
        raise UnreadableSource(_undecodable(error, codec.name, declared, body)) from None
    except (UnicodeError, ValueError) as error:  # a codec that fails otherwise (punycode)
        raise UnreadableSource(f"cannot be decoded as {declared}: {error}") from None
    if codec.name == "utf-8" and raw.startswith(UTF8_BYTE_ORDER_MARK):
        text = "\ufeff" + text
    return DecodedSource(text, codec.name)


def read_source(path: Path) -> DecodedSource:
    """``decode_source`` of the file's bytes; raises OSError as reading does, UnreadableSource as decoding does."""
    return decode_source(Path(path).read_bytes())


def _declared_encoding(raw: bytes) -> str:
    """The encoding Python decodes ``raw`` with: ``utf-8`` (with or without the mark), or what line 1 or 2
    declares. The reasons Python gives for a declaration it refuses become UnreadableSource."""
    try:
        name, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        message = str(error.msg if error.msg is not None else error)
        if message.startswith("unknown encoding"):
            unknown = message.split(":", 1)[1].strip()
            raise UnreadableSource(f"declares encoding {unknown!r}, which Python does not know") from None
        if raw.startswith(UTF8_BYTE_ORDER_MARK) and message.startswith("encoding problem"):
            cookie = _cookie(raw)
            declares = f"encoding {cookie!r}" if cookie else "another encoding"
            raise UnreadableSource(f"starts with a UTF-8 byte order mark but declares {declares}") from None
        return "utf-8"  # a line 1 or 2 that is not UTF-8 and declares nothing else: decoding says where
    return "utf-8" if name == "utf-8-sig" else name


def _cookie(raw: bytes) -> str | None:
    """The encoding as a line 1 or 2 spells it (``latin-1``), for the reason; None when not found."""
    for line in raw.removeprefix(UTF8_BYTE_ORDER_MARK).splitlines()[:2]:
        found = tokenize.cookie_re.match(line.decode("latin-1"))
        if found is not None:
            return found.group(1)
    return None


def _undecodable(error: UnicodeDecodeError, codec: str, declared: str, body: bytes) -> str:
    where = f"byte 0x{body[error.start]:02x} at offset {error.start} ({error.reason})"
    if codec == "utf-8" and _cookie(body) is None:
        return f"not UTF-8 and declares no other encoding: {where}"
    label = "UTF-8" if codec == "utf-8" else declared
    return f"not {label} text as it declares: {where}"
