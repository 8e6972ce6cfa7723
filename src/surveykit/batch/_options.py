"""The one definition of a batch's options.

``send_batch``, ``preview_batch``, :class:`~surveykit.widgets.BatchComposer` and
``surveykit send`` all take their options from here: the types (:class:`BatchOptions`,
:class:`SendOptions`, :class:`PreviewOptions`, checked by mypy at every call through
``**options: Unpack[...]``), the defaults and the one sentence documenting each
(:data:`OPTIONS`), from which the functions' signatures and docstrings are built.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from os import PathLike
from typing import TYPE_CHECKING, Any, Literal, Required, TypeAlias, TypedDict, TypeVar

if TYPE_CHECKING:
    import pandas as pd

    from surveykit.batch._spec import Skip, Windows
    from surveykit.models import CallbackSettings

Channel: TypeAlias = Literal["sms", "whatsapp", "facebook", "whatsapp_template", "email"]
Progress: TypeAlias = Callable[[dict[str, int]], None]
"""A ``progress=`` function: called with the rows per outcome so far, once per finished row."""


class BatchOptions(TypedDict, total=False):
    """What a batch sends and to whom: shared by sending and previewing (see :data:`OPTIONS`)."""

    message: str | None
    source: Required[str]
    destination: str | None
    channel: Channel
    reply: bool
    windows: Windows | None
    timezone: str | None
    when: datetime | str | None
    lookup: bool
    test: bool
    timeout: int | None
    survey_id: int | None
    on_behalf: str | None
    to: str | None
    subject: str | None
    content: str | None
    metadata: Sequence[str] | Mapping[str, Any] | None
    callback: CallbackSettings | Mapping[str, Any] | None
    links: str | None
    reuse_links: bool | None
    skip: Skip | None
    lookups: pd.DataFrame | None
    rate: float | None
    opt_outs: Any
    region: str | None
    strict: bool


class SendOptions(BatchOptions, total=False):
    """The options of :func:`~surveykit.send_batch`: a batch's, and how the run goes."""

    only: Literal["failed"] | None
    resend_unknown: bool
    concurrency: int
    journal: str | PathLike[str] | None
    journal_timeout: float | None
    progress: bool | Progress


class PreviewOptions(BatchOptions, total=False):
    """The options of :func:`~surveykit.preview_batch`: a batch's, and the preview's own."""

    start: datetime | None
    link_placeholder: str


@dataclass(frozen=True)
class Option:
    """One option: its default, its documentation, and its help on the command line.

    ``cli`` is the one-line help of ``surveykit send``'s option of the same name (its
    ``--`` form); None when the option takes a Python value the command line cannot give
    (a Series, a DataFrame, a function).
    """

    default: Any
    doc: str
    cli: str | None = None


_REQUIRED = inspect.Parameter.empty

