#!/usr/bin/env python3
"""The plain PyTorch baseline of bench/run.sh (CPU) and bench/gpu.sh (GPU): the model written
as a user would (pre-norm Transformer of the workload's size, three-way tied embeddings scaled
by sqrt(d), sinusoidal positions, label-smoothed cross-entropy, Adam), trained on the very
batches yoke trains on (read from the workload file yoke_bench_speed writes), and a greedy
decoding loop that recomputes the whole prefix at every step, and one with a key/value cache.
On a GPU: bf16 autocast, TF32, fused attention (scaled_dot_product_attention), and with
--compile the model under torch.compile.

Prints one JSON object. Usage:
  python3 bench/reference_pytorch.py train  WORKLOAD --steps N [--threads T] [--device cuda] [--compile]
  python3 bench/reference_pytorch.py greedy WORKLOAD --sentences N [--threads T] [--cache] [--device cuda]
"""
import argparse
import json
import math
import os
import resource
import struct
import sys
import time

import torch
import torch.nn.functional as F

PAD, BOS, EOS = 0, 2, 3


def read_workload(path):
    """Header: magic 'YKWL', version 2, vocab, d, layers, heads, ffn, n_train_batches, n_sources;
    then each batch (rows, S, T, src, tgt_in, tgt_out as int64) and each source sentence (length, ids)."""
    with open(path, "rb") as f:
        data = f.read()
    magic, version, vocab, dim, layers, heads, ffn, n_batches, n_sources = struct.unpack_from("<4sqqqqqqqq", data, 0)
    assert magic == b"YKWL" and version == 2, f"{path}: not a version-2 yoke workload file"
    off = struct.calcsize("<4sqqqqqqqq")
    batches = []
    for _ in range(n_batches):
        rows, s, t = struct.unpack_from("<qqq", data, off)
        off += 24
        tensors = []
        for cols in (s, t, t):
            n = rows * cols
            tensors.append(torch.frombuffer(bytearray(data[off:off + 8 * n]), dtype=torch.int64).view(rows, cols))
            off += 8 * n
        batches.append(tensors)
    sources = []
    for _ in range(n_sources):
        (n,) = struct.unpack_from("<q", data, off)
        off += 8
        sources.append(list(struct.unpack_from(f"<{n}q", data, off)))
        off += 8 * n
    size = dict(vocab=vocab, d=dim, layers=layers, heads=heads, ffn=ffn)
    return size, batches, sources


def sinusoidal(max_len, dim):
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(max_len, dim)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


class Attention(torch.nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        # Keys without bias, as yoke's (src/model/attention.h): a key bias cannot change a softmax.
        self.q, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(3))
        self.k = torch.nn.Linear(d, d, bias=False)
        self.heads, self.dropout = heads, dropout

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, mem, mask, cache=None):
        q = self.split(self.q(x))
        k, v = self.split(self.k(mem)), self.split(self.v(mem))
        if cache is not None:  # self-attention with a key/value cache: append this step
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        if q.is_cuda:  # the fused kernel a GPU user would call
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            if mask is not None:
                scores = scores + mask
            ctx = F.dropout(torch.softmax(scores, -1), self.dropout, self.training) @ v
        b, h, t, dh = ctx.shape
        return self.o(ctx.transpose(1, 2).reshape(b, t, h * dh))


class Layer(torch.nn.Module):
    def __init__(self, d, heads, ffn, dropout, cross):
        super().__init__()
        self.self_attn, self.n1 = Attention(d, heads, 0.0), torch.nn.LayerNorm(d)
        self.cross = Attention(d, heads, 0.0) if cross else None
        self.n2 = torch.nn.LayerNorm(d) if cross else None
        self.ff1, self.ff2, self.n3 = torch.nn.Linear(d, ffn), torch.nn.Linear(ffn, d), torch.nn.LayerNorm(d)
        self.dropout = dropout

    def forward(self, x, self_mask, mem=None, mem_mask=None, cache=None):
        drop = lambda y: F.dropout(y, self.dropout, self.training)
        h = self.n1(x)
        x = x + drop(self.self_attn(h, h, self_mask, cache))
        if self.cross is not None:
            x = x + drop(self.cross(self.n2(x), mem, mem_mask))
        return x + drop(self.ff2(F.relu(self.ff1(self.n3(x)))))


