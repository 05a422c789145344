"""Welch's interval of mean(b) - mean(a), shared by the analysis scripts of docs/results that read
committed per-run values (seed003-rare-word-recall.py, seed004-generalisation-gap.py,
seed004-exercise3-tying-gap.py): the unpaired test yoke's reports use without a sentence part."""
import math

from scipy import stats


def welch(a, b, level):
    """Interval of mean(b) - mean(a) at `level`, two-sided, Welch-Satterthwaite df."""
    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((x - ma) ** 2 for x in a) / (na - 1)
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1)
    se2 = va / na + vb / nb
    delta = mb - ma
    if se2 == 0:
        return {"delta": delta, "se": 0.0, "df": None, "level": level, "lo": delta, "hi": delta,
                "p": 1.0 if delta == 0 else 0.0}
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    se = math.sqrt(se2)
    t = stats.t.ppf(1 - (1 - level) / 2, df)
    p = 2 * stats.t.sf(abs(delta) / se, df)
    return {"delta": delta, "se": se, "df": df, "level": level, "lo": delta - t * se,
            "hi": delta + t * se, "p": p}
