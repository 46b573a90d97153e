"""One long token costs linear time (issue 39 item 8): the lexical judge and the identifier rules read text through
``bound_tokens``. Before, one 32 KB token of letters cost 22 s in the lexical judge (a 256 KB one, the size used
here, over 20 minutes) and 64 KB of hyphen-joined words 18 s in the code identifier rule."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import textwrap

from workbench._util.long_tokens import MAX_TOKEN_CHARS, bound_tokens


def test_bound_tokens_equals_cutting_every_run_of_non_space() -> None:
    """Against the plain formula (every run of non-space characters cut to its first MAX_TOKEN_CHARS), on texts
    with runs on both sides of the cap and every kind of whitespace, Unicode included."""
    rng = random.Random(7)
    alphabet = "ab9-_./:é"
    spaces = [" ", "\n", "\t", "\u00a0", "\u3000", "\r\n"]
    for _ in range(200):
        parts = []
        for _ in range(rng.randint(1, 6)):
            n = rng.choice([0, 1, 5, MAX_TOKEN_CHARS - 1, MAX_TOKEN_CHARS, MAX_TOKEN_CHARS + 1, 3 * MAX_TOKEN_CHARS])
            parts.append("".join(rng.choice(alphabet) for _ in range(n)))
            parts.append(rng.choice(spaces) * rng.randint(1, 2))
        text = "".join(parts[:-1] if rng.random() < 0.5 else parts)
        assert bound_tokens(text) == re.sub(r"\S+", lambda m: m.group(0)[:MAX_TOKEN_CHARS], text)
    ordinary = "Paid INV-104 ($120.50) after https://example.org/a/b?c=1; see /srv/app/main.py:88 and total()."
    assert bound_tokens(ordinary * 50) == ordinary * 50  # long text of ordinary tokens is left as it is


def test_a_quarter_megabyte_token_is_judged_and_its_identifiers_found_in_seconds() -> None:
    """In a child process with a time limit far above the linear cost (tenths of a second) and far below the
    quadratic one (tens of minutes): the lexical judge on an entry and evidence holding 256 KB of letters, and
    every identifier rule on 256 KB of hyphen-joined words."""
    program = textwrap.dedent('''
        import random, string
        from workbench.summaries import JudgeRequest
        from workbench.judges import LexicalJudge
        from workbench.summaries import RULES, find
        rng = random.Random(0)
        letters = "".join(rng.choice(string.ascii_letters) for _ in range(256_000))
        hyphens = "-".join("".join(rng.choice(string.ascii_lowercase) for _ in range(4)) for _ in range(51_200))
        request = JudgeRequest(task="t", retained_turn="", previous_summary="", request_id="r",
                               evidence=(f"export: {letters} INV-104 paid",), entries=(f"- Read {letters}; paid INV-104.",))
        print(LexicalJudge().score(request).scores[0])
        print(sum(len(find(f"see {hyphens} and INV-104", rule)) for rule in RULES))
    ''')
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    score, found = done.stdout.split()
    assert 0.5 < float(score) < 1.0 and int(found) >= 1
