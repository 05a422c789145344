#!/usr/bin/env python3
"""A yoke model in plain PyTorch (Debian's python3-torch; nothing else).

Loads what `yoke export` writes (model.safetensors, read here without the safetensors package)
into torch.nn.Modules whose parameters carry yoke's names, and computes what yoke computes: every
`tie` scheme (none, decoder, all, src-tgt, shared-private), every `output` estimator (dot, l2,
square, distance, cosine), factored word matrices (`factored_rank`), `embed_scale`, pre- and
post-norm, sinusoidal or learned positions, `cross_layer`, `arch` transformer, lightconv and
dynamicconv, translation models and language models. The layers are bench/reference_pytorch.py's,
written out for every setting and with yoke's parameter layout (fused key/value projection).

    import yoke_torch
    model = yoke_torch.load("export/multi30k-ende")      # the directory `yoke export` wrote
    log_probs = model.log_probs(src, tgt_in)             # [B, T, V], as yoke's forced decoding
    ids = model.greedy([[45, 9, 311], [7, 88]])          # yoke's greedy search, ids without eos

Command line:
    python3 python/yoke_torch.py translate EXPORT_DIR < src.txt > hyp.txt   # greedy; text needs python3-sentencepiece
    python3 python/yoke_torch.py translate EXPORT_DIR --ids < src.ids       # subword ids in and out, nothing else needed
    python3 python/yoke_torch.py parity DIR...     # the tests' check: DIR/parity_inputs.safetensors -> parity_torch.safetensors
"""
import argparse
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # yoke's fixed special ids (src/text/vocab.h)
NORM_FLOOR = 1e-6                # src/embed/estimator.h: kNormFloor
LAYER_NORM_EPS = 1e-5

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}