class Transformer(torch.nn.Module):
    def __init__(self, vocab, d=256, layers=3, heads=4, ffn=1024, dropout=0.1, **_):
        super().__init__()
        self.emb = torch.nn.Parameter(torch.randn(vocab, d) * d ** -0.5)  # source = target = output
        self.enc = torch.nn.ModuleList(Layer(d, heads, ffn, dropout, False) for _ in range(layers))
        self.dec = torch.nn.ModuleList(Layer(d, heads, ffn, dropout, True) for _ in range(layers))
        self.enc_norm, self.dec_norm = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.register_buffer("pe", sinusoidal(1024, d))
        self.d, self.dropout = d, dropout

    def embed(self, ids, offset=0):
        x = F.embedding(ids, self.emb) * math.sqrt(self.d) + self.pe[offset:offset + ids.shape[1]]
        return F.dropout(x, self.dropout, self.training)

    def encode(self, src):
        mask = torch.zeros(src.shape, dtype=torch.float32, device=src.device).masked_fill(src == PAD, float("-inf"))[:, None, None, :]
        x = self.embed(src)
        for layer in self.enc:
            x = layer(x, mask)
        return self.enc_norm(x), mask

    def decode(self, tgt_in, mem, mem_mask):
        t = tgt_in.shape[1]
        causal = torch.full((t, t), float("-inf"), device=tgt_in.device).triu(1)
        x = self.embed(tgt_in)
        for layer in self.dec:
            x = layer(x, causal, mem, mem_mask)
        return self.dec_norm(x)

    def logits(self, h):
        return h @ self.emb.t()

    def forward_loss(self, src, tgt_in, tgt_out):
        mem, mask = self.encode(src)
        h = self.decode(tgt_in, mem, mask)
        logits = self.logits(h).view(-1, self.emb.shape[0]).float()
        return F.cross_entropy(logits, tgt_out.reshape(-1), ignore_index=PAD, label_smoothing=0.1, reduction="sum")


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def train(args):
    size, batches, _ = read_workload(args.workload)
    device = torch.device(args.device)
    vocab = size["vocab"]
    torch.manual_seed(1)
    model = Transformer(**size).to(device)
    cuda = device.type == "cuda"
    # fused Adam on a GPU (what a user would pick there); the default loop on a CPU
    opt = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-8, **({"fused": True} if cuda else {}))
    model.train()
    forward = torch.compile(model.forward_loss) if args.compile else model.forward_loss

    def step(src, tgt_in, tgt_out):
        src, tgt_in, tgt_out = (x.to(device, non_blocking=True) for x in (src, tgt_in, tgt_out))
        opt.zero_grad(set_to_none=True)
        if cuda:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = forward(src, tgt_in, tgt_out)
        else:
            loss = forward(src, tgt_in, tgt_out)
        tokens = (tgt_out != PAD).sum()
        (loss / tokens).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(3 if cuda else 1):  # warm-up (and compilation), as yoke's benchmark does
        step(*batches[0])
    sync(device)
    tokens, t0 = 0, time.perf_counter()
    for i in range(args.steps):
        src, tgt_in, tgt_out = batches[i % len(batches)]
        step(src, tgt_in, tgt_out)
        tokens += int((src != PAD).sum()) + int((tgt_out != PAD).sum())
    sync(device)
    seconds = time.perf_counter() - t0
    out = {"impl": "pytorch" + ("-compile" if args.compile else ""), "part": "train", "steps": args.steps,
           "tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds, "peak_rss_mb": peak_rss_mb(),
           "params": sum(p.numel() for p in model.parameters()), "torch": torch.__version__, "device": str(device)}
    if cuda:
        out["peak_gpu_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return out


@torch.no_grad()
def greedy(args):
    size, _, sources = read_workload(args.workload)
    sources = sources[: args.sentences]
    device = torch.device(args.device)
    torch.manual_seed(1)
    model = Transformer(**size).to(device).eval()
    out_tokens, t0 = 0, time.perf_counter()
    for start in range(0, len(sources), args.batch):
        chunk = sources[start:start + args.batch]
        width = max(len(s) for s in chunk) + 1
        src = torch.zeros(len(chunk), width, dtype=torch.int64)
        for i, s in enumerate(chunk):
            src[i, :len(s)] = torch.tensor(s)
            src[i, len(s)] = EOS
        src = src.to(device)
        mem, mask = model.encode(src)
        max_len = int(1.2 * (width - 1)) + 10
        ys = torch.full((len(chunk), 1), BOS, dtype=torch.int64, device=device)
        done = torch.zeros(len(chunk), dtype=torch.bool, device=device)
        caches = [dict() for _ in model.dec] if args.cache else None
        for t in range(max_len):
            if args.cache:  # one new position through every layer, keys/values kept
                x = model.embed(ys[:, -1:], offset=t)
                for layer, cache in zip(model.dec, caches):
                    x = layer(x, None, mem, mask, cache)
                h = model.dec_norm(x)[:, -1]
            else:  # the whole prefix again at every step
                h = model.decode(ys, mem, mask)[:, -1]
            nxt = model.logits(h).argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
            ys = torch.cat([ys, nxt[:, None]], 1)
            done |= nxt == EOS
            if bool(done.all()):
                break
        out_tokens += int((ys[:, 1:] != PAD).sum())
    seconds = time.perf_counter() - t0
    return {"impl": "pytorch", "part": "greedy-cache" if args.cache else "greedy", "sentences": len(sources),
            "seconds": seconds, "sentences_per_s": len(sources) / seconds, "tokens": out_tokens,
            "peak_rss_mb": peak_rss_mb(), "torch": torch.__version__}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=["train", "greedy"])
    p.add_argument("workload")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--sentences", type=int, default=1000)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--cache", action="store_true")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    result = train(args) if args.part == "train" else greedy(args)
    # The thread settings it ran under (bench/run.sh tries several and credits the fastest).
    result["omp_wait_policy"] = os.environ.get("OMP_WAIT_POLICY", "default")
    if os.environ.get("OPENBLAS_THREAD_TIMEOUT"):
        result["omp_wait_policy"] += "+OPENBLAS_THREAD_TIMEOUT=" + os.environ["OPENBLAS_THREAD_TIMEOUT"]
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
