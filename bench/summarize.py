#!/usr/bin/env python3
"""Summarizes bench/run.sh's results (one JSON object per line): a table, then one JSON object
with every figure and the ratios yoke / PyTorch as the last line."""
import json
import sys


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault((r["impl"], r["part"]), []).append(r)

def raw(impl, part, key, policy=None):
    return mean([r[key] for r in by.get((impl, part), []) if key in r
                 and (policy is None or r.get("omp_wait_policy", "default") == policy)])


# The reference ran under both OpenMP wait policies, and under yoke's own thread settings (PASSIVE,
# OpenBLAS's threads sleeping at once: util/thread_policy.h); it is credited with its fastest.
policies = ("PASSIVE", "default", "PASSIVE+OPENBLAS_THREAD_TIMEOUT=4")


def faster_policy(part):
    rates = {p: raw("pytorch", part, "seconds", p) for p in policies}
    rates = {p: v for p, v in rates.items() if v == v}
    return min(rates, key=rates.get) if rates else None


ref_policy = {part: faster_policy(part) for part in ("train", "greedy", "greedy-cache")}


def fig(impl, part, key):
    return raw(impl, part, key, ref_policy.get(part) if impl == "pytorch" else None)


peak = fig("yoke", "matmul", "gflops")
s = {
    "matmul_peak_gflops": peak,
    "train_tokens_per_s": {"yoke": fig("yoke", "train", "tokens_per_s"), "pytorch": fig("pytorch", "train", "tokens_per_s")},
    "train_peak_rss_mb": {"yoke": max(r["peak_rss_mb"] for r in by[("yoke", "train")]),
                          "pytorch": max(r["peak_rss_mb"] for r in by[("pytorch", "train")])},
    "train_gflops_yoke": fig("yoke", "train", "gflops"),
    "params": {"yoke": fig("yoke", "train", "params"), "pytorch": fig("pytorch", "train", "params")},
    "decode_sentences_per_s": {"yoke_greedy": fig("yoke", "greedy", "sentences_per_s"),
                               "yoke_beam5": fig("yoke", "beam", "sentences_per_s"),
                               "pytorch_greedy_recompute": fig("pytorch", "greedy", "sentences_per_s"),
                               "pytorch_greedy_cache": fig("pytorch", "greedy-cache", "sentences_per_s")},
    "decode_seconds": {"yoke_greedy": fig("yoke", "greedy", "seconds"), "yoke_beam5": fig("yoke", "beam", "seconds"),
                       "pytorch_greedy_recompute": fig("pytorch", "greedy", "seconds"),
                       "pytorch_greedy_cache": fig("pytorch", "greedy-cache", "seconds")},
    "decode_peak_rss_mb": {k: fig(i, p, "peak_rss_mb") for k, (i, p) in
                           {"yoke_greedy": ("yoke", "greedy"), "yoke_beam5": ("yoke", "beam"),
                            "pytorch_greedy_recompute": ("pytorch", "greedy"),
                            "pytorch_greedy_cache": ("pytorch", "greedy-cache")}.items()},
    "pytorch_omp_wait_policy": ref_policy,
    "pytorch_by_policy": {f"{part}/{p}": raw("pytorch", part, "tokens_per_s" if part == "train" else "sentences_per_s", p)
                          for part in ("train", "greedy", "greedy-cache") for p in policies},
    "decode_tokens": {"yoke_greedy": fig("yoke", "greedy", "tokens"), "pytorch_greedy": fig("pytorch", "greedy", "tokens")},
}
# Random weights stop at different lengths in the two implementations: compare generated tokens/s too.
g = s["decode_seconds"]
s["greedy_tokens_per_s"] = {"yoke": fig("yoke", "greedy", "tokens") / g["yoke_greedy"],
                            "pytorch_recompute": fig("pytorch", "greedy", "tokens") / g["pytorch_greedy_recompute"],
                            "pytorch_cache": fig("pytorch", "greedy-cache", "tokens") / g["pytorch_greedy_cache"]}
prof = by.get(("yoke", "profile"))
if prof:
    s["train_profile"] = prof[0]["phases"]
    s["train_profile_seconds_per_step"] = prof[0]["seconds_per_step"]
