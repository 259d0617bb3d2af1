"""The 8 symmetries of the Othello board on plain 64-bit ints (bit ``row * 8 + col``, a1 = 0).

Symmetry ``s`` transposes if bit 0 is set, then flips rows if bit 1, then flips columns if
bit 2 -- each an involution, undone in the reverse order.
"""

from __future__ import annotations

M64 = (1 << 64) - 1


def flip_rows(x: int) -> int:
    """Row r goes to row 7 - r (a byte swap, since each row is one byte)."""
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def flip_columns(x: int) -> int:
    """Column c goes to column 7 - c (bits reversed inside every byte)."""
    x = ((x >> 1) & 0x5555555555555555) | ((x & 0x5555555555555555) << 1)
    x = ((x >> 2) & 0x3333333333333333) | ((x & 0x3333333333333333) << 2)
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0F) | ((x & 0x0F0F0F0F0F0F0F0F) << 4)
    return x & M64


def transpose(x: int) -> int:
    """Square (r, c) goes to (c, r): three delta swaps across the main diagonal."""
    t = 0x0F0F0F0F00000000 & (x ^ (x << 28))
    x ^= t ^ (t >> 28)
    t = 0x3333000033330000 & (x ^ (x << 14))
    x ^= t ^ (t >> 14)
    t = 0x5500550055005500 & (x ^ (x << 7))
    x ^= t ^ (t >> 7)
    return x & M64


def othello_transform(x: int, symmetry: int) -> int:
    """The image of the squares ``x`` under ``symmetry``."""
    if symmetry & 1:
        x = transpose(x)
    if symmetry & 2:
        x = flip_rows(x)
    if symmetry & 4:
        x = flip_columns(x)
    return x


def square_image(row: int, col: int, symmetry: int, inverse: bool) -> tuple[int, int]:
    """Where one square goes under ``symmetry`` (``inverse``: where it came from)."""
    steps = [1, 2, 4]
    for bit in reversed(steps) if inverse else steps:
        if symmetry & bit:
            if bit == 1:
                row, col = col, row
            elif bit == 2:
                row = 7 - row
            else:
                col = 7 - col
    return row, col