def read_safetensors(path):
    """(tensors, metadata) of a safetensors file: uint64 header length, JSON header, raw bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than 8 bytes)")
    (n,) = struct.unpack_from("<Q", data, 0)
    if n > len(data) - 8:
        raise ValueError(f"{path}: header length {n} runs past the end of the file")
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        raw = bytearray(data[8 + n + begin: 8 + n + end])
        dtype = DTYPES[e["dtype"]]
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        tensors[name] = t.reshape(e["shape"])
    return tensors, meta


def write_safetensors(path, tensors, metadata=None):
    names = {v: k for k, v in DTYPES.items()}
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        raw = t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


class Tensors:
    """The exported tensors, handed out by name; what no module took is an error at the end."""

    def __init__(self, tensors, origin):
        self.t, self.origin, self.used = tensors, origin, set()

    def has(self, name):
        return name in self.t

    def __call__(self, name):
        if name not in self.t:
            raise KeyError(f"{self.origin}: no tensor '{name}' (not a yoke export, or from a newer yoke?)")
        self.used.add(name)
        return torch.nn.Parameter(self.t[name].clone(), requires_grad=False)

    def check_all_used(self):
        left = sorted(set(self.t) - self.used)
        if left:
            raise ValueError(f"{self.origin}: tensors this module does not know: {', '.join(left[:5])}")


# ---- word matrices, sharing and estimators (src/embed/) ---------------------------------------------

class WordMatrix(torch.nn.Module):
    """W [V, d], stored whole ("weight") or factored as A·B ("factor_a" [V, k], "factor_b" [k, d])."""

    def __init__(self, get, prefix):
        super().__init__()
        self.factored = not get.has(prefix + ".weight")
        if self.factored:
            self.factor_a, self.factor_b = get(prefix + ".factor_a"), get(prefix + ".factor_b")
        else:
            self.weight = get(prefix + ".weight")

    def full(self):
        return self.factor_a @ self.factor_b if self.factored else self.weight

    def lookup(self, ids):
        return F.embedding(ids, self.factor_a) @ self.factor_b if self.factored else F.embedding(ids, self.weight)

    def project(self, h):
        return (h @ self.factor_b.t()) @ self.factor_a.t() if self.factored else h @ self.weight.t()

    def row_norms(self):
        if not self.factored:
            return self.weight.norm(2, dim=1)
        gram = self.factor_b @ self.factor_b.t()  # ‖a_i B‖² = a_i (B Bᵀ) a_iᵀ
        return ((self.factor_a @ gram) * self.factor_a).sum(1).clamp_min(1e-24).sqrt()


class SharedPrivateBlocks(torch.nn.Module):
    """Liu et al. 2019: per pair category (lm, wf, ur) a shared block and a private one per side,
    then the unpaired rows; src_order / tgt_order put the stacked rows into vocabulary order."""

    CATEGORIES = ("lm", "wf", "ur")

    def __init__(self, get, prefix):
        super().__init__()
        for c in self.CATEGORIES:
            for part in ("shared_", "src_private_", "tgt_private_"):
                setattr(self, part + c, get(f"{prefix}.{part}{c}"))
        for name in ("src_unpaired", "tgt_unpaired"):
            setattr(self, name, get(f"{prefix}.{name}"))
        self.register_buffer("src_order", get(prefix + ".src_order").data)
        self.register_buffer("tgt_order", get(prefix + ".tgt_order").data)

    def assemble(self, source):
        side = "src" if source else "tgt"
        rows = [torch.cat([getattr(self, "shared_" + c), getattr(self, f"{side}_private_{c}")], 1) for c in self.CATEGORIES]
        rows.append(getattr(self, side + "_unpaired"))
        return torch.cat(rows, 0).index_select(0, self.src_order if source else self.tgt_order)


class AssembledMatrix:
    """One side of the shared-private pair, used as a word matrix."""

    def __init__(self, blocks, source):
        self.blocks, self.source = blocks, source

    def full(self):
        return self.blocks.assemble(self.source)

    def lookup(self, ids):
        return F.embedding(ids, self.full())

    def project(self, h):
        return h @ self.full().t()

    def row_norms(self):
        return self.full().norm(2, dim=1)


class Embeddings(torch.nn.Module):
    """The three roles (source, target, output) on the matrices the export's `tying` names."""

    def __init__(self, get, config, tying):
        super().__init__()
        self.estimator, self.dim = config["output"], config["d_model"]
        self.scale = config.get("embed_scale", "sqrt") == "sqrt"
        matrices = {}

        def matrix(prefix):
            if prefix is None:
                return None
            if prefix not in matrices:
                name = prefix.split(".", 1)[1]
                if name == "shared_private":
                    self.shared_private = SharedPrivateBlocks(get, prefix)
                    matrices[prefix] = self.shared_private
                else:
                    setattr(self, name, WordMatrix(get, prefix))
                    matrices[prefix] = getattr(self, name)
            return matrices[prefix]

        def role(name, source_side):
            m = matrix(tying[name])
            return AssembledMatrix(m, source_side) if isinstance(m, SharedPrivateBlocks) else m

        self.source_matrix = role("source", True)
        self.target_matrix, self.output_matrix = role("target", False), role("output", False)

    def _input(self, m, ids):
        x = m.lookup(ids)
        if self.estimator == "l2":  # l2 normalizes the rows its lookups read too
            x = x / x.norm(2, dim=-1, keepdim=True).clamp_min(NORM_FLOOR)
        return x * math.sqrt(self.dim) if self.scale else x

    def embed_source(self, ids):
        return self._input(self.source_matrix, ids)

    def embed_target(self, ids):
        return self._input(self.target_matrix, ids)

    def logits(self, h):
        u = self.output_matrix
        scores = u.project(h)
        e = self.estimator
        if e in ("l2", "cosine"):
            return scores / u.row_norms().clamp_min(NORM_FLOOR)
        if e == "square":
            return scores / u.row_norms().square().clamp_min(NORM_FLOOR * NORM_FLOOR)
        if e == "distance":
            return scores - 0.5 * u.row_norms().square()
        return scores


