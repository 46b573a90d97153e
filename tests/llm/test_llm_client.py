

def test_one_token_count_rule_for_the_client_and_the_importer() -> None:
    """Design round 2: ``token_count(3.0)`` was 3 in ``llm`` and 0 in ``adapters``; one function now, ccusage's rule
    (integers only: a float, even a whole one, a boolean, text or a negative number counts 0)."""
    from workbench.adapters._usage_scan import usage_counts
    from workbench.llm import token_count

    values = (3, 3.0, True, "3", -2, None, [3], 0, 2**53)
    assert [token_count(v) for v in values] == [3, 0, 0, 0, 0, 0, 0, 0, 2**53]
    assert [usage_counts({"output_tokens": v})[1] for v in values] == [token_count(v) for v in values]
