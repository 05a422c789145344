#!/usr/bin/env python3
"""Runs a model that `yoke export --format ctranslate2` wrote in CTranslate2 (its Python package).

    python3 python/yoke_ct2.py translate DIR [--input FILE] [--beam N] [--lenpen A] [--max-len-a A]
                               [--max-len-b B] [--compute-type float32|int8] [--inter-threads N]
                               [--intra-threads N] [--batch N] [--max-decoding-length N] [--lengths FILE]
    python3 python/yoke_ct2.py score DIR PAIRS OUT [DIR PAIRS OUT ...]   # log-probs of given targets (tests)
    python3 python/yoke_ct2.py resave DIR OUT [DIR OUT ...]   # model.bin again through CTranslate2's own writer (tests)

translate: text in (one sentence a line, SentencePiece-encoded with DIR's model), text out, as
`yoke translate` prints it. Each sentence gets yoke's length limit, trunc(a·(subwords + 1) + b)
tokens within the positions (max_decoding_length, one per batch in CTranslate2: sentences are
batched by their limit), and return_end_token, so that the length penalty counts eos as yoke's
does (log p / (tokens + 1)^lenpen); --max-decoding-length N gives every sentence N instead.
Defaults: the model's decoding settings (config.json's "yoke"). Prints to stderr "translated N
sentences in S s (R sentences/s)", encoding and decoding included, loading excluded.

score (for tests/torch/test_ctranslate2_export.cpp): PAIRS has one line per pair, "SRC_IDS<TAB>TGT_IDS"
(yoke ids without bos/eos; a language model's lines are one column: the ids after the start token,
which is bos); OUT gets per line the log-probabilities of the target tokens and eos, from
Translator.score_batch (Generator.score_batch for a language model).

score and resave take several models in one call: the test checks two dozen, and each process
spends a second importing CTranslate2. A model that fails stops the call, naming it.

resave (for the same test): rebuilds the model's TransformerSpec from the variables of DIR/model.bin
and saves it with CTranslate2's own code (spec.validate, spec.optimize, spec.save): a directory
equal byte for byte to DIR shows that yoke writes the spec's layout and serialization.

CTranslate2 comes from any `import ctranslate2` (PYTHONPATH); with the Debian runtime packages
libdnnl2 libopenblas0 libgomp1 python3-numpy for the build in ../shared/peers/ctranslate2.
"""
import argparse
import ctypes
import glob
import importlib.util
import json
import os
import re
import struct
import sys
import time
import traceback


def import_ctranslate2():
    """`import ctranslate2`; where its library's symlinks were copied as small text files naming
    their target (a copy that does not keep links), the versioned library is loaded first, which the
    extension then finds by its soname."""
    try:
        import ctranslate2
        return ctranslate2
    except ImportError as first:
        spec = importlib.util.find_spec("ctranslate2")
        if spec is None or spec.origin is None:
            raise
        libs = sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "..", "..", "lib", "libctranslate2.so.*.*.*")))
        if not libs:
            raise first
        for name in [k for k in sys.modules if k == "ctranslate2" or k.startswith("ctranslate2.")]:
            del sys.modules[name]
        ctypes.CDLL(libs[-1], mode=ctypes.RTLD_GLOBAL)
        import ctranslate2
        return ctranslate2


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        return json.load(f)


def spm_path(model_dir, side):
    joint = os.path.join(model_dir, "spm.model")
    return joint if os.path.exists(joint) else os.path.join(model_dir, f"spm.{side}.model")


def yoke_limit(subwords, a, b, max_positions):
    """search_steps.cpp's LengthLimit: trunc(a·|x| + b) for |x| = subwords + eos, in [1, positions − 1]."""
    return min(max(int(a * (subwords + 1) + b), 1), max_positions - 1)


