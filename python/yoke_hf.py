#!/usr/bin/env python3
"""A yoke translation model as a Hugging Face model directory (Marian or Blenderbot layout).

    python3 python/yoke_hf.py marian|blenderbot EXPORT_DIR OUT_DIR [ARCH EXPORT_DIR OUT_DIR ...]
                                                    # EXPORT_DIR: what `yoke export` wrote

`yoke export --format hf` chooses the architecture (src/store/hf_export.h: post-norm → Marian,
pre-norm → Blenderbot) and refuses what neither computes before it runs this. Writes into OUT_DIR
(docs/export.md, "Hugging Face"):
    config.json, generation_config.json      the architecture's keys (modeling_marian.py / modeling_blenderbot.py)
    model.safetensors                        the weights under the architecture's tensor names
    tokenizer.json, tokenizer_config.json, special_tokens_map.json
                                             the SentencePiece model as a `tokenizers` model
    source.spm, target.spm, vocab.json       the opus-mt layout: the SentencePiece models and piece → row
    (target_vocab.json)                      (the target's, with two tables in one: hf_tensors), what
                                             `yoke import --format hf` reads back
    onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx
                                             the graphs transformers.js loads for a seq2seq model

Everything the estimator and the sharing scheme compute is folded into standard layers: the input
rows each role reads (l2's normalized rows), the output layer as lm_head (rows over ‖w‖ for l2 and
cosine, over ‖w‖² for square) plus final_logits_bias (distance's −½‖w‖²), a factored or
cross-layer model written out whole. The ONNX graphs are traced from the *written* tensors through
a small implementation of the architecture's forward pass (HFModel below), so that running them
checks the layout, not yoke's own code. Needs Debian's python3-torch, python3-onnx and
python3-sentencepiece.
"""
import json
import os
import shutil
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yoke_torch  # noqa: E402

OPSET = 13
ARCHS = {
    # model_type: (architectures entry, pre-norm with final encoder/decoder norms)
    "marian": ("MarianMTModel", False),
    "blenderbot": ("BlenderbotForConditionalGeneration", True),
}
SPECIAL = {yoke_torch.PAD: "<pad>", yoke_torch.UNK: "<unk>", yoke_torch.BOS: "<s>", yoke_torch.EOS: "</s>"}


# ---- the weights under the architecture's names ----------------------------------------------------

def input_rows(model, matrix):
    """The rows an input lookup reads, before the √d scale (yoke_torch.Embeddings._input)."""
    w = matrix.full().detach().float()
    if model.embeddings.estimator == "l2":
        w = w / w.norm(2, dim=-1, keepdim=True).clamp_min(yoke_torch.NORM_FLOOR)
    return w


def output_layer(model):
    """(lm_head [V, d], final_logits_bias [V]) with h·lm_headᵀ + bias = yoke's logits (yoke_torch.Embeddings.logits)."""
    u = model.embeddings.output_matrix
    w = u.full().detach().float()
    # The norms of the written rows (yoke computes a factored matrix's from A·(B·Bᵀ)·Aᵀ: the same up to
    # rounding), so that l2's output rows are its input rows, bit for bit, and the tie is declared.
    norms = w.norm(2, dim=1)
    e = model.embeddings.estimator
    bias = torch.zeros(w.shape[0])
    if e in ("l2", "cosine"):
        w = w / norms.clamp_min(yoke_torch.NORM_FLOOR)[:, None]
    elif e == "square":
        w = w / norms.square().clamp_min(yoke_torch.NORM_FLOOR * yoke_torch.NORM_FLOOR)[:, None]
    elif e == "distance":
        bias = -0.5 * norms.square()
    return w, bias


def attention_tensors(prefix, a, d):
    """yoke's q and fused k|v projections as the four HF projections; keys have no bias in yoke."""
    kv_w, kv_b = a.kv_weight.detach(), a.kv_bias.detach()
    return {
        f"{prefix}.q_proj.weight": a.q_weight.detach(), f"{prefix}.q_proj.bias": a.q_bias.detach(),
        f"{prefix}.k_proj.weight": kv_w[:d], f"{prefix}.k_proj.bias": kv_b[:d],
        f"{prefix}.v_proj.weight": kv_w[d:], f"{prefix}.v_proj.bias": kv_b[d:],
        f"{prefix}.out_proj.weight": a.out_weight.detach(), f"{prefix}.out_proj.bias": a.out_bias.detach(),
    }


