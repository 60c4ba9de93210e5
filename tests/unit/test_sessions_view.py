"""The `sessions` view's model is the last one a session names (by seq), whatever the rows' storage order: an
ingest stores a session's rows in runs spread over its batch (docs/benchmarks.md "layout18"), and the view took
`any_value(model)`, so a session that changed models showed one or the other by layout."""

from __future__ import annotations

import pytest

from stallscan.store.db import connect

ROWS = [  # (seq, model): the session names model-a, then model-b; a reply without a model in between
    (1, "model-a"),
    (2, None),
    (3, "model-b"),
    (4, None),
]


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]])
def test_sessions_model_is_the_last_named_in_any_storage_order(order: list[int]) -> None:
    con = connect(":memory:")
    for i in order:
        seq, model = ROWS[i]
        con.execute(
            "INSERT INTO events BY NAME SELECT ? AS event_id, 'openai_chat' AS source_format, 'f.jsonl' AS file, "
            "? AS line, ? AS last_line, 0 AS part, 1 AS n_records, 's1' AS session_id, ? AS seq, "
            "'none' AS ts_quality, 'assistant' AS role, 'message' AS kind, 0 AS n_tool_calls, "
            "false AS is_sidechain, ? AS model",
            [f"e{seq}", seq, seq, seq, model],
        )
    assert con.execute("SELECT session_id, n_events, model FROM sessions").fetchall() == [("s1", 4, "model-b")]
