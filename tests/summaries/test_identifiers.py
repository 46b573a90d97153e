"""The identifier rules and the fact checks that use them, on hand-worked cases."""

from __future__ import annotations

import pytest

from workbench.summaries._identifiers import opaque_identifiers
from workbench.adapters import defang
from workbench.summaries import claude_check as check
from workbench.summaries._identifiers import summary_identifiers


def test_claude_check_hand_case_and_defang() -> None:
    summary = "Members include paypal.com.login.example.net/x and http://1.2.3.4/bins/a and madeup-site.org."
    history = ["paypal.com.login.example.net/x?y=1", "http://1.2.3.4/bins/a", "other.com"]
    c = check(summary, history, ["other.com", "http://1.2.3.4/bins/a"])
    assert c.identifiers == 3 and c.sourced == 2 and c.unsourced == ("madeup-site.org",) and c.exact == 1
    assert c.held_exact == 1 and c.held_host == 1
    assert defang("http://evil.example.com/a.exe") == "hxxp://evil[.]example[.]com/a[.]exe"
    assert summary_identifiers("Use caution. Not a domain.") == []


#: (text, what OpenClaw's extractOpaqueIdentifiers returns), each worked out by hand from its pattern
#: ``([A-Fa-f0-9]{8,}|https?://\S+|/[\w.-]{2,}(?:/[\w.-]+)+|[A-Za-z]:\\[\w\\.-]+|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5}|\b\d{6,}\b)``
#: then trim, strip leading ("'`[{< and trailing )]"'`,;:.!?<>, upper-case pure hex, drop < 4 chars, dedupe, cap 12
OPENCLAW_CASES = [
    ("commit deadbeef and abc123def456", ["DEADBEEF", "ABC123DEF456"]),     # letters-only hex is an id
    ("uuid 123e4567-e89b-12d3-a456-426614174000", ["123E4567", "426614174000"]),  # not whole: 4-char groups fail
    ("meet at 12:30", []),                                                  # no dot: not host:port
    ("on localhost:8080", []),                                              # no dot in the host; 8080 < 6 digits
    ("db at api.example.com:8443.", ["api.example.com:8443"]),              # trailing '.' trimmed
    ("10.0.0.5:8080", ["10.0.0.5:8080"]),
    (r"open C:\Users\me\file.txt now", [r"C:\Users\me\file.txt"]),     # Windows path
    ("/usr/local/bin and /tmp and /a/b and /ab/c", ["/usr/local/bin", "/ab/c"]),  # 2+ segments, first 2+ chars
    ("see https://example.com/a?b=1.", ["https://example.com/a?b=1"]),
    ("order 1234567 and 12345", ["1234567"]),                               # 6+ digits only
    ("12345678", ["12345678"]),                                             # 8 digits: the hex alternative
    ('("abc12345")', ["ABC12345"]),                                         # brackets and quotes trimmed
    ("DEADBEEF then deadbeef", ["DEADBEEF"]),                               # normalised, then deduplicated
    ("x.y:1", ["x.y:1"]),                                                   # 5 characters: kept
    ("a.b:1", ["a.b:1"]),
    ("Ab.c:1", ["Ab.c:1"]),
    ("abc", []),
    ("facade1 cafebabe!", ["CAFEBABE"]),                                    # 'facade1' is 7 hex chars
]


@pytest.mark.parametrize(("text", "expected"), OPENCLAW_CASES, ids=[c[0][:30] for c in OPENCLAW_CASES])
def test_openclaw_rule_case_by_case(text: str, expected: list[str]) -> None:
    from workbench.summaries import find
    from workbench.summaries._identifiers import openclaw_identifiers

    assert openclaw_identifiers(text) == expected
    assert find(text, "openclaw") == expected


def test_openclaw_rule_caps_at_twelve_over_the_last_ten_messages() -> None:
    from workbench.summaries._identifiers import opaque_identifiers, summary_includes

    many = [" ".join(str(1_000_000 + 17 * j + 100 * i) for j in range(5)) for i in range(12)]
    assert opaque_identifiers(many) == [str(1_000_000 + 17 * j + 100 * i) for i in range(2, 12) for j in range(5)][:12]
    assert opaque_identifiers(["x 1234567"] + ["nothing"] * 10) == []  # only the last ten messages count
    assert summary_includes("kept: DeadBeef", "DEADBEEF") and not summary_includes("kept: abc", "ABC")


def test_the_workbench_rule_keeps_its_behaviour() -> None:
    """The earlier rule, kept by name: hex ids need a digit, UUIDs stay whole, localhost:port counts."""
    msgs = [f"old message {i} with 3f2a9b1c77aa" for i in range(5)] + [
        "fetched https://api.example.com/v1/items?id=7, saved to /var/data/out.json.",
        "db at db.internal:5432 and 10.0.0.5:8080; order 12345678; uuid 123e4567-e89b-12d3-a456-426614174000",
        "word deadbeef is hex-looking but abcdefgh is not; 12345 too short; commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    ]
    ids = opaque_identifiers(msgs, rule="workbench")
    assert ids[:2] == ["3f2a9b1c77aa", "https://api.example.com/v1/items?id=7"]
    for expected in ["/var/data/out.json", "db.internal:5432", "10.0.0.5:8080", "12345678",
                     "123e4567-e89b-12d3-a456-426614174000", "9fceb02d0ae598e95dc970b74767f19372d61af8"]:
        assert expected in ids
    assert "abcdefgh" not in ids and "12345" not in ids and "deadbeef" not in ids  # no digit: a word
    many = [" ".join(f"{1000000 + 17 * j + 100 * i}" for j in range(5)) for i in range(12)]
    assert len(opaque_identifiers(many, rule="workbench")) == 12
    assert opaque_identifiers(["x 1234567"] + ["nothing"] * 10, rule="workbench") == []  # only the last 10 messages count