OPTIONS: dict[str, Option] = {
    "message": Option(
        None,
        'the text template, ``"Hi {firstName}, your survey: {link}"``.',
        cli="Template, e.g. 'Hi {firstName}: {link}' (email: the content).",
    ),
    "source": Option(
        _REQUIRED,
        "the sender: number, short code or brand (email: the From route).",
        cli="Sender: number, short code or brand.",
    ),
    "destination": Option(
        None,
        "the column of phone numbers, as people write them (see ``region``; default "
        "``mobileNumber``), or for email of addresses (default ``emailAddress``).",
        cli="Column of numbers (or addresses).",
    ),
    "channel": Option(
        "sms",
        "``sms``, ``whatsapp``, ``facebook``, ``whatsapp_template`` or ``email``.",
        cli="sms, whatsapp, facebook, whatsapp_template, email.",
    ),
    "reply": Option(
        False,
        "whether recipients can reply (needs a number or short code as source). ``reply``, "
        "``timeout``, ``survey_id``, ``on_behalf``, ``region`` and ``strict`` are refused, "
        "by name, for email; "
        "``to``, ``subject``, ``content``, ``metadata`` and ``callback`` for the other "
        "channels.",
        cli="Allow replies.",
    ),
    "windows": Option(
        None,
        'Window objects, dicts, or shorthand such as ``"Mon-Fri 09:00-18:00"``. Without '
        "``timezone`` they are the platform's clock, which surveykit takes to be UTC unless "
        "``Client(window_timezone=...)`` says otherwise. An email request has no windows: "
        "each email row's When is set to the first moment inside one instead. A preset "
        '``"us-tcpa"`` (or ``"legal"``) is 8:00 to 21:00 every day in each respondent\'s '
        'local time (``timezone="auto"`` unless given): the US TCPA calling hours, a '
        "convenience and not legal advice (some states allow less).",
        cli="'Mon-Fri 09:00-18:00'; repeatable.",
    ),
    "timezone": Option(
        None,
        'read ``windows`` in each respondent\'s local time: ``"auto"`` (the zone of the '
        "number, from phonenumbers), a column of zone names (a cell ``auto`` takes that "
        "row's zone from its number), or one zone name such as "
        '``"Europe/London"``. Each row is sent with ``when`` at its first allowed local '
        "moment and its windows moved to the platform's zone for that day (daylight saving "
        "included). A number whose country spans several zones gets only the times inside "
        'the windows in every one of them; with none, the row is ``rejected`` ("several '
        'time zones: give a timezone column"). The outcome and the preview show each '
        "row's ``timezone`` and ``local_send_time``.",
        cli="Read --window in local time: auto (from the number), a column, or a zone.",
    ),
    "when": Option(
        None,
        "send later: a timezone-aware datetime or pandas Timestamp, an ISO 8601 string "
        "with an offset, or the name of a column of such times (one per row; an empty "
        "cell is now). A time without a zone is refused, naming ``when`` (and the row).",
        cli="Send later: ISO 8601 time with an offset, or a column of such times.",
    ),
    "lookup": Option(
        False,
        "look each destination up before sending (landlines are not sent).",
        cli="Look each number up first; landlines are not sent.",
    ),
    "test": Option(
        False,
        "test routing only; nothing is sent (outcome ``tested``).",
        cli="Test routing only; nothing is sent.",
    ),
    "timeout": Option(None, "minutes the platform keeps each message open for a reply."),
    "survey_id": Option(None, "the survey the messages belong to."),
    "on_behalf": Option(None, "the account or organisation sending, where configured."),
    "to": Option(None, "email recipient template (defaults to the address column)."),
    "subject": Option(None, "email subject template.", cli="Email subject template."),
    "content": Option(None, "email HTML content template (defaults to ``message``)."),
    "metadata": Option(None, "email MetaData: column names (per-row values) or a fixed dict."),
    "callback": Option(None, "email Callback settings."),
    "links": Option(
        None,
        "a column of URLs to shorten per row (TinyUrl/RegisterList), used as ``{link}``.",
        cli="Column of URLs to shorten into {link}.",
    ),
    "reuse_links": Option(None, "the ``reuse`` flag for short links."),
    "skip": Option(
        None,
        'leave rows out: a boolean Series, or ``{"landline", "unreachable"}`` checked '
        "against ``lookups``.",
    ),
    "lookups": Option(None, "the frame :func:`lookup_frame` returned, for ``skip``."),
    "rate": Option(
        None,
        "the most requests per second (a token bucket); None for no limit.",
        cli="Most requests per second.",
    ),
    "opt_outs": Option(
        None,
        "an :class:`~surveykit.OptOutList` (or its path): each row's destination is checked "
        "right before its request, so a STOP that arrives while the batch runs still stops "
        "the rows after it; those rows get the outcome ``opted_out`` and no request (they "
        "are not journaled: a re-run checks them again).",
    ),
    "region": Option(
        None,
        "how national numbers (``07911 123456``) are read: an ISO 3166 region such as "
        '``"GB"``; default the client\'s ``default_region``. Destinations are normalised '
        "by the import's code (``+44 7911 123456``, dashes, spaces, spreadsheet floats), "
        "and each row's ``number_check`` says ``valid`` or ``unverified`` (possible but "
        "not valid for phonenumbers: a new range, or a fictional one like 07700 900xxx).",
        cli="Region for national numbers, e.g. GB (default: the client's).",
    ),
    "strict": Option(
        False,
        "refuse ``unverified`` numbers: those rows get the outcome ``rejected`` and no request.",
        cli="Refuse numbers phonenumbers cannot verify (outcome rejected).",
    ),
    # send_batch only
    "only": Option(
        None,
        '``"failed"`` resends, with the same journal, only rows whose outcome was a '
        "definite failure.",
        cli="With --journal: resend definite failures.",
    ),
    "resend_unknown": Option(
        False, "also resend rows whose outcome is unknown (they may have arrived)."
    ),
    "concurrency": Option(8, "requests in flight at once.", cli="Requests in flight."),
    "journal": Option(
        None,
        "an SQLite file recording every row before and after its request; re-run with the "
        "same file to resume without sending anything twice. One run at a time holds it, "
        "across processes and by any of the file's names (a lock on the file itself, "
        "released when the run ends, even by SIGKILL); an existing file must be a whole "
        "journal, or :class:`~surveykit.batch.JournalError` says what is wrong before "
        "anything is sent.",
        cli="SQLite journal: resume, never send twice (default FILE.journal.sqlite beside FILE).",
    ),
    "journal_timeout": Option(
        0.0,
        "seconds to wait while another run holds the journal; 0 (the default) raises "
        ":class:`~surveykit.batch.JournalLockedError` at once, naming the holder's pid and "
        "host; None waits as long as it takes.",
        cli="Wait this long while another run holds the journal.",
    ),
    "progress": Option(
        True,
        "show a progress bar (tqdm) with counts per outcome; False for none; or a function "
        "to call instead, each time a row gets its outcome, with the rows per outcome so "
        "far (a new dict each call; the values add up to ``len(df)`` at the end). It runs "
        "on the thread or task that finished the row, one call at a time, so keep it short. "
        "With a sync client, raising KeyboardInterrupt in it stops the batch as Ctrl-C does.",
    ),
    # preview_batch only
    "start": Option(None, "the submission time to preview from (default ``when``, else now)."),
    "link_placeholder": Option(
        "https://sho.rt/AbCd123",
        "the link shown for ``{link}`` (no short link is registered by a preview).",
    ),
}
"""Every option's default and documentation, in the order signatures list them."""


