"""Python files whose bytes are not plain UTF-8, each as Python itself reads it (PEP 263): a UTF-8 byte order mark,
else a coding declaration on line 1 or 2, else UTF-8. Shared by the test of the rule and the test that holds every
reader of a workspace's Python to it."""

from __future__ import annotations

from dataclasses import dataclass

CHANGED_FUNCTION = "montant_ajusté"

_BODY_BASE = (
    "from pkg.helper import scale\n"
    "\n"
    "SEUIL = 0.5\n"
    "\n"
    "\n"
    "def montant_ajusté(frame):\n"
    '    """Le montant, ajusté."""\n'
    "    return frame\n"
)
_BODY_CANDIDATE = (
    "from pkg.helper import scale\n"
    "\n"
    "SEUIL = 0.75\n"
    "\n"
    "\n"
    "def montant_ajusté(frame):\n"
    '    """Le montant, ajusté."""\n'
    '    frame["amount"] = frame["amount"] / scale("coût: 5 €")\n'
    "    return frame\n"
)


@dataclass(frozen=True)
class EncodingCase:
    name: str
    head: str
    """The lines before the module's body (comments, a coding declaration)."""
    encoding: str
    """How the bytes are written."""
    bom: bool = False
    readable: str | None = None
    """The codec Python reads the file with (``codecs.lookup`` name), or None when Python refuses the file."""

    def raw(self, candidate: bool) -> bytes:
        body = _BODY_CANDIDATE if candidate else _BODY_BASE
        if self.encoding == "latin-1":
            body = body.replace("€", "EUR")  # Latin-1 has no euro sign
        data = (self.head + body).encode(self.encoding)
        return (b"\xef\xbb\xbf" if self.bom else b"") + data

    def text(self, candidate: bool) -> str:
        """The text Python reads (the byte order mark, if any, kept as U+FEFF)."""
        raw = self.raw(candidate)
        assert self.readable is not None
        return ("\ufeff" if self.bom else "") + raw.removeprefix(b"\xef\xbb\xbf").decode(self.readable)


CASES = (
    EncodingCase("utf8_plain", "# Données\n", "utf-8", readable="utf-8"),
    EncodingCase("utf8_bom_and_utf8_cookie", "# -*- coding: utf-8 -*-\n# Données\n", "utf-8", True, "utf-8"),
    EncodingCase("latin1_cookie", "# -*- coding: latin-1 -*-\n# Données exportées\n", "latin-1", readable="iso8859-1"),
    EncodingCase(
        "cp1252_cookie_on_line_2",
        "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n# l\u2019export \u2018brut\u2019\n",
        "cp1252",
        readable="cp1252",
    ),
    EncodingCase("unknown_codec", "# -*- coding: klingon -*-\n", "latin-1"),
    EncodingCase("cookie_lies_utf8_but_latin1", "# -*- coding: utf-8 -*-\n# Données\n", "latin-1"),
    EncodingCase("cookie_on_line_3_is_ignored", "#\n#\n# -*- coding: latin-1 -*-\n", "latin-1"),
    EncodingCase("bom_and_latin1_cookie", "# -*- coding: latin-1 -*-\n# Données\n", "latin-1", bom=True),
    EncodingCase("no_cookie_latin1", "# Données\n", "latin-1"),
)
NON_UTF8_READABLE = tuple(case for case in CASES if case.readable not in (None, "utf-8"))
UNREADABLE = tuple(case for case in CASES if case.readable is None)
