"""``preview_batch``: every row rendered and checked, its send time worked out, nothing sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from typing_extensions import Unpack

from surveykit.batch._journal import row_key
from surveykit.batch._options import PreviewOptions, documented, resolve
from surveykit.batch._plan import plan_rows, skip_mask
from surveykit.batch._result import BatchPreview, client_region, platform_now, platform_zone
from surveykit.batch._runner import OPTED_OUT
from surveykit.batch._spec import make_spec
from surveykit.optouts import as_opt_outs

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

PREVIEW_COLUMNS = [
    "destination",
    "number_check",
    "text",
    "segments",
    "encoding",
    "outcome",
    "error",
    "send_at",
]


@documented(PreviewOptions, leading=("client", "df"))
def preview_batch(
    client: Client | AsyncClient | None, df: pd.DataFrame, **options: Unpack[PreviewOptions]
) -> BatchPreview:
    """Render and validate every row without sending anything (no request is made).

    It takes the options of :func:`send_batch` (those about running a send aside) and
    checks them alike. Short links are not registered: ``{link}`` is filled with
    ``link_placeholder`` so segment counts are realistic. Send times assume submission from
    ``when`` (or ``start``, or now) at ``rate`` requests per second, each held until its
    first allowed window. Rows whose destination is on ``opt_outs`` get the outcome
    ``opted_out``. With ``timezone=``, each row also shows its ``timezone`` and its
    ``local_send_time``.

    Args:
        client: the client the batch would use (its clock and window zone), or None.
        df: one row per recipient; its index labels the preview (must be unique).
        **options: the batch's options:
        {options}

    Totals: rows, ready, segments, rejected (by reason), first_send and last_send.
    """
    given = resolve(PreviewOptions, options, function="preview_batch")
    spec = make_spec(
        df, given, platform=platform_zone(client), default_region=client_region(client)
    )
    placeholder = {row_key(label): given["link_placeholder"] for label in df.index}
    local = spec.zones is not None
    records = []
    for plan in plan_rows(
        df,
        spec,
        links=placeholder if spec.links else None,
        skip=skip_mask(df, given["skip"], given["lookups"]),
        start=given["start"] or platform_now(client),
        rate=given["rate"],
        keys=row_key,
    ):
        record = {
            "destination": plan.destination,
            "number_check": plan.check,
            "text": plan.text,
            "segments": plan.segments,
            "encoding": plan.encoding,
            "outcome": plan.outcome or "ready",
            "error": plan.error,
            "send_at": plan.send_at,
        }
        if local:
            record.update(timezone=plan.zone, local_send_time=plan.local_time)
        records.append(record)
    columns = PREVIEW_COLUMNS + (["timezone", "local_send_time"] if local else [])
    frame = pd.DataFrame.from_records(records, index=df.index, columns=columns)
    frame["segments"] = frame["segments"].astype("Int64")
    frame["send_at"] = pd.to_datetime(frame["send_at"], utc=True)
    if given["opt_outs"] is not None:
        listed = (frame["outcome"] == "ready") & as_opt_outs(given["opt_outs"]).contains(
            frame["destination"]
        )
        frame["outcome"] = frame["outcome"].mask(listed, "opted_out")
        frame["error"] = frame["error"].mask(listed, OPTED_OUT)
        frame["send_at"] = frame["send_at"].mask(listed)
        if local:
            frame["local_send_time"] = frame["local_send_time"].mask(listed)
    ready = frame[frame["outcome"] == "ready"]
    not_ready = frame[frame["outcome"] != "ready"]
    reasons = (
        not_ready["outcome"].astype(str) + ": " + not_ready["error"].fillna("").astype(str)
    ).value_counts()
    totals = {
        "rows": len(frame),
        "ready": len(ready),
        "segments": int(ready["segments"].sum()) if len(ready) else 0,
        "rejected": {str(k): int(v) for k, v in reasons.items()},
        "first_send": ready["send_at"].min() if len(ready) else None,
        "last_send": ready["send_at"].max() if len(ready) else None,
    }
    return BatchPreview(frame, totals)


__all__ = ["preview_batch"]
