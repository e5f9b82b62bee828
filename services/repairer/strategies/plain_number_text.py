"""The plain reading of formatted number text, written as one expression at a conversion site:

    float(X)  ->  float(str(X).replace(",", "").strip(" $\\u20ac\\u00a3\\u00a5ABCDEFGHIJKLMNOPQRSTUVWXYZ"))

Currency signs and codes and spaces around the number go, commas go ("1,234.56" groups thousands with "," and
has a "." decimal point). It is right for a value exactly when the full helper (``number_text_helper``) reads
that value the same way: the value parses once stripped, has at most one ".", no "," after the "." and three
digits after every ",". A decimal comma ("7,25", "1.234,5"), dots grouping thousands, an apostrophe or a space
inside the number read differently (or not at all), and take the full helper.
"""

from __future__ import annotations

import re

from services.repairer.strategies.number_text_helper import CURRENCY_CODE

STRIPPED = " $\u20ac\u00a3\u00a5" + CURRENCY_CODE
STRIPPED_LITERAL = '" $\\u20ac\\u00a3\\u00a5' + CURRENCY_CODE + '"'
"""``STRIPPED`` as the source text of a string literal (the signs escaped, as the full helper writes them)."""
_GROUPING = re.compile(r",(?!\d{3}(?!\d))")
"""A comma not followed by exactly three digits: not a thousands separator."""


def plain_conversion(argument: str) -> str:
    """The argument of ``float(...)`` / ``int(...)`` read plainly (``argument`` is its source text)."""
    return f'str({argument}).replace(",", "").strip({STRIPPED_LITERAL})'


def reads_plainly(text: str) -> bool:
    """Whether the plain reading of ``text`` is a number, and the one the full helper reads."""
    number = text.strip(STRIPPED)
    dot = number.find(".")
    if number.count(".") > 1 or _GROUPING.search(number) or (dot >= 0 and "," in number[dot:]):
        return False
    try:
        float(text.replace(",", "").strip(STRIPPED))  # exactly what the plain conversion does
    except ValueError:
        return False
    return True
