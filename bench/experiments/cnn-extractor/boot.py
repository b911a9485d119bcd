# writer-level paired bootstrap of EER(fused, fitted w) - EER(hand-crafted), normalised CNN distances.
#   /usr/bin/python3 boot.py
import json, numpy as np
from eval import *
fits = {("bengali", 1): .088, ("bengali", 3): .081, ("bengali", 5): .187, ("bengali", 10): .283,
        ("dutch", 1): .203, ("dutch", 3): .197, ("dutch", 5): .241, ("dutch", 10): .287}  # printed by eval.py (eval.out)
trials = [json.loads(l) for l in open("trials.jsonl")]
rng = np.random.default_rng(0)
for ds, f in [("bengali", "emb_bengali_by_dutch.npz"), ("dutch", "emb_dutch_by_bengali.npz")]:
    E = load_emb(f); tds = [t for t in trials if t["dataset"] == NAMES[ds]]
    for n in NS:
        tn = [t for t in tds if t["n"] == n]
        kinds, h, c = trial_table(ds, tds, lambda w: E, n)
        wr = np.array([t["writer"] for t in tn]); ws = np.unique(wr)
        w = fits[(ds, n)]; fz = (1 - w) * z(logit(h)) + w * z(c)
        idx = {x: np.nonzero(wr == x)[0] for x in ws}
        out = []
        for kind in ["skilled", "random"]:
            d = []
            for b in range(200):
                sel = np.concatenate([idx[x] for x in rng.choice(ws, len(ws))])
                k = kinds[sel]; G = k == "genuine"; I = k == kind
                d.append(eer(fz[sel][G], fz[sel][I]) - eer(h[sel][G], h[sel][I]))
            d = 100 * np.array(d)
            out.append(f"{kind} diff 95% CI [{np.percentile(d,2.5):+.2f}, {np.percentile(d,97.5):+.2f}]")
        print(ds, "N", n, "; ".join(out), flush=True)
