

def test_one_token_count_rule_for_the_client_and_the_importer() -> None:
    """Design round 2: ``token_count(3.0)`` was 3 in ``llm`` and 0 in ``adapters``; one function now, ccusage's rule
    (integers only: a float, even a whole one, a boolean, text or a negative number counts 0)."""
    from workbench.adapters import _usage_scan
    from workbench.llm import token_count

    assert _usage_scan.token_count is token_count
    assert [token_count(v) for v in (3, 3.0, True, "3", -2, None, [3], 0)] == [3, 0, 0, 0, 0, 0, 0, 0]
