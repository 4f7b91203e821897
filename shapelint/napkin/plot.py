"""Roofline plots (matplotlib, the optional ``plot`` extra, imported only when drawing)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from shapelint.napkin.formulas import NapkinError, Roofline, fmt, fmt_seconds, ladder, roofline
from shapelint.napkin.hardware import Chip

# Up to this many points are labelled in place; more get numbers and a side table.
DIRECT_LABELS = 8
# Past this many points, only the slowest are labelled; the rest stay as dots.
MAX_LABELS = 20

_MISSING = (
    "drawing a roofline needs matplotlib, which is not installed; "
    "install it with: pip install matplotlib"
)


def _pyplot():
    try:
        import matplotlib  # optional, and slow to import

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise NapkinError(_MISSING) from None
    return plt


def plot_roofline(
    path: str | Path,
    hardware: str | Chip = "h100",
    dtype: str = "bf16",
    points: Sequence[tuple[str, float, float]] = (),
    table: Mapping[str, Chip] | None = None,
    show_ladder: bool = True,
    title: str | None = None,
) -> Path:
    """Draw the chip's roofline with ``points`` ((label, flops, bytes) each) on it.

    Each point sits on the roof at its arithmetic intensity, i.e. at the best
    FLOP/s it can reach; its label carries the lower-bound time. The lecture's
    ladder is drawn in grey for reference unless ``show_ladder`` is false.
    Returns the path written.
    """
    placed: list[tuple[str, Roofline]] = [
        (label, roofline(f, b, hardware, dtype, table)) for label, f, b in points
    ]
    refs = (
        [(r.name, r.roofline) for r in ladder(hardware, dtype, table=table)] if show_ladder else []
    )
    plt = _pyplot()
    any_r = (placed or refs or [(None, roofline(1.0, 1.0, hardware, dtype, table))])[0][1]
    peak, bw, ridge = any_r.peak_flop_per_sec, any_r.bandwidth, any_r.critical_intensity

    drawable = [(lb, r) for lb, r in placed if r.flops > 0 and math.isfinite(r.intensity)]
    skipped = len(placed) - len(drawable)
    xs = [r.intensity for _, r in drawable + refs] + [ridge]
    lo = 10 ** math.floor(math.log10(min(xs) / 3))
    hi = 10 ** math.ceil(math.log10(max(xs) * 3))

    numbered = len(drawable) > DIRECT_LABELS
    if numbered:
        fig, (ax, side) = plt.subplots(
            1, 2, figsize=(13, 6), dpi=150, gridspec_kw={"width_ratios": [2.6, 1]}
        )
        side.axis("off")
    else:
        fig, ax = plt.subplots(figsize=(9, 5.8), dpi=150)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axvspan(lo, ridge, color="#dbe9f6", alpha=0.6, lw=0)
    ax.axvspan(ridge, hi, color="#fbe3cf", alpha=0.6, lw=0)
    grid = [lo * (hi / lo) ** (i / 400) for i in range(401)]
    ax.plot(grid, [min(peak, bw * x) for x in grid], color="black", lw=2.4, zorder=3)
    ax.axvline(ridge, color="black", ls=":", lw=1)
    y_lo = bw * lo / 3
    ax.set_xlim(lo, hi)
    ax.set_ylim(y_lo, peak * 6)
    static = [
        ax.text(ridge * 1.08, y_lo * 1.6, f"ridge {ridge:.3g} FLOP/B", fontsize=8, rotation=90),
        ax.text(lo * 1.3, peak * 3, "memory-bound", fontsize=10, color="#2b5d8a", weight="bold"),
        ax.text(ridge * 1.3, peak * 3, "compute-bound", fontsize=10, color="#a0522d", weight="bold"),
        ax.text(hi / 1.3, peak * 1.3, f"peak {fmt(peak)} FLOP/s ({any_r.dtype})", fontsize=8,
                ha="right"),
    ]  # fmt: skip
    x_bw = lo * 2.5  # far left, where few real ops land
    static.append(
        ax.text(
            x_bw,
            bw * x_bw * 1.5,
            f"bandwidth {fmt(bw)} B/s",
            fontsize=8,
            rotation=_slope_angle(ax, fig),
            rotation_mode="anchor",
            ha="left",
        )
    )
    fig.canvas.draw()
    placer = _LabelPlacer(ax)
    for artist in static:
        placer.block(artist)
    for name, r in refs:
        y = r.attainable_flop_per_sec
        ax.scatter([r.intensity], [y], s=36, facecolors="none", edgecolors="grey", zorder=4)
        placer.place(name, r.intensity, y, fontsize=7, color="grey")

    slowest = sorted(drawable, key=lambda p: -p[1].seconds)[:MAX_LABELS]
    for _, r in drawable:
        y = r.attainable_flop_per_sec
        ax.scatter([r.intensity], [y], s=44, color=_color(r), edgecolors="white", lw=0.6, zorder=5)
        placer.mark(r.intensity, y)
    for i, (label, r) in enumerate(slowest, 1):
        text = str(i) if numbered else f"{label} ({fmt_seconds(r.seconds)})"
        placer.place(text, r.intensity, r.attainable_flop_per_sec, fontsize=7.5,
                     color=_color(r), leader=True)  # fmt: skip
    if numbered:
        _side_table(side, slowest, sum(r.seconds for _, r in placed))

    notes = []
    if len(drawable) > len(slowest):
        notes.append(f"{len(drawable) - len(slowest)} faster points unlabelled")
    if skipped:
        off = [lb for lb, r in placed if not (r.flops > 0 and math.isfinite(r.intensity))]
        shown = ", ".join(off[:4]) + (f" and {len(off) - 4} more" if len(off) > 4 else "")
        notes.append(f"not on a log axis (no FLOPs or no bytes): {shown}")
    if notes:
        # Below the axes (not over the points), wrapped to the figure's width.
        fig.text(0.01, 0.0, "; ".join(notes), fontsize=7, ha="left", va="top", wrap=True)
    ax.set_xlabel("arithmetic intensity (FLOPs per byte moved)")
    ax.set_ylabel("attainable FLOP/s  (min(peak, bandwidth × intensity))")
    ax.set_title(title or f"Roofline: {any_r.hardware_name}, {any_r.dtype}")
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    out = Path(path)
    try:
        # "tight" keeps the side table and the notes whole, however long their lines.
        fig.savefig(out, bbox_inches="tight", pad_inches=0.2)
    except OSError as e:
        raise NapkinError(f"cannot write {out}: {e.strerror or e}") from None
    finally:
        plt.close(fig)
    return out


def _color(r: Roofline) -> str:
    return "#1f5f9e" if r.bound == "memory" else "#c0561b"


def _side_table(side, rows: list[tuple[str, Roofline]], total_seconds: float) -> None:
    """The numbered points, slowest first, with their share of the summed lower bounds."""
    side.text(0, 1, "slowest first: lower-bound time, share, bound", fontsize=8, weight="bold",
              va="top", transform=side.transAxes)  # fmt: skip
    step = min(0.045, 0.95 / max(len(rows), 1))
    for i, (label, r) in enumerate(rows, 1):
        share = r.seconds / total_seconds if total_seconds else 0.0
        name = label if len(label) <= 28 else label[:27] + "…"
        side.text(
            0,
            0.97 - i * step,
            f"{i:>2}. {name}  {fmt_seconds(r.seconds)}  {share:.0%}  {r.bound}",
            fontsize=7.5,
            color=_color(r),
            va="top",
            family="monospace",
            transform=side.transAxes,
        )


def _slope_angle(ax, fig) -> float:
    """Screen angle of a slope-1 line on these log-log axes, so the label follows the roof."""
    fig.canvas.draw()
    xlo, _ = ax.get_xlim()
    ylo, _ = ax.get_ylim()
    (x0, y0), (x1, y1) = ax.transData.transform([(xlo * 2, ylo * 2), (xlo * 20, ylo * 20)])
    return math.degrees(math.atan2(y1 - y0, x1 - x0))


class _LabelPlacer:
    """Greedy label placement: try a few offsets around each point and take the
    first whose (estimated) box overlaps no earlier label or point."""

    # Below the roof first: above it there is only the region titles and the peak label.
    _OFFSETS = tuple((dx, dy) for dy in (-12, 5, -26, -40, -54, -68, -82, 18) for dx in (6, -6))

    def __init__(self, ax):
        self.ax = ax
        self.boxes: list[tuple[float, float, float, float]] = []

    def block(self, artist) -> None:
        """Keep labels off an already drawn text."""
        bb = artist.get_window_extent()
        self.boxes.append((bb.x0, bb.y0, bb.x1, bb.y1))

    def mark(self, x: float, y: float, r: float = 4.0) -> None:
        px, py = self.ax.transData.transform((x, y))
        self.boxes.append((px - r, py - r, px + r, py + r))

    def place(
        self, text: str, x: float, y: float, fontsize: float, color: str, leader: bool = False
    ) -> None:
        px, py = self.ax.transData.transform((x, y))
        dpi_scale = self.ax.figure.dpi / 72
        w = len(text) * fontsize * 0.55 * dpi_scale
        h = fontsize * 1.2 * dpi_scale
        choice = self._OFFSETS[0]
        for dx, dy in self._OFFSETS:
            x0 = px + dx * dpi_scale - (w if dx < 0 else 0)
            y0 = py + dy * dpi_scale
            box = (x0, y0, x0 + w, y0 + h)
            if not any(_overlap(box, b) for b in self.boxes):
                choice = (dx, dy)
                break
        dx, dy = choice
        x0 = px + dx * dpi_scale - (w if dx < 0 else 0)
        y0 = py + dy * dpi_scale
        self.boxes.append((x0, y0, x0 + w, y0 + h))
        arrow = {"arrowstyle": "-", "color": color, "lw": 0.5} if leader else None
        self.ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(dx, dy),
            fontsize=fontsize,
            color=color,
            ha="right" if dx < 0 else "left",
            va="bottom",
            arrowprops=arrow,
        )
        self.mark(x, y)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
