"""yoke from Python: load a trained model directory, translate, score pairs, generate, read the
word matrices.

    import yoke
    model = yoke.load("runs/multi30k-ende")
    print(model.translate(["A man is sleeping."]))

Built by yoke's CMake build when pybind11 is present (Debian: pybind11-dev, python3-dev); the
package is build/python/yoke (PYTHONPATH=build/python). Word matrices are torch tensors when
torch is importable (Debian: python3-torch), else numpy arrays.
"""
import json
import numbers
import os

from ._yoke import Hypothesis, InputError, PairScore  # noqa: F401
from ._yoke import __commit__, __torch_version__, __version__  # noqa: F401
from ._yoke import Model as _Model
from ._yoke import decoding_options, set_threads

__all__ = ["load", "Model", "Hypothesis", "PairScore", "InputError", "decoding_options", "set_threads"]

# Which decoding options are whole numbers: the table `yoke translate` and `yoke serve` read too.
_WHOLE = {name for name, kind, *_ in decoding_options() if kind == "whole"}


def _number(name, value, whole):
    """`value` if it is a number of the right kind, else TypeError naming the argument. Ranges are
    checked by the compiled side (ValueError, the message `yoke translate` gives)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a {'whole number' if whole else 'number'}, got {value!r}")
    if whole and not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    return int(value) if whole else float(value)


def _texts(name, values):
    """A str becomes one item; any other iterable must hold str only."""
    if isinstance(values, str):
        return [values]
    try:
        items = list(values)
    except TypeError:
        raise TypeError(f"{name} must be a str or a list of str, got {type(values).__name__}") from None
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(item).__name__}")
    return items


class Model(_Model):
    """A trained yoke model (`yoke train`'s save_dir, an int8 or an exported directory)."""

    def __init__(self, dir, checkpoint="", device="cpu", weights=None, batch_tokens=0):
        if isinstance(dir, (list, tuple)):
            weights = [] if weights is None else [_number("weights", w, False) for w in weights]
            super().__init__([os.fspath(d) for d in dir], weights, checkpoint, device,
                             _number("batch_tokens", batch_tokens, True))
        else:
            if weights is not None or batch_tokens:
                raise TypeError("weights and batch_tokens are for a list of model directories (an ensemble)")
            super().__init__(os.fspath(dir), checkpoint, device)

    @property
    def config(self):
        """Every config key of the model, as a dict (what `yoke train --help` lists)."""
        return json.loads(self.config_json)

    def translate(self, sentences, beam=5, nbest=0, scores=False, lenpen=1.0, max_len_a=1.2, max_len_b=10):
        """Translations of `sentences` (a list of str, or one str). By default a list of str;
        scores=True: (text, score) pairs; nbest=N: per sentence a list of up to N Hypothesis
        (text, score, log_prob), best first. score = log p / (subwords + 1)^lenpen, as yoke translate."""
        one = isinstance(sentences, str)
        options = {"beam": beam, "lenpen": lenpen, "max_len_a": max_len_a, "max_len_b": max_len_b}
        options = {k: _number(k, v, k in _WHOLE) for k, v in options.items()}
        nbest = _number("nbest", nbest, True)
        if nbest < 0:
            raise ValueError(f"nbest must be 0 (the best translation only) or in [1, beam], got {nbest}")
        lists = self.translate_nbest(_texts("sentences", sentences), nbest=max(1, nbest), **options)
        if nbest > 0:
            out = lists
        elif scores:
            out = [(l[0].text, l[0].score) if l else ("", float("-inf")) for l in lists]
        else:
            out = [l[0].text if l else "" for l in lists]
        return out[0] if one else out

    def embeddings(self):
        """{"source", "target", "output"}: the [V, d] matrix each role reads (copies; a language
        model has no "source"). torch tensors when torch is importable, else numpy arrays."""
        arrays = self.word_matrices_numpy()
        try:
            import torch
        except ImportError:
            return arrays
        return {k: torch.from_numpy(v) for k, v in arrays.items()}


def load(path, checkpoint="", device="cpu", weights=None, batch_tokens=0):
    """A model directory (a str or any os.PathLike): checkpoint_best.ykp (else checkpoint_last.ykp,
    else model.safetensors). A list of directories is an ensemble of translation models, decoded
    and scored as `yoke translate --model A --model B [--weights ...]` does; batch_tokens as its
    --batch-tokens (0: the default)."""
    return Model(path, checkpoint, device, weights, batch_tokens)
