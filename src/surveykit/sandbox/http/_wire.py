"""Request bodies in, responses out, in the content types the reference lists.

Bodies: JSON as ``application/json``, ``text/json``, ``application/*+json`` or
``text/plain``; XML (``application/xml``, ``text/xml``, ``application/*+xml``) where the
route takes it (GetResults and TinyUrl). Responses: JSON, or XML when the Accept header
prefers it; ``text/plain`` and ``text/json`` get the JSON text under that type.
XML is read without entities, DTDs or network access.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final
from xml.sax.saxutils import escape

from lxml import etree
from starlette.requests import Request
from starlette.responses import Response

from surveykit.sandbox.state._errors import Problem, SandboxHTTPError

MAX_BODY: Final = 32 * 1024 * 1024
"""The largest request body the sandbox reads (32 MiB)."""

MAX_DEPTH: Final = 32
"""The deepest nesting of arrays and objects a JSON body may have (the platform's are 4)."""

_JSON_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_TOKENS: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_NOT_BRACKETS: Final = bytes(sorted(set(range(256)) - set(b"[]{}")))

JSON_TYPES: Final = ("application/json", "text/json", "text/plain")
XML_TYPES: Final = ("application/xml", "text/xml")
RESPONSE_TYPES: Final = (
    "application/json",
    "text/json",
    "text/plain",
    "application/xml",
    "text/xml",
)


def media_type(header: str | None) -> str:
    """The bare media type of a Content-Type header, lower case."""
    return (header or "").split(";")[0].strip().lower()


def is_json_type(media: str) -> bool:
    """Whether a media type carries JSON for the platform."""
    return media in JSON_TYPES or (media.startswith("application/") and media.endswith("+json"))


def is_xml_type(media: str) -> bool:
    """Whether a media type carries XML for the platform."""
    return media in XML_TYPES or (media.startswith("application/") and media.endswith("+xml"))


async def read_body(request: Request, *, xml: bool = False, lists: Sequence[str] = ()) -> Any:
    """Read and parse a request body; raise a 400 or 415 Problem when it cannot be read.

    ``lists`` names XML elements that are always lists (``urls``), even with one item.
    """
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise Problem(413, f"The body is larger than {MAX_BODY} bytes.")
    media = media_type(request.headers.get("content-type"))
    if not raw.strip():
        raise Problem(400, "A non-empty request body is required.")
    if is_json_type(media):
        try:
            return loads_json(raw)
        except ValueError as exc:
            raise Problem(400, str(exc)) from None
    if xml and is_xml_type(media):
        return parse_xml(raw, lists)
    accepted = "JSON (application/json, text/json, application/*+json, text/plain)"
    if xml:
        accepted += " or XML (application/xml, text/xml, application/*+xml)"
    raise Problem(415, f"Content-Type {media or '(none)'!r} is not accepted; send {accepted}.")


def nesting_error(raw: bytes, limit: int = MAX_DEPTH) -> str | None:
    """Why a JSON text is nested too deeply to parse (None when it is not).

    A scan of brackets outside strings, which stops at the first one past ``limit``: so
    a body nested thousands deep costs nothing and never reaches the recursive parser.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return None
    import numpy as np

    # Fast path: the brackets outside strings, their running depth (numpy, no loop).
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    if not len(steps) or int(np.cumsum(steps).max()) <= limit:
        return None
    depth = 0  # too deep: find the byte offset to name
    for token in _JSON_TOKENS.finditer(raw):
        char = token.group()[:1]
        if char in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return (
                    f"The JSON body is nested deeper than {limit} levels "
                    f"(byte offset {token.start()})."
                )
        elif char in (b"]", b"}"):
            depth -= 1
    return None


def loads_json(raw: bytes) -> Any:
    """Parse a JSON body; ``ValueError`` says why it cannot be (too deep, or not JSON)."""
    problem = nesting_error(raw)
    if problem is not None:
        raise ValueError(problem)
    try:
        return json.loads(raw)
    except RecursionError:  # pragma: no cover - the scan refuses these first
        raise ValueError("The JSON body is nested too deeply.") from None
    except ValueError as exc:
        raise ValueError(f"The body is not valid JSON: {exc}") from None


def _xml_value(element: Any, lists: Sequence[str]) -> Any:
    children = [child for child in element if isinstance(child.tag, str)]
    if not children:
        nil = element.get("{http://www.w3.org/2001/XMLSchema-instance}nil")
        if nil == "true":
            return None
        return element.text or ""
    if etree.QName(element).localname in lists:
        return [_xml_value(child, lists) for child in children]
    names = [etree.QName(child).localname for child in children]
    if len(names) > 1 and len(set(names)) == 1:
        return [_xml_value(child, lists) for child in children]
    return {etree.QName(child).localname: _xml_value(child, lists) for child in children}


def parse_xml(raw: bytes, lists: Sequence[str] = ()) -> Any:
    """Read an XML body (ASP.NET XmlSerializer shape) into dicts, lists and strings.

    The root element's name is not checked. Text stays text: ``<header>true</header>``
    becomes ``"true"``, which the models accept.
    """
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise Problem(400, f"The body is not well-formed XML: {exc}") from None
    value = _xml_value(root, lists)
    if isinstance(value, str):
        raise Problem(400, "The XML body has no fields.")
    return value


def _coerce_xml_scalars(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _coerce_xml_scalars(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_coerce_xml_scalars(item) for item in value]
    if value in ("true", "false"):
        return value == "true"
    return value


def xml_booleans(value: Any) -> Any:
    """Turn the XML text ``true``/``false`` into booleans (the models want real ones)."""
    return _coerce_xml_scalars(value)


# --------------------------------------------------------------------------- responses


def preferred_type(accept: str | None) -> str:
    """The response type for an Accept header: the first listed type the routes offer."""
    if not accept:
        return "application/json"
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(accept.split(",")):
        pieces = part.strip().split(";")
        media = pieces[0].strip().lower()
        quality = 1.0
        for param in pieces[1:]:
            name, _, raw = param.strip().partition("=")
            if name.strip() == "q":
                try:
                    quality = float(raw)
                except ValueError:
                    quality = 0.0
        ranked.append((-quality, position, media))
    for negative_quality, _, media in sorted(ranked):
        if negative_quality == 0:
            continue
        if media in RESPONSE_TYPES:
            return media
        if media in ("*/*", "application/*"):
            return "application/json"
        if media == "text/*":
            return "text/json"
    return "application/json"


def _xml_element(name: str, value: Any, item: str) -> str:
    if value is None:
        return f'<{name} xsi:nil="true" />'
    if isinstance(value, bool):
        return f"<{name}>{'true' if value else 'false'}</{name}>"
    if isinstance(value, Mapping):
        inner = "".join(_xml_element(str(k), v, _item_name(str(k))) for k, v in value.items())
        return f"<{name}>{inner}</{name}>"
    if isinstance(value, list | tuple):
        inner = "".join(_xml_element(item, v, "item") for v in value)
        return f"<{name}>{inner}</{name}>"
    return f"<{name}>{escape(str(value)).replace(chr(13), '&#13;')}</{name}>"


def _item_name(field: str) -> str:
    # A list field's items: "events" -> "string", "errors" -> "string", others singular.
    return {"events": "string", "urls": "UrlModel", "urlList": "UrlModel"}.get(field, "string")


def to_xml(body: Any, root: str, item: str = "item") -> bytes:
    """Render a body as XML in the ASP.NET XmlSerializer shape (``ArrayOfX`` for lists)."""
    namespaces = (
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xmlns:xsd="http://www.w3.org/2001/XMLSchema"'
    )
    if isinstance(body, list):
        inner = "".join(_xml_element(item, value, "item") for value in body)
        text = f"<ArrayOf{item} {namespaces}>{inner}</ArrayOf{item}>"
    elif isinstance(body, Mapping):
        element = _xml_element(root, body, item)
        text = element.replace(f"<{root}>", f"<{root} {namespaces}>", 1)
    else:
        text = f"<string>{escape(str(body))}</string>"
    return ('<?xml version="1.0" encoding="utf-8"?>' + text).encode()


def render(
    request: Request,
    body: Any,
    *,
    status: int = 200,
    root: str = "Response",
    item: str = "item",
    headers: Mapping[str, str] | None = None,
) -> Response:
    """A response in the type the Accept header prefers (JSON by default)."""
    media = preferred_type(request.headers.get("accept"))
    if media in XML_TYPES:
        content = to_xml(body, root, item)
    else:
        content = json.dumps(body, ensure_ascii=False).encode()
    return Response(
        content,
        status_code=status,
        media_type=f"{media}; charset=utf-8",
        headers=dict(headers or {}),
    )


def render_error(request: Request, error: SandboxHTTPError) -> Response:
    """An error answer: plain text for text errors, else JSON/XML like any body."""
    if error.kind == "text":
        return Response(
            str(error.body),
            status_code=error.status,
            media_type="text/plain; charset=utf-8",
            headers=error.headers,
        )
    if isinstance(error.body, dict) and "instance" in error.body and error.body["instance"] is None:
        error.body["instance"] = request.url.path
    return render(request, error.body, status=error.status, root=error.root, headers=error.headers)
