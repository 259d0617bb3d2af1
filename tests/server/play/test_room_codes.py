"""Room codes: read aloud and typed, so drawn only from the alphabet without look-alikes, every
letter equally likely (a code's strength is 31**8 only if no letter is favoured)."""

from __future__ import annotations

import collections

from server.app import new_room_code
from server.play.lobby import ROOM_CODE_ALPHABET, ROOM_CODE_LENGTH


def test_codes_have_their_length_and_only_the_alphabets_letters_each_about_as_often() -> None:
    codes = [new_room_code() for _ in range(6200)]
    assert all(len(code) == ROOM_CODE_LENGTH for code in codes)
    assert len(set(codes)) == len(codes)
    for position in (0, ROOM_CODE_LENGTH - 1):  # the first and the last digit of the draw
        counts = collections.Counter(code[position] for code in codes)
        assert set(counts) == set(ROOM_CODE_ALPHABET)
        # 200 expected per letter; a 5-sigma band (about 14 each way per sigma)
        assert all(130 < n < 270 for n in counts.values()), counts
