"""Tar archives built block by block, for tests that attack a tar reader below the member level: extended headers
(pax, pax global, GNU long name) that tarfile's writer would never put where a hostile archive can."""

from __future__ import annotations

import tarfile

END = b"\0" * 2 * tarfile.BLOCKSIZE


def block(header: tarfile.TarInfo, data: bytes = b"") -> bytes:
    """``header`` as one ustar block, then ``data`` padded to whole blocks."""
    return header.tobuf(tarfile.USTAR_FORMAT) + data + b"\0" * (-len(data) % tarfile.BLOCKSIZE)


def extension(kind: bytes, data: bytes) -> bytes:
    """An extended header of type ``kind`` (``tarfile.XHDTYPE``, ``XGLTYPE``, ``GNUTYPE_LONGNAME``...) holding
    ``data``."""
    names = {tarfile.XHDTYPE: "././@PaxHeader", tarfile.XGLTYPE: "pax_global_header"}
    header = tarfile.TarInfo(names.get(kind, "././@LongLink"))
    header.type, header.size = kind, len(data)
    return block(header, data)


def record(keyword: str, value: str) -> bytes:
    """One pax record, ``<length> <keyword>=<value>\\n``, its length counting its own digits."""
    body = f" {keyword}={value}\n".encode()
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length = len(str(length)) + len(body)
    return str(length).encode() + body


def file_block(name: str, data: bytes = b"{}") -> bytes:
    """A regular file member ``name`` holding ``data``."""
    header = tarfile.TarInfo(name)
    header.size = len(data)
    return block(header, data)