def norm_tensors(prefix, n):
    return {f"{prefix}.weight": n.weight.detach(), f"{prefix}.bias": n.bias.detach()}


def layer_tensors(prefix, layer, d):
    t = {}
    t.update(attention_tensors(prefix + ".self_attn", layer.self_attn, d))
    t.update(norm_tensors(prefix + ".self_attn_layer_norm", layer.self_attn_norm))
    if layer.cross_attn is not None:
        t.update(attention_tensors(prefix + ".encoder_attn", layer.cross_attn, d))
        t.update(norm_tensors(prefix + ".encoder_attn_layer_norm", layer.cross_attn_norm))
    f = layer.ffn
    t.update({f"{prefix}.fc1.weight": f.w1.detach(), f"{prefix}.fc1.bias": f.b1.detach(),
              f"{prefix}.fc2.weight": f.w2.detach(), f"{prefix}.fc2.bias": f.b2.detach()})
    t.update(norm_tensors(prefix + ".final_layer_norm", layer.ffn_norm))
    return t


def hf_tensors(model, arch, joint):
    """The state dict of MarianMTModel / BlenderbotForConditionalGeneration; whether lm_head is the
    decoder's input embedding (tie_word_embeddings) and the encoder's is the decoder's; and the id of
    the target's first piece.

    That id is 0 where the architecture holds the encoder's and the decoder's input rows as they
    are: one vocabulary (`joint`) with one input table (Blenderbot, Marian), or two (Marian). Else
    (separate vocabularies; Blenderbot with tie none or decoder, yoke's default) both read one table
    of two blocks: the source's rows, then the target's from id Vs. lm_head repeats the source
    block, so that it is that table where yoke's output rows are its target input rows (the tie
    holds), and final_logits_bias is −inf there: no source row is ever emitted. Every logit of a
    target piece is yoke's, and the softmax over the blocks is yoke's over the target vocabulary."""
    d = model.config["d_model"]
    e = model.embeddings
    enc_embed, dec_embed = input_rows(model, e.source_matrix), input_rows(model, e.target_matrix)
    lm_head, bias = output_layer(model)
    shared_inputs = joint and torch.equal(enc_embed, dec_embed)
    first_target = 0
    if not joint or (arch == "blenderbot" and not shared_inputs):
        first_target = enc_embed.shape[0]
        lm_head = torch.cat([enc_embed, lm_head])
        bias = torch.cat([torch.full((first_target,), float("-inf")), bias])
        enc_embed = dec_embed = torch.cat([enc_embed, dec_embed])
        shared_inputs = True
    t = {"model.shared.weight": enc_embed, "model.encoder.embed_tokens.weight": enc_embed,
         "model.decoder.embed_tokens.weight": dec_embed,
         "model.encoder.embed_positions.weight": model.positions.detach().float(),
         "model.decoder.embed_positions.weight": model.positions.detach().float(),
         "lm_head.weight": lm_head, "final_logits_bias": bias.unsqueeze(0)}
    for i, layer in enumerate(model.encoder_layers):
        t.update(layer_tensors(f"model.encoder.layers.{i}", layer, d))
    for i, layer in enumerate(model.decoder_layers):
        t.update(layer_tensors(f"model.decoder.layers.{i}", layer, d))
    if ARCHS[arch][1]:
        t.update(norm_tensors("model.encoder.layer_norm", model.encoder_norm))
        t.update(norm_tensors("model.decoder.layer_norm", model.decoder_norm))
    tied = torch.equal(lm_head, dec_embed) and (shared_inputs or arch == "marian")
    # One storage per tensor: safetensors refuses shared memory, HF re-ties on load.
    return ({k: v.detach().float().contiguous().clone() for k, v in t.items()}, tied, shared_inputs,
            first_target)


# ---- the architecture's forward pass over those names (traced into ONNX) ---------------------------

