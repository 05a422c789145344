#!/usr/bin/env python3
"""A yoke translation model as ONNX graphs (torch.onnx.export over python/yoke_torch.py).

    python3 python/yoke_onnx.py EXPORT_DIR OUT_DIR [EXPORT_DIR OUT_DIR ...]   # EXPORT_DIR: what `yoke export` wrote

writes into OUT_DIR (docs/export.md, "ONNX"):
    encoder.onnx       src [B, S] int64 (ids + eos, right-padded with 0)
                       -> src_mask [B, 1, 1, S] (0 or -inf), cross_k.I / cross_v.I [B, H, S, d/H]
                       (each decoder layer's keys and values of the encoder output, computed once)
    decoder.onnx       one step with its cache: tokens [B] int64, position [] int64 (the step, from 0),
                       src_mask, cross_k.I, cross_v.I, and per decoder layer its state
                       (self_k.I / self_v.I [B, H, T, d/H] for attention: the T earlier steps;
                       conv.I [B, K-1, d] for a convolution: its last K-1 inputs)
                       -> logits [B, V], log_probs [B, V], and the states after this step
                       (new_self_k.I, new_self_v.I or new_conv.I)
    onnx.json          decoding settings and the state tensors' names and shapes (js/yoke_onnx.js reads it)
    vocab.src.json, vocab.tgt.json   the SentencePiece pieces and scores (js/spm_bpe.js encodes with them)
    spm*.model         the SentencePiece models, copied

Every row of every input and state is a hypothesis: a search reorders or drops hypotheses by
gathering dim 0. Parameters inference does not need (training-only ones) are left out of the
graphs; constant folding computes what depends on the weights alone (norms of the output rows,
shared-private assembly) at export time. Needs Debian's python3-torch (1.13) and python3-onnx
(the checker); python3-sentencepiece for the vocabulary JSON.
"""
import json
import math
import os
import shutil
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yoke_torch  # noqa: E402

OPSET = 13  # torch 1.13's exporter supports 7..17; 13 runs on every onnxruntime-node / -web since 1.8
FORMAT_VERSION = 1


def shifted_depthwise_conv(x, kernel, padding):
    """yoke_torch.depthwise_conv written with pad + slices instead of unfold (which the exporter
    turns into a Loop when T is dynamic): out[b, t, c] = Σ_k kernel[h(c), k] · x[b, t − padding + k, c]."""
    b, t, c = x.shape
    k, h = kernel.shape[-1], kernel.shape[-2]
    padded = F.pad(x, (0, 0, padding, k - 1 - padding))
    out = None
    for j in range(k):
        tap = padded[:, j:j + t].reshape(b, t, h, c // h)
        w = kernel[:, j].view(1, 1, h, 1) if kernel.dim() == 2 else kernel[..., j].unsqueeze(-1)
        term = tap * w
        out = term if out is None else out + term
    return out.reshape(b, t, c)


def keep_inference_tensors(tensors):
    """Training-only parameters (a later `bridge.*` that only shapes training) are not part of the
    inference model: dropped here, so yoke_torch's check that every tensor is used still guards
    the rest."""
    return {n: t for n, t in tensors.items() if not n.startswith("bridge.")}


class Encoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src):
        memory, mask = self.model.encode(src)
        out = [mask]
        for layer in self.model.decoder_layers:
            a = layer.cross_attn
            k, v = F.linear(memory, a.kv_weight, a.kv_bias).chunk(2, -1)
            out += [a.split(k), a.split(v)]
        return tuple(out)


