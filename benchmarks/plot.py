"""docs/latency.png: the latency distributions measured in this run, as a picture.

Left panel: per-row decision time at rung auto over the tldr corpus (the pipeline in-process, from
``benchmarks/evaluation.py --latencies-out``), log-scale histogram, with the S14 targets
(p50 <= 0.5 ms, p99 <= 5 ms) and the measured p50/p99. Right panel: per-call hook latency, spawn to
exit, gatesh vs the peer ``cc-safety-net`` (from ``benchmarks/peer.py --raw-out``).

matplotlib draws it when it can be imported, or installed for this run with
``pip install --target`` into a scratch folder; otherwise (no network, ``--backend png``) a small
pure-Python PNG writer draws the same histograms with a built-in bitmap font. A plot always exists.

    python benchmarks/plot.py --decision FILE [--hook FILE] [--out docs/latency.png]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import emit, pct

TARGET_P50_MS, TARGET_P99_MS = 0.5, 5.0
GATESH, LAUNCHER, PEER = (31, 119, 180), (44, 160, 44), (214, 95, 40)


def panels(decision: dict[str, Any] | None, hook: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What to draw: a list of panels, each {title, series: [(name, values, rgb)], marks, targets}."""
    out: list[dict[str, Any]] = []
    if decision:
        per = decision.get("decide_ms_auto", {})
        name = "tldr" if per.get("tldr") else next((k for k, v in per.items() if v), None)
        if name:
            values = per[name]
            out.append(
                {
                    "title": f"decision time, rung auto, {name} ({len(values)} rows)",
                    "series": [("gatesh in-process", values, GATESH)],
                    "marks": [("p50", pct(values, 50)), ("p99", pct(values, 99))],
                    "targets": [
                        ("S14 p50 target", TARGET_P50_MS),
                        ("S14 p99 target", TARGET_P99_MS),
                    ],
                }
            )
    if hook:
        series = [
            (n, v, c)
            for n, v, c in (
                ("gatesh hook (python -m gatesh)", hook.get("gatesh_hook_ms") or [], GATESH),
                (
                    "gatesh hook (installed launcher)",
                    hook.get("gatesh_launcher_hook_ms") or [],
                    LAUNCHER,
                ),
                ("cc-safety-net hook", hook.get("peer_hook_ms") or [], PEER),
            )
            if v
        ]
        if series:
            n = max(len(v) for _, v, _ in series)
            out.append(
                {
                    "title": f"hook call, spawn to exit ({n} calls each)",
                    "series": series,
                    "marks": [(f"{s[0]} p50", pct(s[1], 50)) for s in series],
                    "targets": [],
                }
            )
    return out


# --- matplotlib -----------------------------------------------------------------------------------