t, d, m = s["train_tokens_per_s"], s["decode_sentences_per_s"], s["train_peak_rss_mb"]
s["ratios"] = {
    "train_tokens_per_s": t["yoke"] / t["pytorch"],
    "greedy_vs_pytorch_recompute": d["yoke_greedy"] / d["pytorch_greedy_recompute"],
    "greedy_vs_pytorch_cache": d["yoke_greedy"] / d["pytorch_greedy_cache"],
    "train_peak_rss": m["yoke"] / m["pytorch"],
    "train_gflops_of_peak": s["train_gflops_yoke"] / peak,
    "greedy_tokens_per_s_vs_pytorch_recompute": s["greedy_tokens_per_s"]["yoke"] / s["greedy_tokens_per_s"]["pytorch_recompute"],
    "greedy_tokens_per_s_vs_pytorch_cache": s["greedy_tokens_per_s"]["yoke"] / s["greedy_tokens_per_s"]["pytorch_cache"],
}
r = s["ratios"]
print(f"matrix-product peak           {peak:10.1f} GFLOP/s")
print(f"training tokens/s             yoke {t['yoke']:8.0f}   pytorch {t['pytorch']:8.0f}   ratio {r['train_tokens_per_s']:.2f}  (target >= 1.8)")
print(f"training GFLOP/s              yoke {s['train_gflops_yoke']:8.1f}   = {100 * r['train_gflops_of_peak']:.1f}% of the peak (target >= 60%)")
print(f"training peak RSS MB          yoke {m['yoke']:8.0f}   pytorch {m['pytorch']:8.0f}   ratio {r['train_peak_rss']:.2f}  (target <= 0.8)")
print(f"greedy sentences/s            yoke {d['yoke_greedy']:8.1f}   pytorch recompute {d['pytorch_greedy_recompute']:6.1f} (ratio {r['greedy_vs_pytorch_recompute']:.1f}, target >= 5)"
      f"   pytorch cache {d['pytorch_greedy_cache']:6.1f} (ratio {r['greedy_vs_pytorch_cache']:.1f}, target >= 1.5)")
gt = s["greedy_tokens_per_s"]
print(f"greedy generated tokens/s     yoke {gt['yoke']:8.0f}   pytorch recompute {gt['pytorch_recompute']:6.0f} (ratio {r['greedy_tokens_per_s_vs_pytorch_recompute']:.1f})"
      f"   pytorch cache {gt['pytorch_cache']:6.0f} (ratio {r['greedy_tokens_per_s_vs_pytorch_cache']:.1f})")
print("pytorch reference under each thread setting (the fastest is used above): " +
      ", ".join(f"{k} {v:.1f}" for k, v in s["pytorch_by_policy"].items()))
print(f"beam-5 sentences/s            yoke {d['yoke_beam5']:8.1f}")
if prof:
    print("training step, where the time goes (yoke):")
    for k, v in sorted(s["train_profile"].items(), key=lambda kv: -kv[1]["share"]):
        print(f"  {k:50s} {v['seconds_per_step']:7.3f} s  {100 * v['share']:5.1f}%")
# Wu et al. (2019)'s convolutions against the Transformer of the same size, in the same run.
archs = [a for a in ("lightconv", "dynamicconv") if ("yoke-" + a, "train") in by]
if archs:
    s["arch_comparison"] = {}
    print("architectures (same d, depth, heads, FFN; yoke):      train tokens/s   vs transformer   greedy sent/s   beam-5 sent/s")
    for a in ["transformer"] + archs:
        impl = "yoke" if a == "transformer" else "yoke-" + a
        row = {"train_tokens_per_s": raw(impl, "train", "tokens_per_s"), "params": raw(impl, "train", "params"),
               "greedy_sentences_per_s": raw(impl, "greedy", "sentences_per_s"),
               "beam5_sentences_per_s": raw(impl, "beam", "sentences_per_s")}
        row["train_vs_transformer"] = row["train_tokens_per_s"] / t["yoke"]
        s["arch_comparison"][a] = row
        print(f"  {a:14s} {row['params']:12.0f} params   {row['train_tokens_per_s']:10.0f}   {row['train_vs_transformer']:10.2f}"
              f"   {row['greedy_sentences_per_s']:12.1f}   {row['beam5_sentences_per_s']:12.1f}")
conv = by.get(("yoke", "conv"))
if conv:
    s["depthwise_conv_ms"] = conv[0]["rows"]
    print("depthwise convolution, forward + backward ms (band / unfold; * = the method chosen):")
    for row in conv[0]["rows"]:
        b, u = row["band_ms"], row["unfold_ms"]
        print(f"  {row['kernel']:8s} K={row['K']:3d} T={row['T']:4d}   band {b:7.2f}{'*' if row['chosen'] == 'band' else ' '}"
              f"   unfold {u:7.2f}{'*' if row['chosen'] == 'unfold' else ' '}")
print(json.dumps(s))