class HFModel(torch.nn.Module):
    """MarianMTModel (post-norm) or BlenderbotForConditionalGeneration (pre-norm, final norms), eval
    mode, as their modeling files compute it: embed·scale + positions[past:past+T], attention with
    q·kᵀ·(d/H)^-½ and additive masks, ReLU feed-forward, lm_head + final_logits_bias."""

    def __init__(self, tensors, config, arch):
        super().__init__()
        self.t = {k: v for k, v in tensors.items()}
        self.pre_norm = ARCHS[arch][1]
        self.heads = config["encoder_attention_heads"]
        self.scale = config["d_model"] ** 0.5 if config["scale_embedding"] else 1.0
        self.n_enc, self.n_dec = config["encoder_layers"], config["decoder_layers"]

    def ln(self, prefix, x):
        w = self.t[prefix + ".weight"]
        return F.layer_norm(x, (w.shape[0],), w, self.t[prefix + ".bias"], 1e-5)

    def lin(self, prefix, x):
        return F.linear(x, self.t[prefix + ".weight"], self.t[prefix + ".bias"])

    def split(self, x):
        b, n, d = x.shape
        return x.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def attend(self, prefix, q_in, k, v, mask):
        q = self.split(self.lin(prefix + ".q_proj", q_in))
        w = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * (q.shape[-1] ** -0.5) + mask, -1)
        ctx = torch.matmul(w, v).transpose(1, 2)
        return self.lin(prefix + ".out_proj", ctx.reshape(ctx.shape[0], ctx.shape[1], -1))

    def sublayer(self, norm, x, f):
        return x + f(self.ln(norm, x)) if self.pre_norm else self.ln(norm, x + f(x))

    def ffn(self, prefix, x):
        return self.lin(prefix + ".fc2", torch.relu(self.lin(prefix + ".fc1", x)))

    @staticmethod
    def key_mask(attention_mask):
        """[B, S] of 1/0 → additive [B, 1, 1, S] of 0/−inf."""
        m = attention_mask[:, None, None, :]
        return torch.where(m == 0, torch.tensor(float("-inf")), torch.tensor(0.0))

    def encode(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        x = F.embedding(input_ids, self.t["model.encoder.embed_tokens.weight"]) * self.scale
        x = x + self.t["model.encoder.embed_positions.weight"][:s]
        mask = self.key_mask(attention_mask)
        for i in range(self.n_enc):
            p = f"model.encoder.layers.{i}"

            def self_attn(z, p=p):
                k, v = self.split(self.lin(p + ".self_attn.k_proj", z)), self.split(self.lin(p + ".self_attn.v_proj", z))
                return self.attend(p + ".self_attn", z, k, v, mask)
            x = self.sublayer(p + ".self_attn_layer_norm", x, self_attn)
            x = self.sublayer(p + ".final_layer_norm", x, lambda z, p=p: self.ffn(p, z))
        return self.ln("model.encoder.layer_norm", x) if self.pre_norm else x

    def decode(self, input_ids, encoder_attention_mask, encoder_hidden_states, past):
        """input_ids [B, T] after `past` positions; past: per layer (key, value) [B, H, P, d/H].
        Returns logits [B, T, V] and per layer the keys and values of all P + T positions."""
        t, p0 = input_ids.shape[1], past[0][0].shape[2]
        positions = torch.arange(t) + p0
        x = F.embedding(input_ids, self.t["model.decoder.embed_tokens.weight"]) * self.scale
        x = x + self.t["model.decoder.embed_positions.weight"].index_select(0, positions)
        # Query i (position p0 + i) sees keys 0 .. p0 + i.
        keys = torch.arange(t + p0)
        causal = torch.where(keys[None, :] > positions[:, None], torch.tensor(float("-inf")), torch.tensor(0.0))
        cross_mask = self.key_mask(encoder_attention_mask)
        present = []
        for i in range(self.n_dec):
            p = f"model.decoder.layers.{i}"
            out = {}

            def self_attn(z, p=p, i=i, out=out):
                k = torch.cat([past[i][0], self.split(self.lin(p + ".self_attn.k_proj", z))], 2)
                v = torch.cat([past[i][1], self.split(self.lin(p + ".self_attn.v_proj", z))], 2)
                out["k"], out["v"] = k, v
                return self.attend(p + ".self_attn", z, k, v, causal)

            def cross_attn(z, p=p):
                k = self.split(self.lin(p + ".encoder_attn.k_proj", encoder_hidden_states))
                v = self.split(self.lin(p + ".encoder_attn.v_proj", encoder_hidden_states))
                return self.attend(p + ".encoder_attn", z, k, v, cross_mask)
            x = self.sublayer(p + ".self_attn_layer_norm", x, self_attn)
            x = self.sublayer(p + ".encoder_attn_layer_norm", x, cross_attn)
            x = self.sublayer(p + ".final_layer_norm", x, lambda z, p=p: self.ffn(p, z))
            present.append((out["k"], out["v"]))
        if self.pre_norm:
            x = self.ln("model.decoder.layer_norm", x)
        logits = F.linear(x, self.t["lm_head.weight"]) + self.t["final_logits_bias"]
        return logits, present


class EncoderGraph(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m.encode(input_ids, attention_mask)


class DecoderGraph(torch.nn.Module):
    """transformers.js's decoder_model_merged without the use_cache_branch If: the cross-attention's
    keys and values are computed from encoder_hidden_states at every step (transformers.js passes
    it every step and feeds only the inputs a graph declares).

    One addition to the architecture: where the input token is eos, the logits are 0 for eos and
    −inf for every other token, so that a row that has ended goes on ending. transformers.js's
    generate() (4.3.1, models/modeling_utils.js) keeps no record of finished rows: each step it
    appends every row's argmax, and its EosTokenCriteria stops only when the *last* token of every
    row is eos at once. Python transformers pads finished rows; transformers.js feeds them back, and
    a model that does not predict eos after eos would write on after its end in any batch whose
    rows end at different steps. Nothing else reads a logit whose input is eos (a target's last
    input precedes its eos), and Python transformers reads model.safetensors, not these graphs."""

    def __init__(self, m, vocab_size, eos):
        super().__init__()
        self.m = m
        self.eos = eos
        self.after_eos = torch.full((vocab_size,), float("-inf"))
        self.after_eos[eos] = 0.0

    def forward(self, input_ids, encoder_attention_mask, encoder_hidden_states, *past_flat):
        past = [(past_flat[2 * i], past_flat[2 * i + 1]) for i in range(len(past_flat) // 2)]
        logits, present = self.m.decode(input_ids, encoder_attention_mask, encoder_hidden_states, past)
        logits = torch.where((input_ids == self.eos).unsqueeze(-1), self.after_eos, logits)
        return (logits, *[x for kv in present for x in kv])


def export_onnx(tensors, config, arch, out_dir):
    m = HFModel(tensors, config, arch)
    onnx_dir = os.path.join(out_dir, "onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    ids = torch.tensor([[5, 6, 7, yoke_torch.EOS], [8, yoke_torch.EOS, 0, 0]])
    mask = (ids != yoke_torch.PAD).long()
    torch.onnx.export(EncoderGraph(m), (ids, mask), os.path.join(onnx_dir, "encoder_model.onnx"), opset_version=OPSET,
                      input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                      dynamic_axes={"input_ids": {0: "batch_size", 1: "encoder_sequence_length"},
                                    "attention_mask": {0: "batch_size", 1: "encoder_sequence_length"},
                                    "last_hidden_state": {0: "batch_size", 1: "encoder_sequence_length"}})
    memory = m.encode(ids, mask)
    h, dh = config["decoder_attention_heads"], config["d_model"] // config["decoder_attention_heads"]
    # Traced with a cache of one position and two new tokens, so that both stay dimensions.
    past = [torch.randn(2, h, 1, dh) for _ in range(2 * config["decoder_layers"])]
    names_in, names_out = [], []
    dyn = {"input_ids": {0: "batch_size", 1: "decoder_sequence_length"},
           "encoder_attention_mask": {0: "batch_size", 1: "encoder_sequence_length"},
           "encoder_hidden_states": {0: "batch_size", 1: "encoder_sequence_length"},
           "logits": {0: "batch_size", 1: "decoder_sequence_length"}}
    for i in range(config["decoder_layers"]):
        for kv in ("key", "value"):
            names_in.append(f"past_key_values.{i}.decoder.{kv}")
            names_out.append(f"present.{i}.decoder.{kv}")
            dyn[names_in[-1]] = {0: "batch_size", 2: "past_decoder_sequence_length"}
            dyn[names_out[-1]] = {0: "batch_size", 2: "past_decoder_sequence_length + 1"}
    graph = DecoderGraph(m, tensors["lm_head.weight"].shape[0], config["eos_token_id"])
    torch.onnx.export(graph, (torch.tensor([[9, 10], [11, 12]]), mask, memory, *past),
                      os.path.join(onnx_dir, "decoder_model_merged.onnx"), opset_version=OPSET,
                      input_names=["input_ids", "encoder_attention_mask", "encoder_hidden_states"] + names_in,
                      output_names=["logits"] + names_out, dynamic_axes=dyn)
    import onnx  # Debian: python3-onnx
    for f in ("encoder_model.onnx", "decoder_model_merged.onnx"):
        onnx.checker.check_model(onnx.load(os.path.join(onnx_dir, f)))


# ---- the tokenizer -----------------------------------------------------------------------------------

def varint(data, i):
    value, shift = 0, 0
    while True:
        b = data[i]
        value |= (b & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if not b & 0x80:
            return value, i


def proto_fields(data):
    """(field number, wire type, value) of a protobuf message: varints as ints, lengths as bytes."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 2:
            n, i = varint(data, i)
            value, i = data[i:i + n], i + n
        elif wire in (1, 5):
            value, i = data[i:i + (8 if wire == 1 else 4)], i + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, wire, value


def spm_model_type(sp):
    """ModelProto.trainer_spec (field 2) .model_type (field 3): 1 unigram, 2 BPE; read from the
    serialized model with the few lines above rather than with python3-protobuf's generated module."""
    for number, wire, value in proto_fields(sp.serialized_model_proto()):
        if number == 2 and wire == 2:
            for n, w, v in proto_fields(value):
                if n == 3 and w == 0:
                    return {1: "unigram", 2: "bpe"}.get(v, f"type {v}")
    return "unigram"  # the proto's default


def load_spm(spm_file):
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=spm_file)
    for i, name in SPECIAL.items():
        if sp.id_to_piece(i) != name:
            sys.exit(f"yoke_hf: {spm_file}: piece {i} is '{sp.id_to_piece(i)}', not yoke's '{name}'")
    return sp


# The target block's pieces in tokenizer.json (hf_tensors: ids from Vs on) are its pieces behind
# this private-use character, which the normalizer removes from any input and the decoder from the
# output: a source text never matches one (every piece it meets is the source's, the unknown one
# too), and each decodes as its piece.
TARGET_MARK = "\ue000"


def tokenizer_json(src_spm, tgt_spm, first_target):
    """SentencePiece as a `tokenizers` model: unigram as Unigram, BPE as BPE. SentencePiece merges, again and again, the adjacent
    pair whose joined piece scores highest; BPE with merges ranked by the joined piece's score (every
    split of a piece into two pieces of the vocabulary, as transformers' own converter lists them)
    applies the same merges in the same order. Normalization: what nmt_nfkc does to text (NFKC,
    control characters dropped, whitespace runs as one space, none at the ends; js/spm_bpe.js).
    With a target block (first_target > 0) its pieces and specials follow, marked (TARGET_MARK)."""
    sp = load_spm(src_spm)
    n = sp.get_piece_size()
    kind = spm_model_type(sp)
    if kind not in ("bpe", "unigram"):
        sys.exit(f"yoke_hf: {src_spm}: a SentencePiece {kind} model; the tokenizer is written for bpe and unigram")
    vocab = {sp.id_to_piece(i): i for i in range(n)}
    score = {sp.id_to_piece(i): sp.get_score(i) for i in range(n) if not (sp.is_control(i) or sp.is_unknown(i))}
    merges = []
    for piece, s in score.items():
        chars = list(piece)
        for cut in range(1, len(chars)):
            left, right = "".join(chars[:cut]), "".join(chars[cut:])
            if left in score and right in score:
                merges.append((-s, vocab[piece], vocab[left], vocab[right], left, right))
    merges.sort()
    # Unigram: Viterbi over the pieces' log probabilities, as SentencePiece's unigram model.
    pieces = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(n)]
    specials = [(i, name) for i, name in sorted(SPECIAL.items())]
    target_mark = []
    if first_target:
        tp = load_spm(tgt_spm)
        # Score 0: never matched, and no lower than the source's least, from which Unigram derives
        # the unknown piece's score.
        for i in range(tp.get_piece_size()):
            vocab[TARGET_MARK + tp.id_to_piece(i)] = first_target + i
            pieces.append([TARGET_MARK + tp.id_to_piece(i), 0.0])
        specials += [(first_target + i, TARGET_MARK + name) for i, name in sorted(SPECIAL.items())]
        target_mark = [{"type": "Replace", "pattern": {"String": TARGET_MARK}, "content": ""}]
    bpe = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
           "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": False, "ignore_merges": False,
           "vocab": vocab, "merges": [[m[4], m[5]] for m in merges]}
    unigram = {"type": "Unigram", "unk_id": yoke_torch.UNK, "byte_fallback": False, "vocab": pieces}
    space = "\u2581"
    metaspace = {"type": "Metaspace", "replacement": space, "prepend_scheme": "always", "split": True}
    controls = "[\u0000-\u0008\u000b\u000e-\u001f\u007f" + (TARGET_MARK if first_target else "") + "]"
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": name, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, name in specials],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKC"},
            {"type": "Replace", "pattern": {"Regex": controls}, "content": ""},
            {"type": "Replace", "pattern": {"Regex": "[\\s\u200b]+"}, "content": " "},
            {"type": "Strip", "strip_left": True, "strip_right": True}]},
        "pre_tokenizer": metaspace,
        # yoke ends every source with eos (text/vocab.h)
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [yoke_torch.EOS], "tokens": ["</s>"]}}},
        "decoder": {"type": "Sequence", "decoders": target_mark + [metaspace]} if target_mark else metaspace,
        "model": bpe if kind == "bpe" else unigram,
    }


