"""Offline token counts equal tiktoken's official encodings."""

from __future__ import annotations

import hashlib
import socket

import pytest

from workbench import tokens


def test_rank_files_are_the_official_ones() -> None:
    # the SHA-256 tiktoken itself checks the downloaded official files against
    official = {
        "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    }
    for name, digest in official.items():
        assert hashlib.sha256(tokens._rank_bytes(name)).hexdigest() == digest


def test_known_token_ids_and_counts() -> None:
    # ids published in tiktoken's own README/tests and the OpenAI tokenizer
    assert tokens.encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert tokens.encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert tokens.count("hello world") == 2
    assert tokens.count("", "cl100k_base") == 0
    assert tokens.encoding("o200k_base").n_vocab == 200019
    assert tokens.encoding("cl100k_base").n_vocab == 100277


def test_special_token_text_is_counted_as_text() -> None:
    assert tokens.count("<|endoftext|>") > 1


def test_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    tokens.encoding.cache_clear()
    assert tokens.count("INV-104 paid $120.50", "o200k_base") > 0
    assert tokens.count_many(["a b", "c"], "cl100k_base") == [2, 1]


def test_unknown_encoding() -> None:
    with pytest.raises(ValueError, match="expected one of"):
        tokens.encoding("p50k_base")
