#!/usr/bin/env python3
"""Makes picture.ppm, the lab's 76x62 test picture: a colour gradient, a disc and stripes, so that
grey conversion and blur both show something. Run it to make the file again; it is deterministic."""

from __future__ import annotations

from pathlib import Path

WIDTH, HEIGHT = 76, 62


def pixel(x: int, y: int) -> tuple[int, int, int]:
    r, g, b = 255 * x // (WIDTH - 1), 255 * y // (HEIGHT - 1), 128
    if (x - 50) ** 2 + (y - 25) ** 2 < 15**2:  # a yellow disc
        r, g, b = 250, 220, 40
    if 8 <= x < 28 and (y // 4) % 2 == 0:  # dark stripes: sharp edges for the blur
        r, g, b = 20, 20, 60
    return r, g, b


def main() -> None:
    data = bytes(c for y in range(HEIGHT) for x in range(WIDTH) for c in pixel(x, y))
    out = Path(__file__).with_name("picture.ppm")
    out.write_bytes(f"P6\n{WIDTH} {HEIGHT}\n255\n".encode() + data)
    print(f"wrote {out} ({WIDTH}x{HEIGHT})")


if __name__ == "__main__":
    main()