def option_names(kind: type[Any]) -> tuple[str, ...]:
    """The option names of a TypedDict of this module, in :data:`OPTIONS` order."""
    keys = set(kind.__annotations__)
    for base in getattr(kind, "__orig_bases__", ()):
        keys |= set(getattr(base, "__annotations__", {}))
    keys |= set(getattr(kind, "__required_keys__", ())) | set(
        getattr(kind, "__optional_keys__", ())
    )
    return tuple(name for name in OPTIONS if name in keys)


def resolve(kind: type[Any], given: Mapping[str, Any], *, function: str) -> dict[str, Any]:
    """``given`` with every missing option at its default; an unknown name is a TypeError."""
    names = option_names(kind)
    unknown = [name for name in given if name not in names]
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    options = {name: given.get(name, OPTIONS[name].default) for name in names}
    missing = [name for name, value in options.items() if value is _REQUIRED]
    if missing:
        raise TypeError(f"{function}() missing required keyword argument: {missing[0]!r}")
    return options


def _annotation(kind: type[Any], name: str) -> Any:
    for cls in kind.__mro__:
        raw = getattr(cls, "__annotations__", {}).get(name)
        if raw is not None:
            text = getattr(raw, "__forward_arg__", raw)
            return (
                str(text).removeprefix("Required[").removesuffix("]")
                if (str(text).startswith("Required["))
                else text
            )
    return inspect.Parameter.empty


F = TypeVar("F", bound=Callable[..., Any])


def documented(kind: type[Any], *, leading: Sequence[str]) -> Callable[[F], F]:
    """Give a function taking ``**options: Unpack[kind]`` a signature and Args from OPTIONS.

    ``help()`` and IDEs then list every option with its default and its sentence; the
    docstring's ``{options}`` marker is replaced by the options' Args entries.
    """

    def wrap(fn: F) -> F:
        signature = inspect.signature(fn)
        head = [p for p in signature.parameters.values() if p.name in leading]
        params = head + [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=OPTIONS[name].default,
                annotation=_annotation(kind, name),
            )
            for name in option_names(kind)
        ]
        fn.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        entries = "\n".join(
            textwrap.fill(
                f"{name}: {OPTIONS[name].doc}",
                width=88,
                initial_indent="        ",
                subsequent_indent="            ",
            )
            for name in option_names(kind)
        )
        if fn.__doc__ and "{options}" in fn.__doc__:
            fn.__doc__ = fn.__doc__.replace("        {options}", entries)
        return fn

    return wrap


__all__ = [
    "OPTIONS",
    "BatchOptions",
    "Channel",
    "Option",
    "PreviewOptions",
    "Progress",
    "SendOptions",
    "documented",
    "option_names",
    "resolve",
]
