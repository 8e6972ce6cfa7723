"""``campaign_status``: one row per respondent across results, send waves and callbacks.

Everything is joined on integer codes: every address of every source (results, sends,
events) is turned into its key (:func:`address_keys`) and encoded once, events find their
send through one encoding of MessageIDs, and each column is a ``bincount`` or a sort over
those codes. No per-row Python.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from surveykit.callbacks._events import Events
from surveykit.callbacks._funnel import DEFAULT_DELIVERED_STATUSES
from surveykit.campaign._sources import Sends, event_table, send_table
from surveykit.models.callbacks import PLACEHOLDER_MESSAGE_IDS
from surveykit.optouts import OptOutList, as_opt_outs
from surveykit.respondents._numbers import address_keys

STATUSES: Final = (
    "not_contacted",
    "undeliverable",
    "opted_out",
    "contacted",
    "started",
    "completed",
)
"""Every respondent's ``status`` is one of these (an ordered categorical, in this order)."""

DEFAULT_UNDELIVERABLE_STATUSES: Final = frozenset({"failed", "undeliverable", "rejected"})
"""Receipt statuses (any letter case) that mean a message did not reach its recipient."""

UNDELIVERABLE_OUTCOMES: Final = frozenset({"invalid", "landline"})
"""Send outcomes that say the address cannot receive the message."""

FLAGS: Final = (
    "not_in_results",
    "not_in_sends",
    "no_events",
    "unknown_message_id",
    "shared_number",
    "duplicate_in_results",
    "no_destination",
)
"""The names the ``flags`` column may hold (comma-separated, empty when none)."""