# ---- layers (src/model/) ---------------------------------------------------------------------------

class LayerNorm(torch.nn.Module):
    def __init__(self, get, prefix):
        super().__init__()
        self.weight, self.bias = get(prefix + ".weight"), get(prefix + ".bias")

    def forward(self, x):
        return F.layer_norm(x, (self.weight.shape[0],), self.weight, self.bias, LAYER_NORM_EPS)


class Attention(torch.nn.Module):
    """bench/reference_pytorch.py's attention with yoke's projections: q, and k|v fused."""

    def __init__(self, get, prefix, heads):
        super().__init__()
        for n in ("q_weight", "q_bias", "kv_weight", "out_weight", "out_bias"):
            setattr(self, n, get(f"{prefix}.{n}"))
        # Keys have no bias (src/model/attention.h); exports from before that hold kv_bias [2d],
        # whose key half shifts every score of a query alike and so is dropped.
        if get.has(f"{prefix}.kv_bias"):
            kv_bias = get(f"{prefix}.kv_bias")
            self.v_bias = torch.nn.Parameter(kv_bias[kv_bias.shape[0] // 2:].clone(), requires_grad=False)
        else:
            self.v_bias = get(f"{prefix}.v_bias")
        self.heads = heads

    @property
    def kv_bias(self):
        """The fused key/value product's bias: zeros for the keys, then the values' bias."""
        return torch.cat([torch.zeros_like(self.v_bias), self.v_bias])

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def attend(self, q, k, v, mask):
        q = self.split(q)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        if mask is not None:
            scores = scores + mask
        ctx = torch.softmax(scores, -1) @ v
        b, h, t, dh = ctx.shape
        return F.linear(ctx.transpose(1, 2).reshape(b, t, h * dh), self.out_weight, self.out_bias)

    def self_attend(self, x, mask):
        q, k, v = F.linear(x, torch.cat([self.q_weight, self.kv_weight]), torch.cat([self.q_bias, self.kv_bias])).chunk(3, -1)
        return self.attend(q, self.split(k), self.split(v), mask)

    def cross_attend(self, x, memory, mask):
        k, v = F.linear(memory, self.kv_weight, self.kv_bias).chunk(2, -1)
        return self.attend(F.linear(x, self.q_weight, self.q_bias), self.split(k), self.split(v), mask)


def depthwise_conv(x, kernel, padding):
    """out[b, t, c] = Σ_k kernel[h(c), k] · x[b, t − padding + k, c] (src/model/depthwise_conv.h);
    kernel [H, K] (LightConv) or [B, T, H, K] (DynamicConv)."""
    b, t, c = x.shape
    k, h = kernel.shape[-1], kernel.shape[-2]
    taps = F.pad(x, (0, 0, padding, k - 1 - padding)).unfold(1, k, 1).reshape(b, t, h, c // h, k)
    w = kernel.view(1, 1, h, 1, k) if kernel.dim() == 2 else kernel.unsqueeze(3)
    return (taps * w).sum(-1).reshape(b, t, c)


class ConvBlock(torch.nn.Module):
    """Wu et al. 2019: Linear d→2d + GLU (or d→d) → light or dynamic depthwise convolution → Linear d→d."""

    def __init__(self, get, prefix, heads, causal, weight_softmax):
        super().__init__()
        for n in ("in_weight", "in_bias", "out_weight", "out_bias"):
            setattr(self, n, get(f"{prefix}.{n}"))
        self.dynamic = get.has(prefix + ".dynamic_conv.weight")
        self.kernel_weight = get(prefix + (".dynamic_conv.weight" if self.dynamic else ".light_conv.weight"))
        # The kernel size is the weight's: [H, K] or [H·K, d].
        self.kernel_size = self.kernel_weight.shape[0] // heads if self.dynamic else self.kernel_weight.shape[1]
        self.glu = self.in_weight.shape[0] == 2 * self.out_weight.shape[0]
        self.heads, self.causal, self.weight_softmax = heads, causal, weight_softmax

    def forward(self, x, pad=None):
        u = F.linear(x, self.in_weight, self.in_bias)
        if self.glu:
            u = F.glu(u, -1)
        if pad is not None:
            u = u.masked_fill(pad, 0)
        if self.dynamic:
            w = F.linear(u, self.kernel_weight).view(u.shape[0], u.shape[1], self.heads, self.kernel_size)
        else:
            w = self.kernel_weight
        if self.weight_softmax:
            w = torch.softmax(w.float(), -1)
        k = self.kernel_size
        return F.linear(depthwise_conv(u, w, k - 1 if self.causal else k // 2), self.out_weight, self.out_bias)


class FeedForward(torch.nn.Module):
    def __init__(self, get, prefix):
        super().__init__()
        for n in ("w1", "b1", "w2", "b2"):
            setattr(self, n, get(f"{prefix}.{n}"))

    def forward(self, x):
        return F.linear(F.relu(F.linear(x, self.w1, self.b1)), self.w2, self.b2)


class Layer(torch.nn.Module):
    """An encoder layer (cross=False) or decoder layer: residual sublayers, pre- or post-norm."""

    def __init__(self, get, prefix, config, cross, causal):
        super().__init__()
        heads = config["heads"]
        if get.has(prefix + ".self_attn.q_weight"):
            self.self_attn, self.self_conv = Attention(get, prefix + ".self_attn", heads), None
        else:
            self.self_attn = None
            self.self_conv = ConvBlock(get, prefix + ".self_conv", heads, causal, config.get("conv_weight_softmax", True))
        self.self_attn_norm = LayerNorm(get, prefix + ".self_attn_norm")
        if cross:
            self.cross_attn, self.cross_attn_norm = Attention(get, prefix + ".cross_attn", heads), LayerNorm(get, prefix + ".cross_attn_norm")
        else:
            self.cross_attn = None
        self.ffn, self.ffn_norm = FeedForward(get, prefix + ".ffn"), LayerNorm(get, prefix + ".ffn_norm")
        self.pre_norm = config.get("norm", "pre") == "pre"

    def residual(self, x, norm, f):
        return x + f(norm(x)) if self.pre_norm else norm(x + f(x))

    def forward(self, x, self_mask, memory=None, memory_mask=None):
        if self.self_attn is not None:
            x = self.residual(x, self.self_attn_norm, lambda z: self.self_attn.self_attend(z, self_mask))
        else:  # the encoder's padded positions are zeroed before its convolution; the decoder's is causal
            pad = None if self.self_conv.causal or self_mask is None else self_mask.view(x.shape[0], x.shape[1], 1) < 0
            x = self.residual(x, self.self_attn_norm, lambda z: self.self_conv(z, pad))
        if self.cross_attn is not None:
            x = self.residual(x, self.cross_attn_norm, lambda z: self.cross_attn.cross_attend(z, memory, memory_mask))
        return self.residual(x, self.ffn_norm, self.ffn)


class YokeModel(torch.nn.Module):
    """A yoke Transformer / LightConv / DynamicConv model, encoder-decoder or decoder-only (task = lm)."""

    def __init__(self, tensors, metadata, origin="model.safetensors"):
        super().__init__()
        config = json.loads(metadata["config"])
        tying = json.loads(metadata["tying"])
        get = Tensors(tensors, origin)
        self.config, self.tying = config, tying
        self.lm = config.get("task", "translate") == "lm"
        self.embeddings = Embeddings(get, config, tying)
        # Under cross_layer every layer of a stack is its first, stored once as "encoder0".
        n_enc = 0 if self.lm else config["encoder_layers"]
        n_dec = config["decoder_layers"]
        reuse = config.get("cross_layer", False)

        def stack(kind, n, cross, causal):
            layers = []
            for i in range(n):
                if reuse and i > 0:
                    layers.append(layers[0])
                    continue
                setattr(self, f"{kind}{i}", Layer(get, f"{kind}{i}", config, cross, causal))
                layers.append(getattr(self, f"{kind}{i}"))
            return layers

        self.encoder_layers = stack("encoder", n_enc, False, False)
        self.decoder_layers = stack("decoder", n_dec, not self.lm, True)
        self.pre_norm = config.get("norm", "pre") == "pre"
        self.encoder_norm = LayerNorm(get, "encoder_norm") if self.pre_norm and n_enc > 0 else None
        self.decoder_norm = LayerNorm(get, "decoder_norm") if self.pre_norm else None
        self.register_buffer("positions", get("positions").data)
        get.check_all_used()
        self.eval()

    @property
    def max_positions(self):
        return self.positions.shape[0]

    def encode(self, src):
        """src [B, S] ids + eos, right-padded → (memory [B, S, d], additive key mask [B, 1, 1, S])."""
        mask = torch.zeros(src.shape, dtype=torch.float32).masked_fill(src == PAD, float("-inf"))[:, None, None, :]
        x = self.embeddings.embed_source(src) + self.positions[: src.shape[1]]
        for layer in self.encoder_layers:
            x = layer(x, mask)
        return (self.encoder_norm(x) if self.encoder_norm is not None else x), mask

    def decode(self, tgt_in, memory=None, memory_mask=None):
        """Teacher-forced decoder: final hidden states [B, T, d]."""
        t = tgt_in.shape[1]
        x = self.embeddings.embed_target(tgt_in) + self.positions[:t]
        causal = torch.full((t, t), float("-inf")).triu(1)
        for layer in self.decoder_layers:
            x = layer(x, causal, memory, memory_mask)
        return self.decoder_norm(x) if self.decoder_norm is not None else x

    def logits(self, h):
        return self.embeddings.logits(h)

    @torch.no_grad()
    def log_probs(self, src, tgt_in):
        """log p(next token) at every target position [B, T, V]; src None for a language model."""
        memory, mask = (None, None) if self.lm else self.encode(src)
        return torch.log_softmax(self.logits(self.decode(tgt_in, memory, mask)).float(), -1)

    @torch.no_grad()
    def greedy(self, sources, max_len_a=1.2, max_len_b=10):
        """yoke's greedy search (src/decode/search.cpp): sources as id lists without eos; the best
        target ids of each, without eos. At most max_len_a·(|x| + 1) + max_len_b tokens."""
        if not sources:
            return []
        width = max(len(s) for s in sources) + 1
        src = torch.zeros(len(sources), width, dtype=torch.int64)
        for i, s in enumerate(sources):
            src[i, : len(s)] = torch.tensor(s, dtype=torch.int64)
            src[i, len(s)] = EOS
        limit = [min(max(int(max_len_a * (len(s) + 1) + max_len_b), 1), self.max_positions - 1) for s in sources]
        memory, mask = self.encode(src)
        ys = torch.full((len(sources), 1), BOS, dtype=torch.int64)
        out, active = [[] for _ in sources], list(range(len(sources)))
        for t in range(max(limit)):
            scores = self.logits(self.decode(ys, memory, mask)[:, -1])
            scores[:, PAD] = float("-inf")  # a search never emits pad or bos
            scores[:, BOS] = float("-inf")
            nxt = scores.argmax(-1)
            keep = []
            for r, s in enumerate(active):
                tok = int(nxt[r])
                if tok != EOS:
                    out[s].append(tok)
                if tok != EOS and t + 1 < limit[s]:
                    keep.append(r)
            if not keep:
                break
            idx = torch.tensor(keep, dtype=torch.int64)
            ys = torch.cat([ys.index_select(0, idx), nxt.index_select(0, idx)[:, None]], 1)
            memory, mask = memory.index_select(0, idx), mask.index_select(0, idx)
            active = [active[r] for r in keep]
        return out

    def word_matrices(self):
        """The matrices each role reads, materialized [V, d] (tied roles give the same values)."""
        e = self.embeddings
        roles = {"target": e.target_matrix, "output": e.output_matrix}
        if e.source_matrix is not None:
            roles["source"] = e.source_matrix
        return {name: m.full().detach() for name, m in roles.items()}


def load(path):
    """An exported directory (or its model.safetensors) as a YokeModel in eval mode."""
    file = os.path.join(path, "model.safetensors") if os.path.isdir(path) else path
    tensors, metadata = read_safetensors(file)
    if metadata.get("format") != "yoke" or "config" not in metadata:
        raise ValueError(f"{file}: not written by `yoke export` (its metadata lacks format = yoke and config)")
    return YokeModel(tensors, metadata, file)


# ---- command line ----------------------------------------------------------------------------------

def parity(dirs):
    """For the tests: DIR/parity_inputs.safetensors (src, tgt_in; metadata max_len_a, max_len_b) →
    DIR/parity_torch.safetensors (log_probs [B, T, V]; greedy [B, L] padded with -1)."""
    for d in dirs:
        model = load(d)
        inputs, meta = read_safetensors(os.path.join(d, "parity_inputs.safetensors"))
        src = inputs.get("src")
        out = {"log_probs": model.log_probs(src, inputs["tgt_in"])}
        if src is not None:
            sources = [[int(i) for i in row if int(i) not in (PAD, EOS)] for row in src]
            hyps = model.greedy(sources, float(meta["max_len_a"]), int(meta["max_len_b"]))
            greedy = torch.full((len(hyps), max([len(h) for h in hyps] + [1])), -1, dtype=torch.int64)
            for i, h in enumerate(hyps):
                greedy[i, : len(h)] = torch.tensor(h, dtype=torch.int64)
            out["greedy"] = greedy
        write_safetensors(os.path.join(d, "parity_torch.safetensors"), out)


def translate(args):
    model = load(args.model)
    if model.lm:
        sys.exit(f"{args.model}: a language model; translate needs a translation model")
    lines = [l.rstrip("\n") for l in (open(args.input, encoding="utf-8") if args.input else sys.stdin)]
    if args.ids:
        sources = [[int(x) for x in l.split()] for l in lines]
    else:
        try:
            import sentencepiece
        except ImportError:
            sys.exit("text needs SentencePiece for Python (Debian: python3-sentencepiece); or give --ids")
        d = args.model if os.path.isdir(args.model) else os.path.dirname(args.model)
        src_sp, tgt_sp = (sentencepiece.SentencePieceProcessor(model_file=os.path.join(d, f)) for f in spm_files(d))
        sources = [src_sp.encode(l) for l in lines]
    limit = model.max_positions - 1  # yoke cuts a source to the positions it has (one goes to eos)
    sources = [s[:limit] for s in sources]
    for start in range(0, len(sources), args.batch):
        for hyp in model.greedy(sources[start:start + args.batch], args.max_len_a, args.max_len_b):
            print(" ".join(map(str, hyp)) if args.ids else tgt_sp.decode(hyp))


def spm_files(d):
    if os.path.exists(os.path.join(d, "spm.model")):
        return "spm.model", "spm.model"
    return "spm.src.model", "spm.tgt.model"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("translate", help="greedy translation, one line per input line")
    t.add_argument("model")
    t.add_argument("--input")
    t.add_argument("--ids", action="store_true", help="lines of subword ids in and out (no SentencePiece)")
    t.add_argument("--max-len-a", type=float, default=1.2)
    t.add_argument("--max-len-b", type=int, default=10)
    t.add_argument("--batch", type=int, default=64)
    c = sub.add_parser("parity", help="the tests' check (see parity())")
    c.add_argument("dirs", nargs="+")
    args = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
    if args.command == "parity":
        parity(args.dirs)
    else:
        translate(args)


if __name__ == "__main__":
    main()
