"""Secrets: common secret shapes are masked in SQL; already-masked text is not reported as a leak."""

from __future__ import annotations

import json
import random
import string

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from stallscan.store.redact import count_leaks, install, leaks_sql, patterns, redact_sql, version
from tests.helpers import claude_line, memory_copy, write_lines

RNG = random.Random(42)


def rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


# Fake secrets built at run time (no real-looking literal in the repository), one per shape.
PLANTED = {
    "anthropic_key": "sk-ant-api03-" + rand(80, string.ascii_letters + string.digits + "_-"),
    "openai_key": "sk-proj-" + rand(48),
    "openai_key_legacy": "sk-" + rand(48),
    "stripe_key": "sk_" + "live_" + rand(24),
    "google_api_key": "AIza" + rand(35),
    "google_oauth_token": "ya29." + rand(60),
    "aws_access_key_id": "AKIA" + rand(16, string.ascii_uppercase + string.digits),
    "github_token": "ghp_" + rand(36),
    "github_pat": "github_pat_" + rand(22) + "_" + rand(59),
    "slack_token": "xoxb-" + rand(11, string.digits) + "-" + rand(24),
    "slack_webhook": "https://hooks.slack.com/services/T" + rand(8) + "/B" + rand(8) + "/" + rand(24),
    "jwt": "eyJ" + rand(30) + ".eyJ" + rand(40) + "." + rand(43),
}
CONTEXT = {  # secrets whose shape is the context around them; the value is what must disappear
    "bearer_token": ("curl -H 'Authorization: Bearer {v}' https://api.example.com", rand(40)),
    "password_pair": ("psql password={v} host=db", rand(14)),
    "password_json": ('{{"username": "svc", "password": "{v}"}}', rand(18)),
    "token_env": ("export GITHUB_TOKEN={v}", rand(30)),
    "api_key_yaml": ("api_key: {v}", rand(32)),
    "aws_secret": ("aws_secret_access_key = {v}", rand(40, string.ascii_letters + string.digits + "/+")),
    "client_secret": ("CLIENT_SECRET='{v}'", rand(24)),
    "url_credentials": ("postgres://admin:{v}@db.internal:5432/app", rand(16)),
    "url_credentials_https": ("git clone https://bob:{v}@github.com/org/repo.git", rand(20)),
    "private_key": ("-----BEGIN RSA PRIVATE KEY-----\n{v}\n-----END RSA PRIVATE KEY-----", rand(64) + "\n" + rand(64)),
    "private_key_cut": ("-----BEGIN OPENSSH PRIVATE KEY-----\n{v}", rand(64) + "\n" + rand(30)),
    "private_key_escaped": ("-----BEGIN PRIVATE KEY-----\\n{v}\\n-----END PRIVATE KEY-----", rand(64)),
}
BENIGN = [  # must come out unchanged
    "max_tokens=4096 and input_tokens: 1200, token_count 5",
    "The author: Jane. See https://example.com/path?q=1 and http://localhost:8080/x",
    "def check_password(pw): return len(pw) > 8",
    "sk-short is not a key; AKIA123 neither",
    "ssh-rsa AAAAB3NzaC1yc2E public keys are fine",
    "Bearer tokens must be sent in the header",
]


def _texts():
    out = []
    for name, secret in PLANTED.items():
        out.append((name, f"the key is {secret} (do not share)", secret))
    for name, (tpl, value) in CONTEXT.items():
        out.append((name, "config:\n" + tpl.format(v=value) + "\nend", value))
    return out


