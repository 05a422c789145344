#!/usr/bin/env python3
"""The plain PyTorch row of bench/decode.sh: the same trained yoke model (tie all, dot estimator,
pre-norm Transformer; weights read from yoke's checkpoint into bench/reference_pytorch.py's
modules) decoding the same source ids with a beam search as a PyTorch user would write it:
batch x beam rows, key/value caches for self-attention, the encoder's keys/values for
cross-attention computed once per batch, finished sentences dropped from the batch, an ending
counted when it ranks among the k best candidates (as fairseq and yoke do), score = log p /
(length + 1)^lenpen, at most 1.2 * |x| + 10 tokens. Batches of --batch sentences sorted by length
as yoke_bench_decode cuts them, one untimed warm-up batch, loading excluded.

Prints one JSON object. Usage:
  python3 bench/decode_reference.py CHECKPOINT SRC_IDS [--beam 4] [--batch 32] [--threads T] [--hyp-ids-out FILE]
"""
import argparse
import json
import math
import os
import resource
import struct
import sys
import zlib
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_pytorch import PAD, BOS, EOS, Transformer  # noqa: E402

DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "i32": torch.int32, "i8": torch.int8}


def read_ykp(path):
    """yoke's checkpoint: 'YOKECKP2', a uint64 header length, the header's uint32 CRC-32, the JSON
    header, the raw tensors (version 1, 'YOKECKP1', has no CRC)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] in (b"YOKECKP1", b"YOKECKP2"), f"{path}: not a yoke checkpoint"
    (n,) = struct.unpack_from("<Q", data, 8)
    start = 16 if data[:8] == b"YOKECKP1" else 20
    text = data[start:start + n]
    if start == 20:
        assert struct.unpack_from("<I", data, 16)[0] == zlib.crc32(text), f"{path}: header checksum does not match"
    header = json.loads(text)
    base = start + n
    tensors = {}
    for t in header["tensors"]:
        raw = bytearray(data[base + t["offset"]: base + t["offset"] + t["bytes"]])
        tensors[t["name"]] = torch.frombuffer(raw, dtype=DTYPES[t["dtype"]]).view(t["shape"]) if t["bytes"] else torch.empty(t["shape"])
    return header["meta"], tensors


def load_model(path):
    meta, t = read_ykp(path)
    c = meta["config"]
    assert "int8" not in meta, "the reference reads an fp32 model"
    assert c["tie"] == "all" and c["output"] == "dot" and c["norm"] == "pre" and c.get("arch", "transformer") == "transformer"
    assert c["embed_scale"] == "sqrt" and c["positions"] == "sinusoidal"
    d = c["d_model"]
    model = Transformer(t["model.embeddings.shared.weight"].shape[0], d=d, layers=c["encoder_layers"], heads=c["heads"],
                        ffn=c["ffn_dim"], dropout=0.0)
    assert c["encoder_layers"] == c["decoder_layers"]
    g = lambda name: t["model." + name]
    with torch.no_grad():
        model.emb.copy_(g("embeddings.shared.weight"))
        model.pe = g("positions").clone()  # yoke's table (sin half, cos half)
        for stack, prefix in ((model.enc, "encoder"), (model.dec, "decoder")):
            for i, layer in enumerate(stack):
                p = f"{prefix}{i}."
                attns = [(layer.self_attn, "self_attn"), (layer.n1, "self_attn_norm")]
                if layer.cross is not None:
                    attns += [(layer.cross, "cross_attn"), (layer.n2, "cross_attn_norm")]
                for mod, name in attns:
                    if isinstance(mod, torch.nn.LayerNorm):
                        mod.weight.copy_(g(p + name + ".weight")), mod.bias.copy_(g(p + name + ".bias"))
                        continue
                    kv_w = g(p + name + ".kv_weight")
                    mod.q.weight.copy_(g(p + name + ".q_weight")), mod.q.bias.copy_(g(p + name + ".q_bias"))
                    mod.k.weight.copy_(kv_w[:d])  # keys have no bias (src/model/attention.h)
                    mod.v.weight.copy_(kv_w[d:]), mod.v.bias.copy_(g(p + name + ".v_bias"))
                    mod.o.weight.copy_(g(p + name + ".out_weight")), mod.o.bias.copy_(g(p + name + ".out_bias"))
                layer.n3.weight.copy_(g(p + "ffn_norm.weight")), layer.n3.bias.copy_(g(p + "ffn_norm.bias"))
                layer.ff1.weight.copy_(g(p + "ffn.w1")), layer.ff1.bias.copy_(g(p + "ffn.b1"))
                layer.ff2.weight.copy_(g(p + "ffn.w2")), layer.ff2.bias.copy_(g(p + "ffn.b2"))
        for norm, name in ((model.enc_norm, "encoder_norm"), (model.dec_norm, "decoder_norm")):
            norm.weight.copy_(g(name + ".weight")), norm.bias.copy_(g(name + ".bias"))
    return model.eval(), c


def attend(attn, q, k, v, mask):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    ctx = torch.softmax(scores, -1) @ v
    b, h, t, dh = ctx.shape
    return attn.o(ctx.transpose(1, 2).reshape(b, t, h * dh))


@torch.no_grad()
def beam_search(model, src_list, k, lenpen, a, b):
    n = len(src_list)
    width = max(len(s) for s in src_list) + 1
    src = torch.zeros(n, width, dtype=torch.int64)
    for i, s in enumerate(src_list):
        src[i, :len(s)] = torch.tensor(s, dtype=torch.int64)
        src[i, len(s)] = EOS
    max_len = [min(int(a * (len(s) + 1) + b), 1023) for s in src_list]
    mem, mask = model.encode(src)
    rows = torch.arange(n).repeat_interleave(k)
    mem, mask = mem[rows], mask[rows]
    cross = [(l.cross.split(l.cross.k(mem)), l.cross.split(l.cross.v(mem))) for l in model.dec]
    selfkv = [None] * len(model.dec)
    active = list(range(n))
    scores = torch.full((n, k), float("-inf"))
    scores[:, 0] = 0
    hist = [[] for _ in range(n * k)]
    tokens = torch.full((n * k, 1), BOS, dtype=torch.int64)
    finished = [[] for _ in range(n)]
    t = 0
    while active:
        x = F.embedding(tokens, model.emb) * math.sqrt(model.d) + model.pe[t:t + 1]
        for i, layer in enumerate(model.dec):
            h = layer.n1(x)
            sa = layer.self_attn
            q, kk, vv = sa.split(sa.q(h)), sa.split(sa.k(h)), sa.split(sa.v(h))
            if selfkv[i] is not None:
                kk, vv = torch.cat([selfkv[i][0], kk], 2), torch.cat([selfkv[i][1], vv], 2)
            selfkv[i] = (kk, vv)
            x = x + attend(sa, q, kk, vv, None)
            h = layer.n2(x)
            x = x + attend(layer.cross, layer.cross.split(layer.cross.q(h)), cross[i][0], cross[i][1], mask)
            x = x + layer.ff2(F.relu(layer.ff1(layer.n3(x))))
        lp = torch.log_softmax(model.logits(model.dec_norm(x)[:, 0]), -1)
        lp[:, PAD] = float("-inf")
        lp[:, BOS] = float("-inf")
        vocab = lp.shape[1]
        for j, s in enumerate(active):  # at the length limit only eos is left
            if t >= max_len[s]:
                eos = lp[j * k:(j + 1) * k, EOS].clone()
                lp[j * k:(j + 1) * k] = float("-inf")
                lp[j * k:(j + 1) * k, EOS] = eos
        cand = (lp + scores.view(-1, 1)).view(len(active), k * vocab)
        vals, idxs = cand.topk(2 * k, 1)
        vals, idxs = vals.tolist(), idxs.tolist()
        parents, next_tokens, next_scores, next_hist, next_active = [], [], [], [], []
        for j, s in enumerate(active):
            live = []
            for c in range(2 * k):
                if len(live) >= k or vals[j][c] == float("-inf"):
                    break
                row, tok = j * k + idxs[j][c] // vocab, idxs[j][c] % vocab
                if tok == EOS:
                    if c < k and len(finished[s]) < k:
                        finished[s].append((vals[j][c] / (len(hist[row]) + 1) ** lenpen, hist[row]))
                else:
                    live.append(c)
            if len(finished[s]) >= k or t >= max_len[s] or not live:
                continue
            next_active.append(s)
            for bb in range(k):
                c = live[bb] if bb < len(live) else live[0]
                row, tok = j * k + idxs[j][c] // vocab, idxs[j][c] % vocab
                parents.append(row)
                next_tokens.append(tok)
                next_scores.append(vals[j][c] if bb < len(live) else float("-inf"))
                next_hist.append(hist[row] + [tok])
        if not next_active:
            break
        sel = torch.tensor(parents)
        selfkv = [(kk[sel], vv[sel]) for kk, vv in selfkv]
        keep = torch.tensor([active.index(s) for s in next_active]).repeat_interleave(k) * k + torch.arange(k).repeat(len(next_active))
        cross = [(ck[keep], cv[keep]) for ck, cv in cross]
        mask = mask[keep]
        tokens = torch.tensor(next_tokens).view(-1, 1)
        scores = torch.tensor(next_scores).view(-1, k)
        hist, active = next_hist, next_active
        t += 1
    out = []
    for s in range(n):
        best = max(finished[s], key=lambda f: f[0]) if finished[s] else (0, [])  # first among equals, as yoke
        out.append(best[1])
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint")
    p.add_argument("src_ids")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--hyp-ids-out")
    args = p.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    model, c = load_model(args.checkpoint)
    with open(args.src_ids) as f:
        sources = [[int(x) for x in line.split()] for line in f]
    order = sorted(range(len(sources)), key=lambda i: -len(sources[i]))  # stable, as std::stable_sort
    batches = [order[i:i + args.batch] for i in range(0, len(order), args.batch)]
    decode = lambda idx: beam_search(model, [sources[i] for i in idx], args.beam, c["lenpen"], c["max_len_a"], c["max_len_b"])
    decode(batches[-1])  # warm-up, untimed
    out = [None] * len(sources)
    t0 = time.perf_counter()
    for idx in batches:
        for i, hyp in zip(idx, decode(idx)):
            out[i] = hyp
    seconds = time.perf_counter() - t0
    tokens = sum(len(h) for h in out)
    if args.hyp_ids_out:
        with open(args.hyp_ids_out, "w") as f:
            f.writelines(" ".join(map(str, h)) + "\n" for h in out)
    print(json.dumps({"impl": "pytorch", "beam": args.beam, "batch": args.batch, "sentences": len(sources),
                      "target_tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds,
                      "sentences_per_s": len(sources) / seconds, "threads": torch.get_num_threads(),
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      "torch": torch.__version__, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default")}))


if __name__ == "__main__":
    sys.exit(main())
