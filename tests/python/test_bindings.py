#!/usr/bin/env python3
"""`import yoke` as a Python user would: load a model, translate (greedy, beam with n-best and
scores), score pairs, generate from a language model, read the word matrices; each compared
with what the `yoke` command prints for the same model. Run by ctest (Python.Bindings):
    test_bindings.py YOKE_BINARY BUILD_PYTHON_DIR
Exits 77 (ctest: skipped) when the module or numpy cannot be imported. A few seconds: two tiny
models trained for a few updates on a made-up language pair."""
import math
import os
import pathlib
import random
import subprocess
import sys
import tempfile

SKIP = 77


def words(rng, n):
    vocab = ["kat", "hund", "sol", "mar", "lun", "tor", "pik", "ved", "sam", "ron", "bel", "fis"]
    return [rng.choice(vocab) for _ in range(n)]


def make_corpus(d, rng, n):
    """A toy pair: the target is the source with its words reversed and suffixed."""
    src = [" ".join(words(rng, rng.randint(2, 7))) for _ in range(n)]
    tgt = [" ".join(w + "e" for w in reversed(s.split())) for s in src]
    for name, lines in (("src", src), ("tgt", tgt)):
        with open(os.path.join(d, f"{name}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return src, tgt


def run(*args):
    r = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{r.stderr}")
    return r.stdout


def main():
    yoke_bin, package_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, package_dir)
    try:
        import numpy  # noqa: F401
        import yoke
    except ImportError as e:
        print(f"skipped: cannot import the yoke module from {package_dir} with {sys.executable}: {e}")
        return SKIP
    # The version the command prints, in PEP 440 form: "yoke 0.1.0 (commit C, LibTorch T)" is
    # yoke.__version__ "0.1.0+C.torchT" (a "+dirty" commit as ".dirty").
    line = run(yoke_bin, "--version").strip()
    version, rest = line[len("yoke "):].split(" (commit ")
    commit, torch_version = rest.rstrip(")").split(", LibTorch ")
    assert yoke.__commit__ == commit and yoke.__torch_version__ == torch_version, (line, yoke.__version__)
    assert yoke.__version__ == f"{version}+{commit.replace('+', '.')}.torch{torch_version}", (line, yoke.__version__)
    rng = random.Random(1)
    tiny = ["--d_model", "32", "--heads", "2", "--ffn_dim", "64", "--threads", "1", "--valid_bleu", "false",
            "--warmup", "10", "--log_interval", "5", "--max_tokens", "300"]
    with tempfile.TemporaryDirectory(prefix="yoke_bindings_") as tmp:
        src, _ = make_corpus(tmp, rng, 300)
        data, lm_data = os.path.join(tmp, "data"), os.path.join(tmp, "lm-data")
        t = lambda f: os.path.join(tmp, f)
        run(yoke_bin, "prepare", "--train-src", t("src.txt"), "--train-tgt", t("tgt.txt"), "--valid-src", t("src.txt"),
            "--valid-tgt", t("tgt.txt"), "--joint", "--vocab-size", "60", "--out", data)
        run(yoke_bin, "prepare", "--lm", "--train", t("tgt.txt"), "--valid", t("tgt.txt"), "--vocab-size", "60",
            "--out", lm_data)
        mt, lm = t("mt"), t("lm")
        run(yoke_bin, "train", "--data", data, "--save_dir", mt, "--encoder_layers", "1", "--decoder_layers", "1",
            "--max_updates", "40", "--valid_interval", "40", "--lr", "3e-3", *tiny)
        run(yoke_bin, "train", "--data", lm_data, "--save_dir", lm, "--task", "lm", "--decoder_layers", "1",
            "--max_updates", "10", "--valid_interval", "10", *tiny)

        sentences = src[:12]
        inp = t("input.txt")
        with open(inp, "w") as f:
            f.write("\n".join(sentences) + "\n")
        cli = lambda *a: run(yoke_bin, "translate", "--model", mt, "--input", inp, "--threads", "1", *a).splitlines()

        model = yoke.load(mt)
        assert model.task == "translate" and model.config["d_model"] == 32, model.config
        # Greedy: the same text as the command.
        greedy = model.translate(sentences, beam=1)
        assert greedy == cli("--beam", "1"), (greedy, cli("--beam", "1"))
        assert model.translate(sentences[0], beam=1) == greedy[0]
        # n-best with scores: the command's "INDEX ||| TEXT ||| SCORE" lines.
        nbest = model.translate(sentences, beam=3, nbest=2)
        lines = [l.split(" ||| ") for l in cli("--beam", "3", "--nbest", "2")]
        flat = [(i, h) for i, hyps in enumerate(nbest) for h in hyps]
        assert len(flat) == len(lines), (len(flat), len(lines))
        for (i, h), (index, text, score) in zip(flat, lines):
            assert int(index) == i and h.text == text, (i, h, index, text)
            assert abs(h.score - float(score)) < 1e-4, (h.score, score)  # the command prints 4 decimals
        text, score = model.translate(sentences, beam=3, scores=True)[0]
        # The same beam search in the same process on the same batch: the same score bit for bit.
        assert text == nbest[0][0].text and score == nbest[0][0].score
        # Scores of given pairs: `yoke score-pairs`'s (the text is segmented anew, so these are
        # not the beam's scores of its own subwords).
        targets = [hyps[0].text for hyps in nbest]
        hyp = t("hyp.txt")
        with open(hyp, "w") as f:
            f.write("\n".join(targets) + "\n")
        want = run(yoke_bin, "score-pairs", "--model", mt, "--src", inp, "--tgt", hyp, "--threads", "1").split()
        scored = model.score(sentences, targets)
        assert len(scored) == len(want)
        for s, w in zip(scored, want):
            assert abs(s.score - float(w)) < 1e-5, (s.score, w)  # the command prints 6 decimals
            assert abs(sum(s.token_log_probs) - s.log_prob) < 1e-3
        # Word matrices: tie = decoder by default, so the target's is the output's.
        e = model.embeddings()
        assert set(e) == {"source", "target", "output"}, set(e)
        assert tuple(e["target"].shape) == (model.config["tgt_vocab_size"], 32)
        assert bool((e["target"] == e["output"]).all()) and not bool((e["source"] == e["target"]).all())
        assert math.isfinite(float(e["source"].sum()))

        # The first embeddings() of a fresh interpreter from several threads at once, numpy not
        # imported before yoke: this deadlocked (numpy's C API set up in a static under the GIL).
        code = ("import sys, threading; sys.path.insert(0, sys.argv[1]); import yoke; m = yoke.load(sys.argv[2]); "
                "ts = [threading.Thread(target=m.embeddings) for _ in range(4)]; [t.start() for t in ts]; "
                "[t.join() for t in ts]; print('threads ok')")
        try:
            out = subprocess.run([sys.executable, "-c", code, package_dir, mt], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError("embeddings() from 4 threads at once did not return in 120 s (a deadlock)")
        assert out.returncode == 0 and "threads ok" in out.stdout, (out.returncode, out.stdout, out.stderr)

        # Generation: greedy (temperature 0) as `yoke generate` writes it.
        lm_model = yoke.load(lm)
        assert lm_model.task == "lm" and "source" not in lm_model.embeddings()
        got = lm_model.generate("kate", max_tokens=8, temperature=0)
        want = run(yoke_bin, "generate", "--model", lm, "--prompt", "kate", "--max-tokens", "8", "--temperature", "0").strip()
        assert got == want, (got, want)

        # Errors come as ValueError naming the file.
        for bad, call in ((os.path.join(tmp, "nowhere"), lambda p: yoke.load(p)), (lm, lambda p: yoke.load(p).translate(["x"]))):
            try:
                call(bad)
            except ValueError as err:
                assert "nowhere" in str(err) or "language model" in str(err), str(err)
            else:
                raise AssertionError(f"no error for {bad}")
        # What the command refuses, the module refuses with the same words (ValueError), before
        # decoding anything: no empty translations from a beam of 0 or a NaN length penalty.
        refused = (
            (lambda: model.translate(sentences, beam=0), "beam must be in [1, 1024], got 0"),
            (lambda: model.translate(sentences, beam=-3), "beam must be in [1, 1024], got -3"),
            (lambda: model.translate(sentences, beam=100000), "beam must be in [1, 1024]"),
            (lambda: model.translate(sentences, lenpen=float("nan")), "lenpen must be in [0, 10], got nan"),
            (lambda: model.translate(sentences, lenpen=-100.0), "lenpen must be in [0, 10]"),
            (lambda: model.score(sentences[:1], sentences[:1], lenpen=-1.0), "lenpen must be in [0, 10]"),
            # As `yoke score-pairs`: a pair too long for the model is refused, not scored cut.
            (lambda: model.score([" ".join(["kate"] * 1100)], sentences[:1]), "sources:1: the source has"),
            (lambda: model.score(sentences[:2], sentences[:1]), "sources has 2 lines but targets has 1"),
            (lambda: lm_model.generate("kate", temperature=float("nan")), "temperature must be a number"),
            (lambda: lm_model.generate("kate", temperature=-1.0), "temperature must be a number"),
            (lambda: lm_model.generate("kate", top_p=float("nan")), "top-p must be in (0, 1]"),
        )
        refused += (
            # The decoding options' table (config/decoding_options.h) checks what the CLI checks.
            (lambda: model.translate(sentences, nbest=-1), "nbest must be 0 (the best translation only) or in [1, beam]"),
            (lambda: model.translate(sentences, beam=2, nbest=3), "nbest must be in [1, beam]"),
            (lambda: model.translate_nbest(sentences, beam=2.5), "beam must be a whole number, got 2.5"),
        )
        for call, words in refused:
            try:
                call()
            except ValueError as err:
                assert words in str(err), (words, str(err))
            else:
                raise AssertionError(f"no error: {words}")
        # A number of the wrong kind is a TypeError naming the argument, not a pybind11 signature dump.
        for call, words in ((lambda: model.translate(sentences, beam=2.5), "beam must be a whole number, got 2.5"),
                            (lambda: model.translate(sentences, beam="5"), "beam must be a whole number, got '5'"),
                            (lambda: model.translate(sentences, lenpen=True), "lenpen must be a number, got True"),
                            (lambda: model.translate(["ok", 3]), "sentences[1] must be a str, got int"),
                            (lambda: model.translate(7), "sentences must be a str or a list of str, got int")):
            try:
                call()
            except TypeError as err:
                assert str(err) == words, (words, str(err))
            else:
                raise AssertionError(f"no TypeError: {words}")
        names = [o[0] for o in yoke.decoding_options()]
        assert names == ["beam", "nbest", "lenpen", "max_len_a", "max_len_b"], names
        # Any os.PathLike names a model directory.
        assert yoke.load(pathlib.Path(mt)).translate(sentences[:2], beam=1) == greedy[:2]
        # A list is an ensemble, as the command's repeated --model: the same translations and scores.
        ensemble = yoke.load([mt, pathlib.Path(mt)], weights=[1, 3], batch_tokens=64)
        lines = cli("--model", mt, "--weights", "1,3", "--beam", "2", "--scores", "--batch-tokens", "64")
        got = ensemble.translate(sentences, beam=2, scores=True)
        assert [t for t, _ in got] == [l.split(" ||| ")[0] for l in lines], (got, lines)
        # Printed with 6 decimals; the two processes may time their way to different fp32 products
        # (model/fp32_kernel.h), whose sums differ in the last bits: 1e-4 covers both.
        assert all(abs(s - float(l.split(" ||| ")[1])) < 1e-4 for (_, s), l in zip(got, lines)), (got, lines)
        yoke.set_threads(1)
        for call, error in ((lambda: yoke.set_threads(0), ValueError), (lambda: yoke.load(mt, weights=[1]), TypeError),
                            (lambda: yoke.load([mt, mt], weights=[1]), ValueError)):
            try:
                call()
            except error:
                pass
            else:
                raise AssertionError(f"no {error.__name__}")
    print("ok: load, translate (greedy, n-best, scores), score, generate, embeddings, refusals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
