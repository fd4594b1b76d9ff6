"""One PNG: ratios against their targets, and time per op against chain length."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(report, path: str) -> None:
    rows = [r for r in report.rows if r.w.target is not None]
    scal = [r for r in report.rows if r.w.name.startswith("scaling_") and not r.error]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.2),
                                   gridspec_kw={"width_ratios": [1.5, 1]})

    labels = [r.w.name for r in rows]
    ratios = [r.ratio if r.ratio is not None else 0 for r in rows]
    colors = ["#999999" if r.error else "#2a9d3a" if r.status == "yes" else "#d1495b"
              for r in rows]
    y = range(len(rows))
    ax1.barh(y, ratios, color=colors, height=0.6)
    for i, r in enumerate(rows):
        ax1.plot([r.w.target] * 2, [i - 0.4, i + 0.4], color="black", lw=2)
        text = "failed" if r.error else f"{r.ratio:.3f}"
        ax1.text(max(r.ratio or 0, r.w.target) + 0.02, i, text, va="center", fontsize=9)
    ax1.axvline(1.0, color="#555555", ls=":", lw=1)
    ax1.set_yticks(list(y), labels)
    ax1.invert_yaxis()
    ax1.set_xlabel("time ratio rtorch-py / PyTorch  (black tick: target; < 1 is faster)")
    ax1.set_title("Ratios vs targets (green: met, red: not met)")
    ax1.set_xlim(0, max([1.2] + [r + 0.3 for r in ratios]))

    if scal:
        n = [r.w.per for r in scal]
        ax2.plot(n, [r.ours for r in scal], "o-", label="rtorch-py", color="#2a6fdb")
        ax2.plot(n, [r.theirs for r in scal], "s-", label="PyTorch 2.13 CPU", color="#e07a1f")
        ax2.set_xscale("log")
        ax2.set_ylim(0, 1.15 * max(max(r.ours, r.theirs) for r in scal))
        ax2.legend()
    ax2.set_xlabel("chain length (ops, mul/add on 1 element)")
    ax2.set_ylabel("µs per op, forward + backward")
    ax2.set_title("Scaling: time per op should stay flat")
    ax2.grid(alpha=0.3)
    fig.suptitle(f"rtorch-py vs PyTorch {report.env.get('torch', '')} CPU — "
                 f"{report.env.get('numpy BLAS', '')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