def find_matplotlib(pylib: str | None, install: bool) -> tuple[Any, str]:
    """(pyplot, how) or (None, why not). Installs into ``pylib`` with pip when allowed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt, f"matplotlib {matplotlib.__version__} (already installed)"
    except ImportError:
        pass
    fresh = not pylib or not os.path.isdir(os.path.join(pylib, "matplotlib"))
    if not pylib or (fresh and not install):
        return None, "matplotlib is not installed and installing was not allowed"
    if fresh:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
                pylib,
                "matplotlib",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            return None, f"pip install --target matplotlib failed: {tail[0]}"
    sys.path.insert(0, pylib)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        where = (
            "installed by this run into" if fresh else "from an earlier run's pip --target folder"
        )
        return plt, f"matplotlib {matplotlib.__version__} ({where} {pylib})"
    except ImportError as exc:
        return None, f"matplotlib installed but did not import: {exc}"


def draw_matplotlib(plt: Any, spec: list[dict[str, Any]], out: str) -> None:
    fig, axes = plt.subplots(1, len(spec), figsize=(6.4 * len(spec), 4.4), squeeze=False)
    for ax, p in zip(axes[0], spec, strict=True):
        everything = [x for _, v, _ in p["series"] for x in v if x > 0]
        lo, hi = min(everything), max(everything)
        for _, x in p["targets"]:
            lo, hi = min(lo, x), max(hi, x)
        bins = [lo * (hi / lo) ** (i / 60) for i in range(61)] if hi > lo else 30
        for name, values, rgb in p["series"]:
            ax.hist(
                [x for x in values if x > 0],
                bins=bins,
                alpha=0.6,
                label=name,
                color=tuple(c / 255 for c in rgb),
            )
        styles = ["-", ":", "-.", "--"]
        for i, (name, x) in enumerate(p["marks"]):
            ax.axvline(
                x,
                color="black",
                linestyle=styles[i % len(styles)],
                linewidth=1.2,
                label=f"{name}: {x:.2f} ms",
            )
        for name, x in p["targets"]:
            ax.axvline(x, color="red", linestyle="--", linewidth=1, label=f"{name}: {x:g} ms")
        ax.set_xscale("log")
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        narrow = hi / lo < 100  # under two decades: label 2× and 5× too
        ax.xaxis.set_minor_formatter(
            FuncFormatter(
                lambda v, _, narrow=narrow: f"{v:g}" if narrow and f"{v:.0e}"[0] in "25" else ""
            )
        )
        ax.set_xlabel("milliseconds (log scale)")
        ax.set_ylabel("count")
        ax.set_title(p["title"], fontsize=10)
        ax.legend(fontsize=8, loc="best", framealpha=0.9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


# --- the pure-Python fallback ---------------------------------------------------------------------

# A 5x7 bitmap font: each glyph is 7 rows of 5 pixels ('#' on).
_FONT_SRC = {
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": ".###. #.... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ....# .###.",
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# ##..# #.#.# #..## #...# #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    " ": "..... ..... ..... ..... ..... ..... .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...",
    "-": "..... ..... ..... ##### ..... ..... .....",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "%": "##..# ##.#. ...#. ..#.. .#... .#.## #..##",
    "/": "....# ...#. ...#. ..#.. .#... .#... #....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "=": "..... ..... ##### ..... ##### ..... .....",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "_": "..... ..... ..... ..... ..... ..... #####",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
}
_FONT = {ch: [row for row in src.split()] for ch, src in _FONT_SRC.items()}


class Canvas:
    """An RGB image in memory with the few drawing operations a histogram needs."""

    def __init__(self, width: int, height: int) -> None:
        self.w, self.h = width, height
        self.px = bytearray(b"\xff" * (width * height * 3))

    def rect(self, x0: int, y0: int, x1: int, y1: int, rgb: tuple[int, int, int]) -> None:
        x0, x1 = max(0, min(x0, x1)), min(self.w, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.h, max(y0, y1))
        row = bytes(rgb) * (x1 - x0)
        for y in range(y0, y1):
            i = (y * self.w + x0) * 3
            self.px[i : i + len(row)] = row

    def vline(
        self, x: int, y0: int, y1: int, rgb: tuple[int, int, int], dashed: bool = False
    ) -> None:
        for y in range(min(y0, y1), max(y0, y1)):
            if not dashed or (y // 4) % 2 == 0:
                self.rect(x, y, x + 1, y + 1, rgb)

    def text(
        self, x: int, y: int, s: str, rgb: tuple[int, int, int] = (0, 0, 0), scale: int = 1
    ) -> int:
        """Draw ``s`` (upper-cased; unknown characters as '?') with its top-left at (x, y)."""
        for ch in s.upper():
            glyph = _FONT.get(ch, _FONT["?"])
            for gy, row in enumerate(glyph):
                for gx, on in enumerate(row):
                    if on == "#":
                        self.rect(
                            x + gx * scale,
                            y + gy * scale,
                            x + (gx + 1) * scale,
                            y + (gy + 1) * scale,
                            rgb,
                        )
            x += 6 * scale
        return x

    def png(self) -> bytes:
        raw = b"".join(
            b"\x00" + bytes(self.px[y * self.w * 3 : (y + 1) * self.w * 3]) for y in range(self.h)
        )

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (
                struct.pack(">I", len(data))
                + kind
                + data
                + struct.pack(">I", zlib.crc32(kind + data))
            )

        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def _blend(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (
        int(rgb[0] * 0.6 + 255 * 0.4),
        int(rgb[1] * 0.6 + 255 * 0.4),
        int(rgb[2] * 0.6 + 255 * 0.4),
    )


def draw_fallback(spec: list[dict[str, Any]], out: str) -> None:
    pw, ph = 640, 420
    canvas = Canvas(pw * max(1, len(spec)), ph)
    for k, p in enumerate(spec):
        ox = k * pw
        left, right, top, bottom = ox + 60, ox + pw - 20, 60, ph - 60
        everything = [x for _, v, _ in p["series"] for x in v if x > 0]
        lo, hi = min(everything), max(everything)
        for _, x in p["targets"]:
            lo, hi = min(lo, x), max(hi, x)
        lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
        nbins = 60

        def xpos(
            v: float, lo: float = lo, hi: float = hi, left: int = left, right: int = right
        ) -> int:
            return left + int(
                (math.log10(v) - math.log10(lo))
                / (math.log10(hi) - math.log10(lo))
                * (right - left)
            )

        counts = []
        for _, values, _ in p["series"]:
            c = [0] * nbins
            for v in values:
                if v > 0:
                    c[
                        min(
                            nbins - 1,
                            int(
                                (math.log10(v) - math.log10(lo))
                                / (math.log10(hi) - math.log10(lo))
                                * nbins
                            ),
                        )
                    ] += 1
            counts.append(c)
        peak = max(max(c) for c in counts) or 1
        bar_w = (right - left) / nbins
        for (_, _, rgb), c in zip(p["series"], counts, strict=True):
            for i, n in enumerate(c):
                if n:
                    x0 = left + int(i * bar_w)
                    canvas.rect(
                        x0,
                        bottom - int(n / peak * (bottom - top)),
                        x0 + max(1, int(bar_w) - 1),
                        bottom,
                        _blend(rgb),
                    )
        canvas.rect(left, bottom, right, bottom + 1, (0, 0, 0))
        canvas.rect(left, top, left + 1, bottom, (0, 0, 0))
        decade = lo
        while decade <= hi * 1.0001:
            x = xpos(decade)
            canvas.rect(x, bottom, x + 1, bottom + 5, (0, 0, 0))
            canvas.text(x - 12, bottom + 9, f"{decade:g}")
            decade *= 10
        canvas.text(left + 120, bottom + 24, "MILLISECONDS (LOG SCALE)")
        canvas.text(ox + 8, top - 4, str(peak))
        canvas.text(ox + 8, bottom - 7, "0")
        canvas.text(ox + 8, 12, p["title"], scale=1)
        y = 30
        for name, _, rgb in p["series"]:
            canvas.rect(right - 200, y, right - 190, y + 7, _blend(rgb))
            canvas.text(right - 185, y, name)
            y += 11
        for i, (name, x) in enumerate(p["marks"]):
            canvas.vline(xpos(x), top, bottom, (0, 0, 0))
            canvas.text(xpos(x) + 3, top + 4 + 10 * i, f"{name} {x:.2f}")
        for name, x in p["targets"]:
            canvas.vline(xpos(x), top, bottom, (220, 0, 0), dashed=True)
            canvas.text(left + 4, y, f"-- {name} {x:g} MS", (220, 0, 0))
            y += 11
    with open(out, "wb") as f:
        f.write(canvas.png())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--decision", metavar="FILE", help="evaluation.py --latencies-out file")
    parser.add_argument("--hook", metavar="FILE", help="peer.py --raw-out file")
    parser.add_argument("--out", default=os.path.join("docs", "latency.png"))
    parser.add_argument("--backend", choices=["auto", "matplotlib", "png"], default="auto")
    parser.add_argument(
        "--pylib", metavar="DIR", help="scratch folder to pip-install matplotlib into"
    )
    parser.add_argument("--no-install", action="store_true", help="never run pip")
    args = parser.parse_args()
    spec = panels(_load(args.decision), _load(args.hook))
    if not spec:
        why = "no latency data (neither --decision nor --hook had values)"
        print(f"plot: not drawn: {why}")
        emit("plot", {"status": "skipped", "why": why})
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    how = "pure-Python PNG writer (--backend png)"
    plt = None
    if args.backend != "png":
        own = args.pylib is None
        pylib = args.pylib or tempfile.mkdtemp(prefix="gatesh-pylib-")
        try:
            plt, how = find_matplotlib(pylib, not args.no_install)
            if plt is not None:
                draw_matplotlib(plt, spec, args.out)
        finally:
            if own:
                shutil.rmtree(pylib, ignore_errors=True)
        if plt is None:
            if args.backend == "matplotlib":
                raise SystemExit(f"plot: {how}")
            how = f"pure-Python PNG writer ({how})"
    if plt is None:
        draw_fallback(spec, args.out)
    print(f"wrote {args.out} with {how}: " + "; ".join(p["title"] for p in spec))
    emit(
        "plot",
        {"status": "ok", "out": args.out, "drawn_with": how, "panels": [p["title"] for p in spec]},
    )
    return 0


def _load(path: str | None) -> dict[str, Any] | None:
    if not path or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


if __name__ == "__main__":
    sys.exit(main())
