"""The tar headers a reader takes (``tarfile.open(..., tarinfo=CheckedHeader)`` or a subclass naming what its
writer writes), checked before tarfile acts on them. tarfile handles an extended header inside ``next()``, before
a reader sees any member: it reads the header after one by calling itself (a chain of a few thousand was a
RecursionError), parses a pax header with a regex that is quadratic in its size on Python before 3.11.10, and
reads a GNU sparse map as long as the file says into a list. So a reader takes only what its writer writes there:
a pax header before a member, at most MAX_PAX_BYTES, with the keywords the writer puts in one, read here in one
pass; a pax global header first in the archive only where the writer writes one (``git archive`` does); never a
GNU long name or a sparse member. Anything else raises ``HeaderRefused`` (a ``tarfile.TarError``) with the
reason.

``CheckedHeader`` itself takes what ModelGuard's PAX writers write (``write_parcel``, ``pack_tree``): a member's
``path``, ``linkpath`` or ``hdrcharset``, no global header."""

from __future__ import annotations

import tarfile
from typing import ClassVar, Self

MAX_PAX_BYTES = 16 * 1024
"""A path and a link target of PATH_MAX (4096) bytes each, their records, and room."""
PAX_KEYWORDS = frozenset({"path", "linkpath", "hdrcharset"})
"""What Python's PAX writer puts in a member's header for a long or non-ASCII name (``hdrcharset=BINARY`` before
a name that is not UTF-8)."""
HEADER_NAMES = {
    tarfile.XHDTYPE: "a pax extended header",
    tarfile.XGLTYPE: "a pax global header",
    tarfile.SOLARIS_XHDTYPE: "a Solaris extended header",
    tarfile.GNUTYPE_LONGNAME: "a GNU long name",
    tarfile.GNUTYPE_LONGLINK: "a GNU long link name",
    tarfile.GNUTYPE_SPARSE: "a GNU sparse member",
}
REFUSED_TYPES = frozenset(HEADER_NAMES) - {tarfile.XHDTYPE, tarfile.XGLTYPE}
"""Never taken; a global header is taken only by a reader with ``global_keywords``."""
LENGTH_DIGITS = 20
NUMBER_KEYWORDS = frozenset({"mtime"})
"""Keywords whose value is taken only as a whole number of seconds (what ``git archive`` writes)."""


class HeaderRefused(tarfile.TarError):
    """A tar header that the reader does not take."""


def pax_records(data: bytes, keywords: frozenset[str] = PAX_KEYWORDS) -> dict[str, bytes]:
    """The records ``<length> <keyword>=<value>\\n`` of a pax header, each keyword one of ``keywords``, once."""
    records: dict[str, bytes] = {}
    position = 0
    while position < len(data):
        space = data.find(b" ", position, position + LENGTH_DIGITS + 1)
        digits = data[position:space]
        end = position + int(digits) if space > position and digits.isdigit() else -1
        if end <= space or end > len(data) or data[end - 1 : end] != b"\n":
            raise HeaderRefused(f"a pax header's record at byte {position} is malformed")
        keyword, equals, value = data[space + 1 : end - 1].partition(b"=")
        name = keyword.decode("ascii", "replace")
        if not equals or name not in keywords:
            raise HeaderRefused(f"a pax header names {name[:60]!r}, which the archive's writer never writes there")
        if name in records:
            raise HeaderRefused(f"a pax header names {name} twice")
        if name in NUMBER_KEYWORDS and not (value.isdigit() and len(value) <= LENGTH_DIGITS):
            raise HeaderRefused(f"a pax header's {name} is {value[:30]!r}, not a whole number of seconds")
        records[name] = value
        position = end
    return records


class CheckedHeader(tarfile.TarInfo):
    """A ``tarfile.TarInfo`` that refuses, as it is read, an extended header its reader does not take."""

    writer: ClassVar[str] = "ModelGuard's tar writers"
    """Who writes the archives the reader takes, for the reasons it gives."""
    member_keywords: ClassVar[frozenset[str]] = PAX_KEYWORDS
    """What a pax header before a member may hold."""
    global_keywords: ClassVar[frozenset[str]] = frozenset()
    """What one pax global header, first in the archive, may hold; none: no global header is taken."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        header = super().frombuf(buf, encoding, errors)
        if header.type in REFUSED_TYPES or (header.type == tarfile.XGLTYPE and not cls.global_keywords):
            raise HeaderRefused(f"{HEADER_NAMES[header.type]} ({cls.writer} never write one)")
        if header.type in (tarfile.XHDTYPE, tarfile.XGLTYPE) and not 0 <= header.size <= MAX_PAX_BYTES:
            name = HEADER_NAMES[header.type]
            raise HeaderRefused(f"{name} of {header.size} bytes, more than {MAX_PAX_BYTES} bytes")
        return header

    def _proc_pax(self, archive: tarfile.TarFile) -> Self:
        """Called by tarfile for a pax header (``self``): the member it describes, its names applied."""
        assert archive.fileobj is not None
        blocks = -(-self.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        data = archive.fileobj.read(blocks)[: self.size]
        if len(data) != self.size:
            raise HeaderRefused(f"{HEADER_NAMES[self.type]} ends early")
        if self.type == tarfile.XGLTYPE:
            return self._proc_global(archive, data)
        records = pax_records(data, self.member_keywords)
        member = self._following(archive, refused=(tarfile.XHDTYPE, tarfile.XGLTYPE))
        names = {"path": "name", "linkpath": "linkname"}
        for keyword, value in records.items():
            if keyword in names:
                text = value.decode(archive.encoding or "utf-8", archive.errors or "surrogateescape")
                setattr(member, names[keyword], text.rstrip("/") if keyword == "path" else text)
        decoded = {keyword: value.decode("utf-8", "replace") for keyword, value in records.items()}
        member.pax_headers = {**archive.pax_headers, **decoded}
        member.offset = self.offset
        return member

    def _proc_global(self, archive: tarfile.TarFile, data: bytes) -> Self:
        """A global header, first in the archive (at byte 0 of its file): its records become the archive's,
        which tarfile applies to every member after it; then the first member."""
        if self.offset != 0:
            raise HeaderRefused(f"a pax global header at byte {self.offset} ({self.writer} write it first, at byte 0)")
        records = pax_records(data, self.global_keywords)
        archive.pax_headers = {keyword: value.decode("utf-8", "replace") for keyword, value in records.items()}
        return self._following(archive, refused=(tarfile.XGLTYPE,))

    def _following(self, archive: tarfile.TarFile, refused: tuple[bytes, ...]) -> Self:
        """The member after this extended header, refused if its header is of a ``refused`` type: one extended
        header of each kind at most, so tarfile's reading of the next header calls itself at most twice."""
        assert archive.fileobj is not None
        start = archive.fileobj.tell()
        try:
            following = self.frombuf(archive.fileobj.read(tarfile.BLOCKSIZE), archive.encoding, archive.errors)
            if following.type in refused:
                raise HeaderRefused(f"{HEADER_NAMES[following.type]} follows {HEADER_NAMES[self.type]}")
            archive.fileobj.seek(start)
            return self.fromtarfile(archive)
        except tarfile.HeaderError as error:
            raise tarfile.ReadError(f"the header after a pax header: {error}") from None