def translate(args):
    ct2 = import_ctranslate2()
    import sentencepiece as spm
    config = read_config(args.model)
    yoke = config.get("yoke", {})
    decoding = yoke.get("decoding", {})
    beam = args.beam if args.beam is not None else decoding.get("beam", 5)
    lenpen = args.lenpen if args.lenpen is not None else decoding.get("lenpen", 1.0)
    a = args.max_len_a if args.max_len_a is not None else decoding.get("max_len_a", 1.2)
    b = args.max_len_b if args.max_len_b is not None else decoding.get("max_len_b", 10)
    positions = yoke.get("max_positions", 1024)
    src_sp = spm.SentencePieceProcessor(model_file=spm_path(args.model, "src"))
    tgt_sp = spm.SentencePieceProcessor(model_file=spm_path(args.model, "tgt"))
    translator = ct2.Translator(args.model, device="cpu", compute_type=args.compute_type,
                                inter_threads=args.inter_threads, intra_threads=args.intra_threads)
    with open(args.input, encoding="utf-8") if args.input != "-" else sys.stdin as f:
        lines = f.read().splitlines()
    start = time.perf_counter()
    pieces = [src_sp.encode(line, out_type=str) for line in lines]
    # Sentences with one limit decode together, in input order within it.
    groups, yoke_limit_of = {}, []
    for i, p in enumerate(pieces):
        limit = args.max_decoding_length or yoke_limit(len(p), a, b, positions)
        groups.setdefault(limit, []).append(i)
        yoke_limit_of.append(limit)
    out, lengths = [None] * len(lines), [None] * len(lines)
    eos = config["eos_token"]
    # Every group submitted before any is waited for: with inter_threads > 1, batches run at once.
    pending = [(rows, translator.translate_batch([pieces[i] for i in rows], beam_size=beam, length_penalty=lenpen,
                                                 max_decoding_length=limit, return_end_token=True,
                                                 max_batch_size=args.batch, asynchronous=True))
               for limit, rows in sorted(groups.items())]
    for rows, results in pending:
        for i, r in zip(rows, results):
            limit = yoke_limit_of[i]
            tokens = r.result().hypotheses[0]
            if tokens and tokens[-1] == eos:
                tokens = tokens[:-1]
            out[i] = tgt_sp.decode_pieces(tokens)
            lengths[i] = f"{limit} {len(tokens)}"
    seconds = time.perf_counter() - start
    sys.stdout.write("".join(line + "\n" for line in out))
    if args.lengths:
        with open(args.lengths, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lengths))
    rate = len(lines) / seconds if seconds > 0 else 0.0
    print(f"translated {len(lines)} sentences in {seconds:.3f} s ({rate:.1f} sentences/s)", file=sys.stderr)


def vocabulary(model_dir, name):
    path = os.path.join(model_dir, f"{name}_vocabulary.json")
    if not os.path.exists(path):
        path = os.path.join(model_dir, "shared_vocabulary.json")
    if not os.path.exists(path):
        path = os.path.join(model_dir, "vocabulary.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def score(model, pairs, out):
    ct2 = import_ctranslate2()
    config = read_config(model)
    src_vocab, tgt_vocab = vocabulary(model, "source"), vocabulary(model, "target")
    rows = [line.split("\t") for line in open(pairs, encoding="utf-8").read().splitlines()]
    as_tokens = lambda ids, vocab: [vocab[int(i)] for i in ids.split()]
    if config.get("yoke", {}).get("task") == "lm":
        generator = ct2.Generator(model, device="cpu", intra_threads=1)
        tokens = [[config["bos_token"]] + as_tokens(r[0], tgt_vocab) + [config["eos_token"]] for r in rows]
        results = generator.score_batch(tokens)
    else:
        translator = ct2.Translator(model, device="cpu", intra_threads=1)
        results = translator.score_batch([as_tokens(r[0], src_vocab) for r in rows],
                                         [as_tokens(r[1], tgt_vocab) for r in rows])
    with open(out, "w", encoding="utf-8") as f:
        for r in results:
            f.write(" ".join(f"{p:.9g}" for p in r.log_probs) + "\n")


def read_model_bin(path):
    """model.bin's variables (aliases resolved) as numpy arrays, and its spec name and revision."""
    import numpy as np
    dtypes = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32}
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return values

    def string():
        nonlocal pos
        (n,) = take("H")
        s = data[pos:pos + n - 1].decode("utf-8")
        pos += n
        return s

    (version,) = take("I")
    spec, (revision,) = string(), take("I")
    variables = {}
    for _ in range(take("I")[0]):
        name = string()
        (rank,) = take("B")
        shape = take(f"{rank}I")
        (dtype,) = take("B")
        (size,) = take("I")
        variables[name] = np.frombuffer(data, dtype=dtypes[dtype], count=size // np.dtype(dtypes[dtype]).itemsize,
                                        offset=pos).reshape(shape).copy()
        pos += size
    for _ in range(take("I")[0]):
        alias, name = string(), string()
        variables[alias] = variables[name]
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} bytes after the aliases")
    return version, spec, revision, variables


