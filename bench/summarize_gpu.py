#!/usr/bin/env python3
"""Table and final JSON line of bench/gpu.sh, from the JSON lines its parts printed."""
import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip().startswith("{")]
    pick = lambda impl, part: [r for r in rows if r.get("impl") == impl and r.get("part") == part]
    best = lambda rs, key: max((r[key] for r in rs), default=None)
    peak = best(pick("yoke", "matmul"), "gflops")
    yoke_train = pick("yoke", "train")
    tok = {"yoke": best(yoke_train, "tokens_per_s"), "pytorch_eager": best(pick("pytorch", "train"), "tokens_per_s"),
           "pytorch_compile": best(pick("pytorch-compile", "train"), "tokens_per_s")}
    # FLOPs per token are the same for both (same model, same batches): utilisation scales with tokens/s.
    y_best = max(yoke_train, key=lambda r: r["tokens_per_s"]) if yoke_train else None
    flops_per_token = y_best["gflops"] / y_best["tokens_per_s"] if y_best else None
    mfu = {k: (v * flops_per_token / peak if v and peak and flops_per_token else None) for k, v in tok.items()}
    dec = {f"yoke_{r['part']}": r["sentences_per_s"] for r in rows if r.get("impl") == "yoke" and r["part"] in ("greedy", "beam")}
    dec.update({"pytorch_" + r["part"]: r["sentences_per_s"] for r in rows if r.get("impl") == "pytorch" and r["part"].startswith("greedy")})
    ratio = lambda a, b: a / b if a and b else None
    out = {"bf16_peak_tflops": peak / 1e3 if peak else None, "train_tokens_per_s": tok, "mfu": mfu,
           "decode_sentences_per_s": dec,
           "ratios": {"train_vs_pytorch_eager": ratio(tok["yoke"], tok["pytorch_eager"]),
                      "train_vs_pytorch_compile": ratio(tok["yoke"], tok["pytorch_compile"]),
                      "greedy_vs_pytorch_cache": ratio(dec.get("yoke_greedy"), dec.get("pytorch_greedy-cache"))}}
    f = lambda x, fmt="{:.0f}": fmt.format(x) if x is not None else "n/a"
    print(f"bf16 matrix-product peak      {f(out['bf16_peak_tflops'], '{:.0f}')} TFLOP/s (measured)")
    for k in ("yoke", "pytorch_eager", "pytorch_compile"):
        print(f"training tokens/s  {k:16s} {f(tok[k]):>9s}   MFU {f(mfu[k] and 100 * mfu[k], '{:.1f}')}%")
    print(f"ratio yoke / eager {f(out['ratios']['train_vs_pytorch_eager'], '{:.2f}')} (target >= 1.2), "
          f"yoke / compile {f(out['ratios']['train_vs_pytorch_compile'], '{:.2f}')}")
    for k, v in dec.items():
        print(f"decoding sentences/s  {k:22s} {v:8.1f}")
    # Wu et al. (2019)'s convolutions in place of self-attention, same size, same batches.
    arch = {}
    for a in ("lightconv", "dynamicconv"):
        t = best(pick("yoke-" + a, "train"), "tokens_per_s")
        if t is None:
            continue
        arch[a] = {"train_tokens_per_s": t, "vs_transformer": ratio(t, tok["yoke"]),
                   "greedy_sentences_per_s": best(pick("yoke-" + a, "greedy"), "sentences_per_s"),
                   "beam_sentences_per_s": best(pick("yoke-" + a, "beam"), "sentences_per_s")}
        print(f"training tokens/s  yoke {a:11s} {f(t):>9s}   vs transformer {f(arch[a]['vs_transformer'], '{:.2f}')}"
              f"   greedy {f(arch[a]['greedy_sentences_per_s'], '{:.1f}')} / beam-5 {f(arch[a]['beam_sentences_per_s'], '{:.1f}')} sentences/s")
    if arch:
        out["arch_comparison"] = arch
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
