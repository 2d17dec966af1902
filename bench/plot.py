"""plot.py - `bench.py --tune SECONDS --plot FILE.png`: the tuner's convergence, one panel per
kernel: the best time tc_tune had measured against the seconds since the search began (a step
line, from its progress reports), with libtc's default kernel and the best peer as horizontal
lines (their medians in fresh processes, from the same bench run). Needs Debian's
python3-matplotlib (bench/run.sh installs it); drawn off-screen (Agg), written as a PNG.
"""
import math


def convergence(path, kernels, title):
    """kernels: a list of (name, trace, default_ms, peer_ms, peer_name), trace the tuner's
    [(seconds, best_ms), ...] in order, best_ms None until something was measured (tuned.py);
    a missing default or peer is None. Writes the PNG at path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise SystemExit("bench: --plot needs matplotlib (apt-get install python3-matplotlib): %s" % e)
    n = len(kernels)
    cols = min(4, max(1, n))
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax, (name, trace, default_ms, peer_ms, peer_name) in zip(axes.flat, kernels):
        points = [(t, ms) for t, ms in trace if ms is not None]
        if points:
            xs, ys = zip(*points)
            ax.step(xs, ys, where="post", color="tab:blue", label="tuned (best so far)")
            ax.plot(xs[-1:], ys[-1:], "o", color="tab:blue")
        if default_ms:
            ax.axhline(default_ms, color="tab:gray", linestyle="--", label="libtc default")
        if peer_ms:
            ax.axhline(peer_ms, color="tab:red", linestyle=":", label=peer_name or "best peer")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("seconds of tuning", fontsize=8)
        ax.set_ylabel("ms per call", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.legend(fontsize=6, loc="upper right")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