def test_every_planted_secret_is_masked_in_sql():
    con = duckdb.connect()
    rows = _texts()
    con.execute("CREATE TABLE t (name VARCHAR, txt VARCHAR, secret VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    got = con.execute(f"SELECT name, {redact_sql('txt')}, secret FROM t").fetchall()
    for name, red, secret in got:
        assert secret not in red, (name, red)
        assert "[REDACTED:" in red, (name, red)
        assert red.startswith(("the key is", "config:")), (name, red)  # the text around survives
    # before masking, the leak check sees every one; after, none
    assert con.execute(f"SELECT count(*) FROM t WHERE len({leaks_sql('txt')}) = 0").fetchone()[0] == 0
    assert con.execute(f"SELECT sum(len({leaks_sql(redact_sql('txt'))})) FROM t").fetchone()[0] == 0


def test_prefixes_are_kept_and_benign_text_untouched():
    con = duckdb.connect()
    install(con)
    v = rand(40)
    assert (
        con.execute("SELECT redact(?)", [f"Authorization: Bearer {v}"]).fetchone()[0]
        == "Authorization: Bearer [REDACTED:bearer_token]"
    )
    assert (
        con.execute("SELECT redact(?)", ["postgres://admin:hunter2hunter2@db:5432/x"]).fetchone()[0]
        == "postgres://admin:[REDACTED:url_credentials]@db:5432/x"
    )
    assert (
        con.execute("SELECT redact(?)", ['{"password": "correct-horse"}']).fetchone()[0]
        == '{"password": "[REDACTED:key_value]"}'
    )
    for text in BENIGN:
        assert con.execute("SELECT redact(?), secret_leaks(?)", [text, text]).fetchone() == (text, []), text
    assert con.execute("SELECT redact(NULL)").fetchone()[0] is None


def test_redaction_is_idempotent_and_versioned():
    con = duckdb.connect()
    install(con)
    once = [con.execute("SELECT redact(?)", [t]).fetchone()[0] for _, t, _ in _texts()]
    twice = [con.execute("SELECT redact(?)", [t]).fetchone()[0] for t in once]
    assert once == twice
    assert version() >= 1 and len({p.name for p in patterns()}) >= 14


def test_secrets_in_ingested_transcripts_are_found_and_masked(tmp_path):
    """Secrets planted in tool output and tool-call arguments of a transcript: found, then masked."""
    key = PLANTED["anthropic_key"]
    pw = rand(16)
    rec = json.loads(claude_line("user", 1))
    rec["message"]["content"] = [
        {"type": "tool_result", "tool_use_id": "t1", "content": f"ANTHROPIC_API_KEY={key}\nDB_PASSWORD={pw}\n"}
    ]
    call = json.loads(claude_line("assistant", 2))
    call["message"]["content"] = [
        {
            "type": "tool_use",
            "id": "t1",
            "name": "Bash",
            "input": {"command": f"curl -u admin:{pw} -H 'x-api-key: {PLANTED['openai_key']}'"},
        }
    ]
    f = write_lines(tmp_path / "s.jsonl", [json.dumps(call), json.dumps(rec)])
    con = connect(":memory:")
    ingest_paths(con, [str(f)])
    assert count_leaks(con, "events", "text").get("anthropic_key") == 1
    args = "(SELECT unnest(tool_calls).arguments AS a FROM events)"
    assert sum(count_leaks(con, args, "a").values()) >= 1
    masked = con.execute(f"SELECT string_agg({redact_sql('text')}, ' ') FROM events").fetchone()[0]
    assert key not in masked and pw not in masked
    masked_args = con.execute(f"SELECT string_agg({redact_sql('a')}, ' ') FROM {args}").fetchone()[0]
    assert PLANTED["openai_key"] not in masked_args and pw not in masked_args


def test_sample_logs_have_no_false_leaks(sample_ingested_file):
    con = memory_copy(sample_ingested_file)  # sample_logs ingested
    assert count_leaks(con, "events", "text") == {}


def test_already_redacted_cline_file_is_not_a_leak():
    """The real Cline transcript had its credentials overwritten with same-length X runs: those X runs
    (AIzaXXXX…, twilio_auth_token = "XXXX…") are masks, not leaks."""
    from tests.helpers import real_root

    f = real_root() / "cline" / "mike4567-MRA04242026" / "api_conversation_history.json"
    if not f.exists():
        pytest.skip(f"real Cline file not found at {f}: set STALLSCAN_REAL_DATA")
    con = connect(":memory:")
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT count(*) FROM events WHERE text LIKE '%AIzaXXXX%'").fetchone()[0] > 0
    raw_shapes = con.execute(
        "SELECT count(*) FROM (SELECT unnest(regexp_extract_all(text, 'AIza[0-9A-Za-z_\\-]{35}')) FROM events)"
    ).fetchone()[0]
    assert raw_shapes > 0  # the shape is there ...
    leaks = count_leaks(con, "events", "text")
    assert leaks.get("google_api_key", 0) == 0, leaks  # ... but it is a mask, not a leak
    assert not any(
        "XXXX" in m for m in con.execute(f"SELECT flatten(list({leaks_sql('text')})) FROM events").fetchone()[0]
    )