COLUMNS: Final = (
    "destination",
    "channel",
    "contacts",
    "first_contact",
    "last_contact",
    "last_outcome",
    "last_wave",
    "delivered",
    "clicked",
    "replied",
    "opted_out",
    "invited",
    "started",
    "completed",
    "status",
    "sends",
    "events",
    "flags",
)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _reached(values: pd.Series) -> pd.Series:
    """A results column as a flag: a datetime that is set, true, or a non-blank value."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.astype("boolean").fillna(False).astype(bool)
    if pd.api.types.is_datetime64_any_dtype(values.dtype) or pd.api.types.is_numeric_dtype(
        values.dtype
    ):
        return values.notna()
    text = values.astype("string").str.strip()
    return (text.notna() & (text != "")).astype(bool)


def _respondents(results: pd.DataFrame, region: str | None) -> pd.DataFrame:
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results: expected a DataFrame, got {type(results).__name__}")
    address_columns = [c for c in ("mobileNumber", "emailAddress") if c in results.columns]
    has_id = "respondentId" in results.columns
    if not address_columns and not has_id:
        raise ValueError(
            "results: needs a respondentId, mobileNumber or emailAddress column; "
            f"columns are {[str(c) for c in results.columns]}"
        )
    plain = results.reset_index(drop=True)
    destination = pd.Series(pd.NA, index=plain.index, dtype="string")
    for column in address_columns:
        destination = destination.fillna(address_keys(plain[column], region))
    if has_id:
        respondent = plain["respondentId"].astype("string").str.strip()
        respondent = respondent.mask(respondent == "")
    else:
        respondent = destination.copy()
    # A row that names nobody is still kept, under its position in the results.
    nameless = respondent.isna()
    respondent = respondent.fillna("results row " + pd.Series(plain.index, dtype="string"))
    started = _reached(plain["started"]) if "started" in plain else pd.Series(False, plain.index)
    completed = (
        _reached(plain["completed"]) if "completed" in plain else pd.Series(False, plain.index)
    )
    invited = _reached(plain["invited"]) if "invited" in plain else pd.Series(False, plain.index)
    frame = pd.DataFrame(
        {
            "respondent": respondent,
            "destination": destination,
            "channel": plain["channel"].astype("string")
            if "channel" in plain
            else pd.Series(pd.NA, index=plain.index, dtype="string"),
            "invited": (invited | started | completed).to_numpy(),
            "started": (started | completed).to_numpy(),
            "completed": completed.to_numpy(),
            "no_destination": (destination.isna() & ~nameless).to_numpy() | nameless.to_numpy(),
            "duplicate_in_results": False,
        }
    )
    repeated = frame["respondent"].duplicated(keep=False)
    if repeated.any():
        grouped = frame.groupby("respondent", sort=False)
        frame = grouped.agg(
            destination=("destination", "first"),
            channel=("channel", "first"),
            invited=("invited", "any"),
            started=("started", "any"),
            completed=("completed", "any"),
            no_destination=("no_destination", "all"),
        ).reset_index()
        frame["duplicate_in_results"] = grouped.size().to_numpy() > 1
    return frame


def _encode(*parts: pd.Series) -> tuple[list[IntArray], pa.Array]:
    """Codes per part (-1 where missing) into one shared dictionary of keys."""
    chunks: list[pa.Array] = []
    for part in parts:
        array = pa.array(part.array, type=pa.string(), from_pandas=True)
        # Chunks as they are: a ChunkedArray given whole to chunked_array goes value by value.
        chunks.extend(array.chunks if isinstance(array, pa.ChunkedArray) else [array])
    encoded = pa.chunked_array(chunks, type=pa.string()).combine_chunks().dictionary_encode()
    codes = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
    out, start = [], 0
    for part in parts:
        out.append(codes[start : start + len(part)])
        start += len(part)
    return out, encoded.dictionary


def _count(codes: IntArray, size: int, weights: Any = None) -> IntArray:
    ok = codes >= 0
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[ok]
    return np.bincount(codes[ok], weights=w, minlength=size).astype(np.int64)


def _last(codes: IntArray, times: IntArray, size: int) -> IntArray:
    """Per code, the position of its latest row by time (ties: the later row); -1 if none."""
    order = np.argsort(times, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    last = np.full(size, -1, dtype=np.int64)
    ok = codes >= 0
    if ok.any():
        top = pd.Series(rank[ok]).groupby(codes[ok], sort=False).max()
        last[top.index.to_numpy()] = order[top.to_numpy()]
    return last


def _is_in(values: pd.Series, choices: Collection[str] | pd.Series) -> BoolArray:
    """``values.isin(choices)`` as a bool array (pyarrow's kernel: pandas loops here)."""
    array = pa.array(values.array, type=pa.string(), from_pandas=True)
    if isinstance(choices, pd.Series):
        value_set = pa.array(choices.array, type=pa.string(), from_pandas=True)
    else:
        value_set = pa.array(list(choices), type=pa.string())
    hit = pc.fill_null(pc.is_in(array, value_set=value_set), False)
    return np.asarray(hit.to_numpy(zero_copy_only=False), dtype=bool)


def _take(values: Any, positions: IntArray, fill: Any) -> Any:
    """``values[positions]`` with ``fill`` where the position is -1."""
    arr = np.asarray(values)
    padded = np.append(arr, np.array([fill], dtype=arr.dtype))
    return padded[positions]


def _times(values: pd.Series) -> IntArray:
    stamps = pd.to_datetime(values, utc=True).dt.as_unit("us")
    ints = stamps.to_numpy(dtype="datetime64[us]").astype(np.int64)
    return np.asarray(ints, dtype=np.int64)


def _flags_text(bits: dict[str, BoolArray], size: int) -> pd.Series:
    code = np.zeros(size, dtype=np.int64)
    for n, name in enumerate(FLAGS):
        code |= bits[name].astype(np.int64) << n
    uniques, inverse = np.unique(code, return_inverse=True)
    names = [",".join(f for n, f in enumerate(FLAGS) if int(u) >> n & 1) for u in uniques]
    return pd.Series(np.asarray(names, dtype=object)[inverse], dtype="string")


def campaign_status(
    results: pd.DataFrame,
    *,
    sends: Sends | None = None,
    events: Events | None = None,
    opt_outs: OptOutList | str | os.PathLike[str] | None = None,
    region: str | None = None,
    delivered_statuses: Collection[str] = DEFAULT_DELIVERED_STATUSES,
    undeliverable_statuses: Collection[str] = DEFAULT_UNDELIVERABLE_STATUSES,
) -> pd.DataFrame:
    """One row per respondent: every wave's sends, the callbacks and the results joined.

    Respondents are the results' ``respondentId`` when it has one, else their address
    (``mobileNumber``, else ``emailAddress``). Sends and events are matched to a respondent
    by address, compared as keys (E.164 digits, lower-case email), so ``+44 7700 900123``
    and ``447700900123`` are one person; an event with a MessageID of a send belongs to that
    send's address, other events to their respondent's number (the Source of an inbound
    event, the Destination of others). Nothing is dropped: an address found only in sends
    or events gets a row of its own (index: the address), and the ``flags`` column says
    what did not match (see :data:`FLAGS`).

    Columns: ``destination`` (the key), ``channel`` (the results', else the journal's),
    ``contacts`` (rows with outcome ``sent``: messages the platform accepted, over every
    wave), ``first_contact`` / ``last_contact`` (their times), ``last_outcome`` and
    ``last_wave`` (of the latest send row, whatever its outcome), ``delivered`` (a receipt
    in ``delivered_statuses``, or a click, reply or STOP), ``clicked``, ``replied`` (an
    inbound Message or Keyword), ``opted_out`` (the latest STOP/UNSTOP is a STOP, or the
    address is on ``opt_outs``), ``invited`` / ``started`` / ``completed`` (from the
    results' columns of those names: set, true or non-blank; completed implies started,
    and started invited), ``status``,
    ``sends`` and ``events`` (rows of the sources counted for this respondent: with no
    shared numbers they add up to the sources' lengths) and ``flags``.

    ``status``, the first that holds, in this order:

    1. ``completed``: the results say so (even after a STOP: they did answer);
    2. ``opted_out``: ``opted_out`` is true, or the last send was ``blocked`` (the
       platform's stop list);
    3. ``started``: answered some questions;
    4. ``undeliverable``: nothing was ever delivered (no delivery receipt, click, reply)
       and a receipt status is in ``undeliverable_statuses`` or a send outcome was
       ``invalid`` or ``landline``;
    5. ``contacted``: at least one message accepted, or the results say ``invited`` (the
       platform's record that the survey's invitation went out, which counts where the
       journals of that send are not given);
    6. ``not_contacted``: everything else.

    Args:
        results: survey results (``client.surveys.results(...)``).
        sends: a ``BatchResult``, its ``frame``, or a journal path; a list of them (waves
            ``wave1``, ``wave2``... in order) or a dict of wave label to one.
        events: the listener's events DataFrame, an ``EventStore`` or its SQLite path.
        opt_outs: an :class:`OptOutList` (or its path) whose numbers count as opted out.
        region: how national numbers in the results are read (``GB``).
        delivered_statuses: receipt statuses meaning delivered (any letter case).
        undeliverable_statuses: receipt statuses meaning not delivered (any letter case).

    Returns:
        A DataFrame indexed by ``respondent`` with the columns in :data:`COLUMNS`.
    """
    people = _respondents(results, region)
    waves, channels = send_table(sends)
    view = _event_view(event_table(events), region)
    (people_code, send_code, event_code), keys = _encode(
        people["destination"], waves["destination"].fillna("(no address)"), view.number
    )
    size = len(keys)
    event_code, unknown_id = _attribute_events(waves, view, send_code, event_code)
    by_send = _send_facts(waves, send_code, size)
    by_event = _event_facts(
        view, event_code, unknown_id, size, delivered_statuses, undeliverable_statuses
    )
    rows = _rows(people, keys, people_code, by_send.per_sends, by_event.per_events)
    frame = _frame(people, rows, waves, channels, by_send, by_event)
    if opt_outs is not None:
        listed = as_opt_outs(opt_outs).contains(frame["destination"])
        frame["opted_out"] = frame["opted_out"].to_numpy() | listed.to_numpy()
    frame["sends"] = rows.at(by_send.per_sends, 0)
    frame["events"] = rows.at(by_event.per_events, 0)
    frame["status"] = _status(frame, rows, by_send, by_event)
    frame["flags"] = _flags(frame, people, rows, by_event, has_events=events is not None)
    frame.index = rows.index
    return frame[list(COLUMNS)]


@dataclass
class _EventView:
    """The events' fields that matter here, aligned with the events' rows."""

    kind: pd.Series  # lower-case Type
    status: pd.Series  # lower-case Status
    inbound: pd.Series  # bool: came from the respondent
    number: pd.Series  # the respondent's address key (Source inbound, else Destination)
    message_id: pd.Series
    timestamp: pd.Series


def _event_view(raw: pd.DataFrame, region: str | None) -> _EventView:
    kind = raw["type"].astype("string").str.lower().reset_index(drop=True)
    status_text = raw["status"].astype("string").str.lower().reset_index(drop=True)
    inbound_default = pd.Series(
        _is_in(kind, ["message", "keyword", "stop", "unstop", "help", "info"]), dtype="boolean"
    )
    inbound = (
        raw["inbound"].astype("boolean").reset_index(drop=True).fillna(inbound_default)
        if "inbound" in raw
        else inbound_default
    ).astype(bool)
    number = (
        raw["source"]
        .astype("string")
        .reset_index(drop=True)
        .where(inbound, raw["destination"].astype("string").reset_index(drop=True))
    )
    keyed = address_keys(number, region)
    # Events with no address of any kind are kept under the raw text, or one catch-all key.
    keyed = keyed.fillna(number.str.strip()).fillna("(no address)")
    return _EventView(
        kind=kind,
        status=status_text,
        inbound=inbound,
        number=keyed,
        message_id=raw["message_id"].astype("string").reset_index(drop=True),
        timestamp=raw["timestamp"],
    )


def _attribute_events(
    waves: pd.DataFrame, view: _EventView, send_code: IntArray, event_code: IntArray
) -> tuple[IntArray, BoolArray]:
    """Events of a known send belong to that send's address; which name an unknown id."""
    send_ids = waves["message_id"].astype("string")
    placeholder = _is_in(view.message_id.str.strip().str.lower(), PLACEHOLDER_MESSAGE_IDS)
    (send_mid, event_mid), mids = _encode(send_ids, view.message_id.mask(placeholder))
    owner = np.full(len(mids) + 1, -1, dtype=np.int64)
    has_mid = send_mid >= 0
    owner[send_mid[has_mid]] = send_code[has_mid]
    by_message = owner[event_mid]
    unknown_id = (event_mid >= 0) & (by_message < 0)
    return np.where(by_message >= 0, by_message, event_code), unknown_id


@dataclass
class _SendFacts:
    """Per address: what the sends say (positions are rows of the send table, -1: none)."""

    outcome: pd.Series
    times: IntArray
    per_sends: IntArray
    contacts: IntArray
    first_pos: IntArray
    last_pos: IntArray
    latest: IntArray
    hard: BoolArray


def _send_facts(waves: pd.DataFrame, send_code: IntArray, size: int) -> _SendFacts:
    outcome = waves["outcome"].astype("string").fillna("unknown")
    sent = (outcome == "sent").to_numpy(dtype=bool)
    times = _times(waves["time"])
    sent_codes = np.where(sent, send_code, -1)
    return _SendFacts(
        outcome=outcome,
        times=times,
        per_sends=_count(send_code, size),
        contacts=_count(send_code, size, sent),
        first_pos=_last(sent_codes, -times, size),
        last_pos=_last(sent_codes, times, size),
        latest=_last(send_code, times, size),
        hard=_count(send_code, size, _is_in(outcome, UNDELIVERABLE_OUTCOMES)) > 0,
    )


@dataclass
class _EventFacts:
    """Per address: what the callbacks say."""

    per_events: IntArray
    clicked: BoolArray
    replied: BoolArray
    receipt_failed: BoolArray
    unknown_ids: BoolArray
    stopped: BoolArray
    delivered: BoolArray


def _event_facts(
    view: _EventView,
    event_code: IntArray,
    unknown_id: BoolArray,
    size: int,
    delivered_statuses: Collection[str],
    undeliverable_statuses: Collection[str],
) -> _EventFacts:
    kind = view.kind
    receipt = (kind == "receipt").to_numpy(dtype=bool)

    def any_of(mask: Any) -> BoolArray:
        return _count(event_code, size, np.asarray(mask, dtype=bool)) > 0

    delivered_set = [s.lower() for s in delivered_statuses]
    failed_set = [s.lower() for s in undeliverable_statuses]
    clicked = any_of(kind == "click")
    replied = any_of(_is_in(kind, ["message", "keyword"]) & view.inbound.to_numpy(dtype=bool))
    receipt_ok = any_of(receipt & _is_in(view.status, delivered_set))
    opt_kind = _is_in(kind, ["stop", "unstop"])
    opt_times = _times(view.timestamp) if len(kind) else np.zeros(0, np.int64)
    opt_last = _last(np.where(opt_kind, event_code, -1), opt_times, size)
    return _EventFacts(
        per_events=_count(event_code, size),
        clicked=clicked,
        replied=replied,
        receipt_failed=any_of(receipt & _is_in(view.status, failed_set)),
        unknown_ids=any_of(unknown_id),
        stopped=_take((kind == "stop").to_numpy(dtype=bool), opt_last, False),
        delivered=receipt_ok | clicked | replied | any_of(kind == "stop"),
    )


@dataclass
class _Rows:
    """The output's rows: the results' respondents, then addresses found only elsewhere."""

    code: IntArray  # per row, its address code
    extra_keys: pd.Series  # the addresses of the extra rows
    index: pd.Index
    n_people: int

    def at(self, values: Any, fill: Any) -> Any:
        """Per row, the value of its address (``fill`` where it has none)."""
        return _take(values, self.code, fill)

    def pos(self, values: IntArray) -> IntArray:
        """Per row, a position per address (-1: none)."""
        return np.asarray(_take(values, self.code, -1), dtype=np.int64)


def _rows(
    people: pd.DataFrame,
    keys: pa.Array,
    people_code: IntArray,
    per_sends: IntArray,
    per_events: IntArray,
) -> _Rows:
    size = len(keys)
    in_people = np.zeros(size, dtype=bool)
    in_people[people_code[people_code >= 0]] = True
    extra = np.flatnonzero(~in_people & ((per_sends > 0) | (per_events > 0)))
    key_text = pd.Series(keys.to_pandas(), dtype="string")
    extra_keys = key_text.iloc[extra].reset_index(drop=True)
    clash = _is_in(extra_keys, people["respondent"])
    extra_index = extra_keys.where(~clash, "destination:" + extra_keys)
    index = pd.Index(
        pd.concat([people["respondent"], extra_index], ignore_index=True),
        name="respondent",
        dtype="string",
    )
    return _Rows(np.concatenate([people_code, extra]), extra_keys, index, len(people))


def _frame(
    people: pd.DataFrame,
    rows: _Rows,
    waves: pd.DataFrame,
    channels: Any,
    by_send: _SendFacts,
    by_event: _EventFacts,
) -> pd.DataFrame:
    """The per-respondent columns from the sends, the events and the results."""
    nat = np.iinfo(np.int64).min
    n_extra = len(rows.extra_keys)

    def stamp(positions: IntArray) -> pd.Series:
        raw = np.where(positions >= 0, _take(by_send.times, positions, nat), nat)
        return pd.Series(raw.astype("datetime64[us]")).dt.tz_localize("UTC")

    row_latest = rows.pos(by_send.latest)
    wave_of = waves["wave"].astype("string").to_numpy(dtype=object)
    last_wave = pd.Series(_take(wave_of, row_latest, None), dtype="string")
    channel = pd.concat(
        [people["channel"], pd.Series(pd.NA, index=range(n_extra), dtype="string")],
        ignore_index=True,
    ).fillna(last_wave.map(pd.Series(channels, dtype="string")).astype("string"))
    return pd.DataFrame(
        {
            "destination": pd.concat(
                [people["destination"], rows.extra_keys], ignore_index=True
            ).astype("string"),
            "channel": channel.astype("string"),
            "contacts": rows.at(by_send.contacts, 0),
            "first_contact": stamp(rows.pos(by_send.first_pos)),
            "last_contact": stamp(rows.pos(by_send.last_pos)),
            "last_outcome": pd.Series(
                _take(by_send.outcome.to_numpy(dtype=object), row_latest, None), dtype="string"
            ),
            "last_wave": last_wave,
            "delivered": rows.at(by_event.delivered, False),
            "clicked": rows.at(by_event.clicked, False),
            "replied": rows.at(by_event.replied, False),
            "opted_out": rows.at(by_event.stopped, False),
            "invited": np.r_[people["invited"].to_numpy(dtype=bool), np.zeros(n_extra, bool)],
            "started": np.r_[people["started"].to_numpy(dtype=bool), np.zeros(n_extra, bool)],
            "completed": np.r_[people["completed"].to_numpy(dtype=bool), np.zeros(n_extra, bool)],
        }
    )


def _status(
    frame: pd.DataFrame, rows: _Rows, by_send: _SendFacts, by_event: _EventFacts
) -> pd.Categorical:
    """Each row's status: the first of :data:`STATUSES` that holds (see campaign_status)."""
    undeliverable = ~rows.at(by_event.delivered, False) & (
        rows.at(by_event.receipt_failed, False) | rows.at(by_send.hard, False)
    )
    blocked = (frame["last_outcome"] == "blocked").fillna(False).to_numpy(dtype=bool)
    opted = frame["opted_out"].to_numpy(dtype=bool) | blocked
    choice = np.select(
        [
            frame["completed"].to_numpy(dtype=bool),
            opted,
            frame["started"].to_numpy(dtype=bool),
            undeliverable,
            (frame["contacts"].to_numpy() > 0) | frame["invited"].to_numpy(dtype=bool),
        ],
        ["completed", "opted_out", "started", "undeliverable", "contacted"],
        default="not_contacted",
    )
    return pd.Categorical(choice, categories=list(STATUSES), ordered=True)


def _flags(
    frame: pd.DataFrame,
    people: pd.DataFrame,
    rows: _Rows,
    by_event: _EventFacts,
    *,
    has_events: bool,
) -> pd.Series:
    """What did not match, per row (see :data:`FLAGS`)."""
    n_rows, n_extra = len(frame), len(rows.extra_keys)
    shared = people["destination"].duplicated(keep=False) & people["destination"].notna()

    def pad(values: Any) -> BoolArray:
        head = np.asarray(values, dtype=bool)
        padded: BoolArray = np.concatenate([head, np.zeros(n_rows - len(head), dtype=bool)])
        return padded

    bits = {
        "not_in_results": np.r_[np.zeros(rows.n_people, bool), np.ones(n_extra, bool)],
        "not_in_sends": frame["sends"].to_numpy() == 0,
        "no_events": (frame["contacts"].to_numpy() > 0)
        & (frame["events"].to_numpy() == 0)
        & has_events,
        "unknown_message_id": rows.at(by_event.unknown_ids, False),
        "shared_number": pad(shared.to_numpy()),
        "duplicate_in_results": pad(people["duplicate_in_results"].to_numpy()),
        "no_destination": pad(people["no_destination"].to_numpy()),
    }
    return _flags_text(bits, n_rows)