def opus_vocab(spm_file, first_id=0):
    """vocab.json (target_vocab.json) of the opus-mt layout: each piece's row of the embedding."""
    sp = load_spm(spm_file)
    return {sp.id_to_piece(i): first_id + i for i in range(sp.get_piece_size())}


# ---- the directory ---------------------------------------------------------------------------------

def hf_config(model, arch, tied, shared_inputs, vocab_size, first_target):
    c = model.config
    t = first_target  # the target's special ids are its pieces' rows
    d, heads = c["d_model"], c["heads"]
    cfg = {
        "architectures": [ARCHS[arch][0]], "model_type": arch, "is_encoder_decoder": True,
        "vocab_size": vocab_size, "d_model": d,
        "encoder_layers": c["encoder_layers"], "decoder_layers": c["decoder_layers"],
        "encoder_attention_heads": heads, "decoder_attention_heads": heads,
        "encoder_ffn_dim": c["ffn_dim"], "decoder_ffn_dim": c["ffn_dim"],
        "activation_function": "relu", "max_position_embeddings": model.max_positions,
        "scale_embedding": c.get("embed_scale", "sqrt") == "sqrt",
        "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0,
        "encoder_layerdrop": 0.0, "decoder_layerdrop": 0.0, "init_std": 0.02, "use_cache": True,
        "pad_token_id": t + yoke_torch.PAD, "bos_token_id": t + yoke_torch.BOS, "eos_token_id": t + yoke_torch.EOS,
        "decoder_start_token_id": t + yoke_torch.BOS, "forced_eos_token_id": None,
        "tie_word_embeddings": tied, "torch_dtype": "float32",
        "yoke": {"tie": c.get("tie"), "output": c.get("output"), "norm": c.get("norm", "pre"),
                 "factored_rank": c.get("factored_rank", 0), "cross_layer": c.get("cross_layer", False),
                 "first_target_id": first_target},
    }
    if arch == "marian":
        cfg.update({"decoder_vocab_size": vocab_size, "share_encoder_decoder_embeddings": shared_inputs,
                    "static_position_embeddings": True})
    else:
        cfg.update({"encoder_no_repeat_ngram_size": 0, "no_repeat_ngram_size": 0, "layernorm_variant": "prelayernorm"})
    return cfg


