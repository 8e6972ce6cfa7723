"""Column names as XML element names: ``_xHHHH_`` escapes, as in .NET's XmlConvert.

A character that cannot stand in an XML element name at its place (a space, ``:``, a
leading digit, ...) is written ``_xHHHH_`` (``_xHHHHHHHH_`` above U+FFFF), an ``_``
that starts such a sequence in the name itself is written ``_x005F_``, and the layout's
own names (``Results``, ``Result``, ``Columns``, ``Column``) get their first letter
escaped (``Result`` -> ``_x0052_esult``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

_START: Final = (
    "A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff"
    "\u200c-\u200d\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
    "\U00010000-\U000effff"
)
_CHAR: Final = _START + r"\-.0-9\u00b7\u0300-\u036f\u203f-\u2040"
_NCNAME: Final = re.compile(f"[{_START}][{_CHAR}]*")
_START_RE: Final = re.compile(f"[{_START}]")
_CHAR_RE: Final = re.compile(f"[{_CHAR}]")
ILLEGAL_XML_RE: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters no XML 1.0 document can hold, escaped or not: a writer base64-encodes such a
value (``_layouts``) and refuses such a column name (``_writers``)."""
_RESERVED: Final = frozenset({"Results", "Result", "Columns", "Column"})
_ESCAPE: Final = re.compile(r"_x([0-9A-Fa-f]{4}|[0-9A-Fa-f]{8})_")


@lru_cache(maxsize=4096)
def encode_name(name: str) -> str:
    """The XML element name of a column name."""
    if not name:
        raise ValueError("column names must not be empty")
    if name in _RESERVED:  # the layout's own element names
        return f"_x{ord(name[0]):04X}_{name[1:]}"
    if _NCNAME.fullmatch(name) and "_x" not in name:
        return name
    out = []
    for i, ch in enumerate(name):
        if ch == "_" and _ESCAPE.match(name, i):
            out.append("_x005F_")
        elif (_START_RE if i == 0 else _CHAR_RE).fullmatch(ch):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"_x{code:04X}_" if code <= 0xFFFF else f"_x{code:08X}_")
    return "".join(out)


@lru_cache(maxsize=4096)
def decode_name(tag: str) -> str:
    """The column name of an XML element name (inverse of :func:`encode_name`)."""
    if "_x" not in tag:
        return tag
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), tag)
