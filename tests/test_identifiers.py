"""The identifier rules and the fact checks that use them, on hand-worked cases."""

from __future__ import annotations

from workbench.claude_compaction import check, defang, summary_identifiers


def test_claude_check_hand_case_and_defang() -> None:
    summary = "Members include paypal.com.login.example.net/x and http://1.2.3.4/bins/a and madeup-site.org."
    history = ["paypal.com.login.example.net/x?y=1", "http://1.2.3.4/bins/a", "other.com"]
    c = check(summary, history, ["other.com", "http://1.2.3.4/bins/a"])
    assert c.identifiers == 3 and c.sourced == 2 and c.unsourced == ("madeup-site.org",) and c.exact == 1
    assert c.held_exact == 1 and c.held_host == 1
    assert defang("http://evil.example.com/a.exe") == "hxxp://evil[.]example[.]com/a[.]exe"
    assert summary_identifiers("Use caution. Not a domain.") == []