def resave(model, out):
    import_ctranslate2()
    from ctranslate2.specs import model_spec, transformer_spec
    config = read_config(model)
    version, name, revision, variables = read_model_bin(os.path.join(model, "model.bin"))
    assert version == model_spec.CURRENT_BINARY_VERSION, version
    layers = lambda stack: len({k.split("/")[1] for k in variables if re.match(stack + r"/layer_\d+/", k)})
    pre_norm = bool(variables["decoder/pre_norm"])
    heads = int(variables["decoder/num_heads"])
    if name == "TransformerDecoderSpec":
        spec = transformer_spec.TransformerDecoderModelSpec.from_config(layers("decoder"), heads, pre_norm=pre_norm)
    else:
        spec = transformer_spec.TransformerSpec.from_config((layers("encoder"), layers("decoder")), heads,
                                                            pre_norm=pre_norm)
    assert (spec.name, spec.revision) == (name, revision), (spec.name, spec.revision, name, revision)
    import numpy as np
    for key, value in variables.items():
        scope, attr = model_spec._parent_scope(key)
        layer = model_spec.index_spec(spec, scope)
        # An attribute the spec sets itself (num_heads, pre_norm, ...) must have its dtype (bools
        # are written as int8).
        default = getattr(layer, attr, None)
        if default is not None and not isinstance(default, str):
            want = np.dtype("int8") if isinstance(default, bool) else np.asarray(default).dtype
            if value.dtype != want or value.shape != ():
                raise ValueError(f"{key}: {value.dtype} {value.shape}, the spec has {want} ()")
        # FrozenAttr: a name the spec does not declare raises AttributeError here.
        setattr(layer, attr, value)
    for key, value in config.items():
        spec.config.add_attribute(key, value)
    if name == "TransformerDecoderSpec":
        spec.register_vocabulary(vocabulary(model, "target"))
    else:
        spec.register_source_vocabulary(vocabulary(model, "source"))
        spec.register_target_vocabulary(vocabulary(model, "target"))
    spec.validate()  # every variable the spec requires is set
    spec.optimize(quantization=None)
    os.makedirs(out, exist_ok=True)
    spec.save(out)


def each_model(command, function, paths, group):
    """function(*paths[i:i + group]) for each group; the first failure ends the call naming its model."""
    if len(paths) % group:
        sys.exit(f"yoke_ct2.py {command}: {len(paths)} paths do not make groups of {group} (see --help)")
    for i in range(0, len(paths), group):
        try:
            function(*paths[i:i + group])
        except Exception:
            traceback.print_exc()
            sys.exit(f"yoke_ct2.py {command}: {paths[i]} failed (above)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("translate")
    t.add_argument("model")
    t.add_argument("--input", default="-")
    t.add_argument("--beam", type=int)
    t.add_argument("--lenpen", type=float)
    t.add_argument("--max-len-a", type=float)
    t.add_argument("--max-len-b", type=int)
    t.add_argument("--max-decoding-length", type=int, default=0)
    t.add_argument("--compute-type", default="float32")
    t.add_argument("--inter-threads", type=int, default=1)
    t.add_argument("--intra-threads", type=int, default=1)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lengths", help="write per sentence its limit and its translation's tokens (without eos)")
    s = sub.add_parser("score")
    s.add_argument("paths", nargs="+", metavar="DIR PAIRS OUT", help="one or more triples")
    r = sub.add_parser("resave")
    r.add_argument("paths", nargs="+", metavar="DIR OUT", help="one or more pairs")
    args = p.parse_args()
    if args.command == "translate":
        translate(args)
    else:
        each_model(args.command, score if args.command == "score" else resave, args.paths,
                   3 if args.command == "score" else 2)


if __name__ == "__main__":
    main()
