"""The tar headers the parcel and tree readers take (``tarfile.open(..., tarinfo=CheckedHeader)``), checked before
tarfile acts on them. tarfile handles an extended header inside ``next()``, before a reader sees any member: it
reads the header after one by calling itself (a chain of a few thousand was a RecursionError), parses a pax
header with a regex that is quadratic in its size on Python before 3.11.10, and reads a GNU sparse map as long as
the file says into a list. ModelGuard's writers (``write_parcel``, ``pack_tree``, both PAX) write none of that but
a pax header holding a member's ``path`` or ``linkpath`` (a long or non-UTF-8 name), so that is all a reader
takes: one pax header before a member, at most MAX_PAX_BYTES, read here in one pass; no global header, no GNU
long name, no sparse member. Anything else raises ``HeaderRefused`` (a ``tarfile.TarError``) with the reason."""

from __future__ import annotations

import tarfile
from typing import Self

MAX_PAX_BYTES = 16 * 1024
"""A path and a link target of PATH_MAX (4096) bytes each, their records, and room."""
PAX_KEYWORDS = frozenset({"path", "linkpath", "hdrcharset"})
"""What Python's PAX writer puts in a member's header for a long or non-ASCII name (``hdrcharset=BINARY`` before
a name that is not UTF-8)."""
REFUSED_TYPES = {
    tarfile.XGLTYPE: "a pax global header",
    tarfile.SOLARIS_XHDTYPE: "a Solaris extended header",
    tarfile.GNUTYPE_LONGNAME: "a GNU long name",
    tarfile.GNUTYPE_LONGLINK: "a GNU long link name",
    tarfile.GNUTYPE_SPARSE: "a GNU sparse member",
}
LENGTH_DIGITS = 20


class HeaderRefused(tarfile.TarError):
    """A tar header that the parcel and tree readers do not take."""


def pax_records(data: bytes) -> dict[str, bytes]:
    """The records ``<length> <keyword>=<value>\\n`` of a pax header, each keyword one of PAX_KEYWORDS, once."""
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
        if not equals or name not in PAX_KEYWORDS:
            raise HeaderRefused(f"a pax header names {name[:60]!r}, which ModelGuard's tar writers never write")
        if name in records:
            raise HeaderRefused(f"a pax header names {name} twice")
        records[name] = value
        position = end
    return records


class CheckedHeader(tarfile.TarInfo):
    """A ``tarfile.TarInfo`` that refuses, as it is read, an extended header its readers do not take."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        header = super().frombuf(buf, encoding, errors)
        if header.type in REFUSED_TYPES:
            raise HeaderRefused(f"{REFUSED_TYPES[header.type]} (ModelGuard's tar writers never write one)")
        if header.type == tarfile.XHDTYPE and not 0 <= header.size <= MAX_PAX_BYTES:
            raise HeaderRefused(f"a pax extended header of {header.size} bytes, more than {MAX_PAX_BYTES} bytes")
        return header

    def _proc_pax(self, archive: tarfile.TarFile) -> Self:
        """Called by tarfile for a pax header (``self``): the member it describes, its names applied."""
        assert archive.fileobj is not None
        blocks = -(-self.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        data = archive.fileobj.read(blocks)[: self.size]
        if len(data) != self.size:
            raise HeaderRefused("a pax extended header ends early")
        records = pax_records(data)
        start = archive.fileobj.tell()
        try:
            following = self.frombuf(archive.fileobj.read(tarfile.BLOCKSIZE), archive.encoding, archive.errors)
            if following.type == tarfile.XHDTYPE:
                raise HeaderRefused("a pax extended header follows another extended header")
            archive.fileobj.seek(start)
            member = self.fromtarfile(archive)
        except tarfile.HeaderError as error:
            raise tarfile.ReadError(f"the header after a pax header: {error}") from None
        names = {"path": "name", "linkpath": "linkname"}
        for keyword, value in records.items():
            if keyword in names:
                text = value.decode(archive.encoding or "utf-8", archive.errors or "surrogateescape")
                setattr(member, names[keyword], text.rstrip("/") if keyword == "path" else text)
        member.pax_headers = {keyword: value.decode("utf-8", "replace") for keyword, value in records.items()}
        member.offset = self.offset
        return member