def generation_config(model, first_target):
    """yoke translate's defaults where the library has them (src/decode/search.h); pad and bos are
    never emitted. What it cannot say: yoke's per-sentence limit of a·|x| + b tokens (max_length is
    the positions' limit instead), and its length normalization counts eos."""
    t = first_target
    return {"decoder_start_token_id": t + yoke_torch.BOS, "bos_token_id": t + yoke_torch.BOS,
            "eos_token_id": t + yoke_torch.EOS, "pad_token_id": t + yoke_torch.PAD, "forced_eos_token_id": None,
            "bad_words_ids": [[t + yoke_torch.PAD], [t + yoke_torch.BOS]], "num_beams": 5, "length_penalty": 1.0,
            "max_length": model.max_positions, "min_length": 0, "no_repeat_ngram_size": 0,
            "encoder_no_repeat_ngram_size": 0, "do_sample": False}


def export(src_dir, out_dir, arch):
    tensors, metadata = yoke_torch.read_safetensors(os.path.join(src_dir, "model.safetensors"))
    if metadata.get("format") != "yoke" or "config" not in metadata:
        sys.exit(f"yoke_hf: {src_dir}/model.safetensors was not written by `yoke export`")
    src_spm, tgt_spm = (os.path.join(src_dir, f) for f in yoke_torch.spm_files(src_dir))
    joint = src_spm == tgt_spm
    model = yoke_torch.YokeModel({n: t for n, t in tensors.items() if not n.startswith("bridge.")}, metadata, src_dir)
    hf, tied, shared_inputs, first_target = hf_tensors(model, arch, joint)
    os.makedirs(out_dir, exist_ok=True)
    vocab_size = hf["lm_head.weight"].shape[0]
    config = hf_config(model, arch, tied, shared_inputs, vocab_size, first_target)
    yoke_torch.write_safetensors(os.path.join(out_dir, "model.safetensors"), hf, {"format": "pt"})
    t = first_target
    target = lambda i: (TARGET_MARK if t else "") + SPECIAL[i]  # noqa: E731
    files = {"config.json": config, "generation_config.json": generation_config(model, first_target),
             "tokenizer.json": tokenizer_json(src_spm, tgt_spm, first_target),
             "tokenizer_config.json": {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": model.max_positions,
                                       "clean_up_tokenization_spaces": False, "padding_side": "right",
                                       "pad_token": "<pad>", "unk_token": "<unk>", "bos_token": target(yoke_torch.BOS),
                                       "eos_token": target(yoke_torch.EOS)},
             "special_tokens_map.json": {"pad_token": "<pad>", "unk_token": "<unk>",
                                         "bos_token": target(yoke_torch.BOS), "eos_token": target(yoke_torch.EOS)}}
    # The opus-mt layout too (MarianTokenizer's files), which `yoke import --format hf` reads back:
    # the SentencePiece models and vocab.json, piece → row, here in SentencePiece order; with a
    # target block, target_vocab.json gives the target's rows (MarianTokenizer's separate_vocabs).
    shutil.copyfile(src_spm, os.path.join(out_dir, "source.spm"))
    shutil.copyfile(tgt_spm, os.path.join(out_dir, "target.spm"))
    files["vocab.json"] = opus_vocab(src_spm)
    if first_target:
        files["target_vocab.json"] = opus_vocab(tgt_spm, first_target)
        files["tokenizer_config.json"]["separate_vocabs"] = True
    for name, content in files.items():
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(content, f, ensure_ascii=False,
                      indent=None if name in ("tokenizer.json", "vocab.json", "target_vocab.json") else 1)
    export_onnx(hf, config, arch, out_dir)


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3 or args[0].startswith("-"):
        sys.exit(__doc__)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # the tracer's notes on Python values it bakes in (shapes, the layer loop)
    for arch, src, out in zip(args[::3], args[1::3], args[2::3]):
        if arch not in ARCHS:
            sys.exit(f"yoke_hf: architecture '{arch}': one of {', '.join(sorted(ARCHS))}")
        with torch.no_grad():
            export(src, out, arch)
        print(f"yoke_hf: {src} -> {out} ({arch}: {', '.join(sorted(os.listdir(out)))})", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # a full disk, a missing or unwritable path: one line naming it, as yoke says it
        sys.exit(f"yoke_hf: {str(e.filename) + ': ' if e.filename else ''}{e.strerror or e}")
