# E53: protocol-matched EERs for the CNN alone, the hand-crafted bench trials and fusions.
#   /usr/bin/python3 /tmp/e53/eval.py --trials /tmp/e53/trials.jsonl \
#       --emb bengali=/tmp/e53/emb_bengali_by_dutch.npz --emb dutch=/tmp/e53/emb_dutch_by_bengali.npz \
#       [--fit bengali=dutch:/tmp/e53/trials_cv_dutch.jsonl:/tmp/e53/emb_dutch_fold0.npz,/tmp/e53/emb_dutch_fold1.npz ...]
# --fit: fusion weights for scoring <scored> are fitted (logistic regression) on the OTHER dataset's trials:
# hand-crafted scores from its own 5-fold writer-disjoint cv run, CNN scores from 2 CNNs each trained on
# one half of its writers (fold k embeds the writers of the other half: writer index % 2 != k).
import argparse, json
import numpy as np
from common import load_index

NAMES = {"bengali": "bhsig260-bengali", "dutch": "sigcomp2011-dutch"}
NS = [1, 3, 5, 10]
RANDOM_OTHERS = 20


def eer(gen, imp):
    """bench/lib/metrics.ts eer(): accept score >= t; ties move together."""
    gen = np.asarray(gen); imp = np.asarray(imp)
    s = np.concatenate([gen, imp]); g = np.concatenate([np.ones(len(gen)), np.zeros(len(imp))])
    o = np.argsort(s, kind="stable"); s = s[o]; g = g[o]
    rejG = np.cumsum(g); rejI = np.cumsum(1 - g)
    last = np.r_[s[1:] != s[:-1], True]
    frr = np.r_[0, rejG[last] / len(gen)]; far = np.r_[1, (len(imp) - rejI[last]) / len(imp)]
    i = np.argmin(np.abs(far - frr))
    return (far[i] + frr[i]) / 2


def protocol_count(writers, n):
    """number of trials bench/lib/protocol.ts makes (sanity check against the JSONL)."""
    c = 0
    for w in writers:
        if len(w["genuine"]) < 2:
            continue
        refs = max(1, min(n, len(w["genuine"]) - 1))
        c += len(w["genuine"]) - refs + len(w["forgeries"])
        others = [o for o in writers if o["id"] != w["id"]]
        at = [o["id"] for o in writers].index(w["id"])
        c += sum(1 for i in range(min(RANDOM_OTHERS, len(others))) if others[(at + i) % len(others)]["genuine"])
    return c


def load_emb(f):
    z = np.load(f); return dict(zip(z["paths"], z["emb"]))


def cnn_score(E, refs, q, norm=True):
    R = np.stack([E[r] for r in refs]); v = E[q]
    d = np.sort(1 - R @ v)[:2].mean()  # cosine distance, mean of the 2 nearest references
    if norm and len(refs) >= 2:
        pd = 1 - R @ R.T
        d = d / max(pd[np.triu_indices(len(refs), 1)].mean(), 1e-3)
    return -d  # higher = more genuine


def logit(p):
    p = np.clip(np.asarray(p), 1e-6, 1 - 1e-6); return np.log(p / (1 - p))


def z(v):
    return (v - v.mean()) / v.std()


def trial_table(ds, trials, emb_for_writer, n, norm=True):
    _, writers = load_index(ds)
    W = {w["id"]: w for w in writers}
    ts = [t for t in trials if t["n"] == n]
    kinds = np.array([t["kind"] for t in ts]); h = np.array([t["score"] for t in ts])
    c = []
    for t in ts:
        g = W[t["writer"]]["genuine"]
        refs = g[: max(1, min(n, len(g) - 1))]
        c.append(cnn_score(emb_for_writer(t["writer"]), refs, t["path"], norm))
    return kinds, h, np.array(c)