class DecoderStep(torch.nn.Module):
    """One decoder step for every row: yoke_torch.Layer's sublayers with a cache instead of the prefix."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def self_attention(self, layer, x, k_past, v_past):
        a = layer.self_attn
        q, k, v = F.linear(x, torch.cat([a.q_weight, a.kv_weight]), torch.cat([a.q_bias, a.kv_bias])).chunk(3, -1)
        k_all, v_all = torch.cat([k_past, a.split(k)], 2), torch.cat([v_past, a.split(v)], 2)
        return a.attend(q, k_all, v_all, None), k_all, v_all

    def convolution(self, layer, x, past):
        """Causal light/dynamic convolution of the newest position over its K-1 predecessors."""
        c = layer.self_conv
        u = F.linear(x, c.in_weight, c.in_bias)
        if c.glu:
            u = F.glu(u, -1)
        window = torch.cat([past, u], 1) if past is not None else u  # [B, K, d]
        b, d = u.shape[0], u.shape[2]
        if c.dynamic:
            w = F.linear(u, c.kernel_weight).view(b, 1, c.heads, c.kernel_size)
        else:
            w = c.kernel_weight.view(1, 1, c.heads, c.kernel_size)
        if c.weight_softmax:
            w = torch.softmax(w.float(), -1)
        # window [B, K, d] -> [B, H, d/H, K]; out = Σ_k w[h, k] · window[k]
        taps = window.transpose(1, 2).reshape(b, c.heads, d // c.heads, c.kernel_size)
        out = (taps * w.view(w.shape[0], c.heads, 1, c.kernel_size)).sum(-1).reshape(b, 1, d)
        return F.linear(out, c.out_weight, c.out_bias), (window[:, 1:] if past is not None else None)

    def forward(self, tokens, position, src_mask, *tensors):
        m = self.model
        n = len(m.decoder_layers)
        cross, states = tensors[: 2 * n], list(tensors[2 * n:])
        x = m.embeddings.embed_target(tokens.unsqueeze(1)) + m.positions.index_select(0, position.view(1))
        new_states = []
        for i, layer in enumerate(m.decoder_layers):
            if layer.self_attn is not None:
                k_past, v_past = states.pop(0), states.pop(0)
                out = {}

                def f(z, k_past=k_past, v_past=v_past, out=out):
                    y, out["k"], out["v"] = self.self_attention(layer, z, k_past, v_past)
                    return y
                x = layer.residual(x, layer.self_attn_norm, f)
                new_states += [out["k"], out["v"]]
            else:
                past = states.pop(0) if layer.self_conv.kernel_size > 1 else None
                out = {}

                def f(z, past=past, out=out):
                    y, out["s"] = self.convolution(layer, z, past)
                    return y
                x = layer.residual(x, layer.self_attn_norm, f)
                if out["s"] is not None:
                    new_states.append(out["s"])
            a = layer.cross_attn
            k, v = cross[2 * i], cross[2 * i + 1]
            x = layer.residual(x, layer.cross_attn_norm,
                               lambda z: a.attend(F.linear(z, a.q_weight, a.q_bias), k, v, src_mask))
            x = layer.residual(x, layer.ffn_norm, layer.ffn)
        h = m.decoder_norm(x) if m.decoder_norm is not None else x
        logits = m.logits(h[:, 0])
        return (logits, torch.log_softmax(logits.float(), -1), *new_states)


def state_specs(model):
    """Per decoder layer its cache: (name, shape with B and T symbolic) in graph order."""
    d, heads = model.config["d_model"], model.config["heads"]
    specs = []
    for i, layer in enumerate(model.decoder_layers):
        if layer.self_attn is not None:
            specs += [(f"self_k.{i}", ["B", heads, "T", d // heads]), (f"self_v.{i}", ["B", heads, "T", d // heads])]
        elif layer.self_conv.kernel_size > 1:
            specs.append((f"conv.{i}", ["B", layer.self_conv.kernel_size - 1, d]))
    return specs


def empty_state(shape, batch):
    return torch.zeros([batch if s == "B" else (0 if s == "T" else s) for s in shape])


def vocab_json(model_file):
    """The pieces of a SentencePiece model with score and type, for js/spm_bpe.js."""
    try:
        import sentencepiece
    except ImportError:
        sys.exit("yoke_onnx: the vocabulary JSON needs SentencePiece for Python (Debian: apt-get install python3-sentencepiece)")
    sp = sentencepiece.SentencePieceProcessor(model_file=model_file)
    pieces = []
    for i in range(sp.get_piece_size()):
        kind = ("unknown" if sp.is_unknown(i) else "control" if sp.is_control(i) else
                "unused" if sp.is_unused(i) else "byte" if sp.is_byte(i) else "normal")
        pieces.append([sp.id_to_piece(i), sp.get_score(i), kind])
    return {"model": os.path.basename(model_file), "pieces": pieces}


def export(src_dir, out_dir):
    tensors, metadata = yoke_torch.read_safetensors(os.path.join(src_dir, "model.safetensors"))
    if metadata.get("format") != "yoke" or "config" not in metadata:
        sys.exit(f"yoke_onnx: {src_dir}/model.safetensors was not written by `yoke export`")
    config = json.loads(metadata["config"])
    if config.get("task", "translate") == "lm":
        sys.exit("yoke_onnx: a language model; the ONNX export covers translation models (encoder + decoder step)")
    yoke_torch.depthwise_conv = shifted_depthwise_conv  # the encoder's convolution, export-friendly
    model = yoke_torch.YokeModel(keep_inference_tensors(tensors), metadata, src_dir)
    os.makedirs(out_dir, exist_ok=True)
    n = len(model.decoder_layers)
    cross_names = [f"cross_{kv}.{i}" for i in range(n) for kv in ("k", "v")]
    dh = config["d_model"] // config["heads"]

    src = torch.tensor([[5, 6, 7, yoke_torch.EOS], [8, yoke_torch.EOS, 0, 0]])
    enc_out = Encoder(model)(src)
    torch.onnx.export(Encoder(model), (src,), os.path.join(out_dir, "encoder.onnx"), opset_version=OPSET,
                      input_names=["src"], output_names=["src_mask"] + cross_names,
                      dynamic_axes={"src": {0: "B", 1: "S"}, "src_mask": {0: "B", 3: "S"},
                                    **{c: {0: "B", 2: "S"} for c in cross_names}})

    specs = state_specs(model)
    # Traced at step 1 (a cache of one position) so that T stays a dimension of the graph.
    states = [torch.randn([2 if s == "B" else (1 if s == "T" else s) for s in shape]) for _, shape in specs]
    args = (torch.tensor([9, 10]), torch.tensor(1), enc_out[0], *enc_out[1:], *states)
    names = [name for name, _ in specs]
    dyn = {"tokens": {0: "B"}, "src_mask": {0: "B", 3: "S"}, "logits": {0: "B"}, "log_probs": {0: "B"},
           **{c: {0: "B", 2: "S"} for c in cross_names}}
    for name, shape in specs:
        axes = {0: "B", **({2: "T"} if name.startswith("self_") else {})}
        dyn[name] = axes
        dyn["new_" + name] = {0: "B", **({2: "T1"} if name.startswith("self_") else {})}
    torch.onnx.export(DecoderStep(model), args, os.path.join(out_dir, "decoder.onnx"), opset_version=OPSET,
                      input_names=["tokens", "position", "src_mask"] + cross_names + names,
                      output_names=["logits", "log_probs"] + ["new_" + s for s in names], dynamic_axes=dyn)

    import onnx  # Debian: python3-onnx
    for f in ("encoder.onnx", "decoder.onnx"):
        onnx.checker.check_model(onnx.load(os.path.join(out_dir, f)))

    joint = os.path.exists(os.path.join(src_dir, "spm.model"))
    spm = {"src": "spm.model", "tgt": "spm.model"} if joint else {"src": "spm.src.model", "tgt": "spm.tgt.model"}
    for f in set(spm.values()):
        shutil.copy(os.path.join(src_dir, f), os.path.join(out_dir, f))
        shutil.copy(os.path.join(src_dir, f[:-len(".model")] + ".vocab"), os.path.join(out_dir, f[:-len(".model")] + ".vocab"))
    for side in ("src", "tgt"):
        with open(os.path.join(out_dir, f"vocab.{side}.json"), "w", encoding="utf-8") as f:
            json.dump(vocab_json(os.path.join(src_dir, spm[side])), f, ensure_ascii=False)
    settings = {
        "format": "yoke-onnx", "format_version": FORMAT_VERSION, "opset": OPSET,
        "arch": config.get("arch", "transformer"), "tie": config.get("tie"), "output": config.get("output"),
        "pad": yoke_torch.PAD, "unk": yoke_torch.UNK, "bos": yoke_torch.BOS, "eos": yoke_torch.EOS,
        "max_positions": model.max_positions, "d_model": config["d_model"], "heads": config["heads"],
        "tgt_vocab_size": config.get("tgt_vocab_size"),
        # yoke translate's defaults (src/decode/search.h): a hypothesis ranks by log p / (tokens + 1)^lenpen;
        # at most max_len_a·(source subwords + eos) + max_len_b tokens, never past max_positions − 1.
        "search": {"beam": 5, "lenpen": 1.0, "max_len_a": 1.2, "max_len_b": 10},
        "cross": cross_names, "cross_shape": ["B", config["heads"], "S", dh],
        "states": [{"name": name, "shape": shape} for name, shape in specs],
        "vocab": {"src": "vocab.src.json", "tgt": "vocab.tgt.json"}, "spm": spm,
        "from": {"config": config, "checkpoint": metadata.get("checkpoint"), "update": metadata.get("update")},
    }
    with open(os.path.join(out_dir, "onnx.json"), "w", encoding="utf-8") as f:
        json.dump(settings, f, indent=1)
    return settings


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2 or args[0].startswith("-"):
        sys.exit(__doc__)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # the tracer's notes on Python values it bakes in (shapes, the layer loop)
    for src, out in zip(args[::2], args[1::2]):
        export(src, out)
        print(f"yoke_onnx: {src} -> {out}/encoder.onnx, decoder.onnx (checked), onnx.json", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # a full disk, a missing or unwritable path: one line naming it, as yoke says it
        sys.exit(f"yoke_onnx: {str(e.filename) + ': ' if e.filename else ''}{e.strerror or e}")
