"""One PNG: ratios against their targets, and time per op against chain length."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(report, path: str) -> None:
    rows = [r for r in report.rows if r.w.target is not None]
    scal = [r for r in report.rows if r.w.name.startswith("scaling_") and not r.error]
    r_rows = getattr(report, "r_rows", [])
    if r_rows:
        fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(19, 5.4),
                                            gridspec_kw={"width_ratios": [1.5, 1, 1]})
        _plot_r(ax3, r_rows)
    else:
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


def _plot_r(ax, r_rows) -> None:
    """The R side: µs per R-level op (R vs the same loop in Python) against the
    20 µs target and R torch's ~18 µs, and the training loop's figures as text."""
    from .rside import R_OP_TARGET_US, R_TORCH_OP_US
    ops = [r for r in r_rows if r.name in ("r_op", "r_op_fresh", "r_op_bwd")]
    train = next((r for r in r_rows if r.name == "r_train"), None)
    labels, y = [], 0
    for r in ops:
        bad = r.skipped or r.error
        if bad:
            ax.text(0.5, y, ("skipped: " if r.skipped else "FAILED: ") + bad[:60], va="center",
                    fontsize=8, color="#d1495b")
        else:
            color = "#d1495b" if r.met == "NO" else "#2a9d3a"
            ax.barh(y - 0.18, r.r, height=0.34, color=color, label="R" if y == 0 else None)
            ax.barh(y + 0.18, r.py, height=0.34, color="#2a6fdb",
                    label="Python, same loop" if y == 0 else None)
            ax.text(r.r + 0.5, y - 0.18, f"{r.r:.1f}", va="center", fontsize=9)
            ax.text(r.py + 0.5, y + 0.18, f"{r.py:.1f}", va="center", fontsize=9)
        labels.append({"r_op": "y <- x * 2", "r_op_fresh": "y <- x * 2\n(gc() first)",
                       "r_op_bwd": "(x * 2)$backward()"}[r.name])
        y += 1
    ax.axvline(R_OP_TARGET_US, color="black", lw=2, label=f"target ≤ {R_OP_TARGET_US:g} µs (op)")
    ax.axvline(R_TORCH_OP_US, color="#555555", ls=":", lw=1.5,
               label=f"R torch's own ≈ {R_TORCH_OP_US:g} µs/op")
    ax.set_yticks(list(range(len(labels))), labels)
    ax.set_ylim(len(labels) + 1.2, -0.6)   # room below the bars for the legend and the text
    ax.set_xlabel("µs per iteration, 1-element tensor requiring grad")
    ax.set_title("R side: cost of an R-level op")
    ax.legend(fontsize=8, loc="lower right")
    xmax = max([R_OP_TARGET_US * 1.3] + [1.25 * max(r.r, r.py) for r in ops
                                          if r.r is not None])
    ax.set_xlim(0, xmax)
    if train is not None:
        if train.skipped or train.error:
            text = "training loop: " + ("skipped: " + train.skipped if train.skipped
                                        else "FAILED: " + train.error)[:70]
        else:
            text = (f"using-autograd training loop, µs/step:\n"
                    f"R {train.r:,.0f}   Python {train.py:,.0f}   PyTorch {train.torch:,.0f}\n"
                    f"R / Python {train.r_over_py:.2f},  Python / PyTorch "
                    f"{train.py_over_torch:.2f}")
        ax.text(0.02, 0.23, text, transform=ax.transAxes, fontsize=9, va="bottom",
                bbox={"facecolor": "white", "edgecolor": "#999999", "alpha": 0.9})