def fit_lr(X, y, w, iters=50):
    Xb = np.c_[X, np.ones(len(X))]; b = np.zeros(Xb.shape[1])
    for _ in range(iters):  # Newton
        p = 1 / (1 + np.exp(-Xb @ b))
        g = Xb.T @ (w * (p - y)) + 1e-3 * b
        Hm = (Xb * (w * p * (1 - p))[:, None]).T @ Xb + 1e-3 * np.eye(len(b))
        b -= np.linalg.solve(Hm, g)
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", required=True)
    ap.add_argument("--emb", action="append", required=True)
    ap.add_argument("--fit", action="append", default=[])
    ap.add_argument("--weights", default="0.25,0.5,0.75")
    ap.add_argument("--nonorm", action="store_true")
    a = ap.parse_args()
    norm = not a.nonorm
    trials = [json.loads(l) for l in open(a.trials)]
    ws = [float(x) for x in a.weights.split(",")]
    fits = {}
    for spec in a.fit:
        scored, rest = spec.split("=")
        tds, tfile, embs = rest.split(":")
        fold = [load_emb(f) for f in embs.split(",")]
        _, tw = load_index(tds)
        half = {w["id"]: i % 2 for i, w in enumerate(tw)}  # fold k trained on writers with half == k
        ttr = [json.loads(l) for l in open(tfile)]
        for n in NS:
            kinds, h, c = trial_table(tds, ttr, lambda wid: fold[1 - half[wid]], n, norm)
            X = np.c_[z(logit(h)), z(c)]
            y = (kinds == "genuine").astype(float)
            wt = np.where(kinds == "genuine", 1 / (kinds == "genuine").sum(),
                          np.where(kinds == "skilled", 0.5 / max(1, (kinds == "skilled").sum()), 0.5 / max(1, (kinds == "random").sum())))
            b = fit_lr(X, y, wt * len(y))
            wc = b[1] / (abs(b[0]) + abs(b[1]))
            fits[(scored, n)] = wc
            print(f"fit for {scored} N={n} on {tds}: coef hand {b[0]:.3f} cnn {b[1]:.3f} -> cnn weight {wc:.3f}; "
                  f"{tds} (in-set) EER skilled hand {100*eer(h[kinds=='genuine'], h[kinds=='skilled']):.1f} cnn(2-fold) {100*eer(c[kinds=='genuine'], c[kinds=='skilled']):.1f}")
    res = {}
    order = []
    for spec in a.emb:
        ds, f = spec.split("=")
        E = load_emb(f)
        _, writers = load_index(ds)
        tds = [t for t in trials if t["dataset"] == NAMES[ds]]
        for n in NS:
            kinds, h, c = trial_table(ds, tds, lambda wid: E, n, norm)
            assert len(kinds) == protocol_count(writers, n), (len(kinds), protocol_count(writers, n))
            zh, zc = z(logit(h)), z(c)  # label-free standardisation over all trials of this N
            sys = [("hand-crafted (bench LODO)", h), ("CNN alone", c)] + [(f"fused fixed w_cnn={w}", (1 - w) * zh + w * zc) for w in ws]
            if (ds, n) in fits:
                w = fits[(ds, n)]
                sys.append(("fused, w fitted on other set", (1 - abs(w)) * zh + w * zc))
            out = {}
            for name, s in sys:
                out[name] = (eer(s[kinds == "genuine"], s[kinds == "skilled"]), eer(s[kinds == "genuine"], s[kinds == "random"]))
                if name not in order:
                    order.append(name)
            res[(ds, n)] = out
    for ds in [s.split("=")[0] for s in a.emb]:
        print(f"\n### {ds} (CNN trained on the other dataset only)  skilled EER / random EER, %")
        print("| system | " + " | ".join(f"N={n}" for n in NS) + " |")
        print("|---|" + "---|" * len(NS))
        for nm in order:
            if nm in res[(ds, NS[0])]:
                print(f"| {nm} | " + " | ".join(f"{100*res[(ds,n)][nm][0]:.1f} / {100*res[(ds,n)][nm][1]:.1f}" for n in NS) + " |")
        if any((ds, n) in fits for n in NS):
            print("fitted cnn weights: " + ", ".join(f"N={n}: {fits[(ds, n)]:.2f}" for n in NS if (ds, n) in fits))


if __name__ == "__main__":
    main()
