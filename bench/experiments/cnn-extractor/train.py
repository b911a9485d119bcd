# E53: train a compact CNN on ONE dataset's writers (writer softmax + forgery head + triplet with skilled
# forgeries as hard negatives), heavy augmentation.
#   /usr/bin/python3 /tmp/e53/train.py --train dutch --minutes 14 --out /tmp/e53/model_dutch.pt
import argparse, math, random, time, json
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common import cache_dataset, load_index, build_model, macs, H, W

ap = argparse.ArgumentParser()
ap.add_argument("--train", required=True)
ap.add_argument("--minutes", type=float, default=14)
ap.add_argument("--steps", type=int, default=0, help="fixed step count (0: estimate from --minutes)")
ap.add_argument("--out", required=True)
ap.add_argument("--writers", default="", help="optional: comma-separated subset of writer ids to train on")
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()
torch.set_num_threads(2)
torch.manual_seed(args.seed); np.random.seed(args.seed); random.seed(args.seed)

paths, imgs = cache_dataset(args.train)
pidx = {p: i for i, p in enumerate(paths)}
_, writers = load_index(args.train)
if args.writers:
    keep = set(args.writers.split(","))
    writers = [w for w in writers if w["id"] in keep]
writers = [w for w in writers if len(w["genuine"]) >= 2]
gen = [[pidx[p] for p in w["genuine"]] for w in writers]
forg = [[pidx[p] for p in w["forgeries"]] for w in writers]
X = torch.from_numpy(imgs.astype(np.float32)).unsqueeze(1)  # N,1,128,384
print(f"train on {args.train}: {len(writers)} writers, {sum(map(len, gen))} genuine, {sum(map(len, forg))} forgeries", flush=True)


def gauss_kernel(sigma):
    r = max(1, int(math.ceil(2.5 * sigma)))
    t = torch.arange(-r, r + 1, dtype=torch.float32)
    k = torch.exp(-(t ** 2) / (2 * sigma ** 2)); k = k / k.sum()
    return k


def dilate(x):
    """grey dilation 3x3 (separable shifted max)."""
    p = F.pad(x, (1, 1, 0, 0))
    x = torch.maximum(torch.maximum(p[..., :-2], p[..., 1:-1]), p[..., 2:])
    p = F.pad(x, (0, 0, 1, 1))
    return torch.maximum(torch.maximum(p[..., :-2, :], p[..., 1:-1, :]), p[..., 2:, :])


BASE = None


def augment(x):
    """x: B,1,128,384 in [0,1] ink-high -> B,1,64,192 augmented."""
    global BASE
    B = x.shape[0]
    # --- stroke width first (on the 2x canvas): grey dilation / erosion 3x3
    r = torch.rand(B)
    for sel, op in [(r < 0.3, "d"), ((r >= 0.3) & (r < 0.42), "e"), (r >= 0.9, "dd")]:
        i = torch.nonzero(sel).flatten()
        if len(i):
            xi = x[i]
            xi = dilate(xi) if op == "d" else (-dilate(-xi) if op == "e" else dilate(dilate(xi)))
            x[i] = xi
    # --- geometry: scale (iso + anisotropic), rotation +-5 deg, shear, translation, elastic jitter
    s = torch.empty(B).uniform_(0.8, 1.15)
    sx = s * torch.empty(B).uniform_(0.85, 1.15)
    sy = s
    th = torch.empty(B).uniform_(-5, 5) * math.pi / 180
    sh = torch.empty(B).uniform_(-0.25, 0.25)
    tx = torch.empty(B).uniform_(-0.06, 0.06); ty = torch.empty(B).uniform_(-0.08, 0.08)
    asp = x.shape[3] / x.shape[2]
    c, si = torch.cos(th), torch.sin(th)
    A = torch.zeros(B, 2, 3)
    a11 = c / sx; a12 = (-si + c * sh) / sy
    a21 = si / sx; a22 = (c + si * sh) / sy
    A[:, 0, 0] = a11; A[:, 0, 1] = a12 / asp
    A[:, 1, 0] = a21 * asp; A[:, 1, 1] = a22
    A[:, 0, 2] = tx; A[:, 1, 2] = ty
    if BASE is None or BASE.shape[1:3] != x.shape[2:]:
        BASE = F.affine_grid(torch.eye(2, 3).unsqueeze(0), [1, 1, *x.shape[2:]], align_corners=False)
    grid = torch.einsum("hwk,bjk->bhwj", BASE[0], A[:, :, :2]) + A[:, None, None, :, 2]
    el = torch.randn(B, 2, 4, 12) * torch.empty(B, 1, 1, 1).uniform_(0, 0.012)
    el = F.interpolate(el, size=x.shape[2:], mode="bilinear", align_corners=False).permute(0, 2, 3, 1)
    x = F.grid_sample(x, grid + el, mode="bilinear", padding_mode="zeros", align_corners=False)
    x = F.avg_pool2d(x, 2)  # -> 64x192
    # --- blur: 3x3 binomial (separable, by slicing) mixed in with a random strength, once or twice
    i = torch.nonzero(torch.rand(B) < 0.3).flatten()
    if len(i):
        xi = x[i]
        for _ in range(int(np.random.randint(1, 3))):
            p = F.pad(xi, (1, 1, 1, 1), mode="replicate")
            h = 0.25 * p[..., :-2] + 0.5 * p[..., 1:-1] + 0.25 * p[..., 2:]
            bl = 0.25 * h[..., :-2, :] + 0.5 * h[..., 1:-1, :] + 0.25 * h[..., 2:, :]
            a = torch.empty(len(i), 1, 1, 1).uniform_(0.5, 1.0)
            xi = (1 - a) * xi + a * bl
        x[i] = xi
    # --- intensity: bitonal thresholding (grey -> bitonal) or grey-ish rendering (bitonal -> grey)
    r = torch.rand(B)
    t = torch.empty(B, 1, 1, 1).uniform_(0.2, 0.6)
    xb = (x > t).float()
    gam = torch.empty(B, 1, 1, 1).uniform_(0.7, 1.3)
    gain = torch.empty(B, 1, 1, 1).uniform_(0.7, 1.0)
    xg = x.clamp(0, 1) ** gam * gain
    bt = (r < 0.35).view(B, 1, 1, 1).float(); gr = ((r >= 0.35) & (r < 0.7)).view(B, 1, 1, 1).float()
    x = xb * bt + xg * gr + x * (1 - bt - gr)
    x = x + (torch.rand(B, 1, 1, 1) < 0.3).float() * torch.randn_like(x) * 0.03
    return x.clamp(0, 1)


def down(x):
    return F.avg_pool2d(x, 2)  # 128x384 -> 64x192


model = build_model(len(writers))
print(f"params (all) {sum(p.numel() for p in model.parameters())}, extractor MACs {macs(model)/1e6:.2f} M", flush=True)
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=5e-4)

P, K, KF = 16, 4, 2


def batch():
    ws = random.sample(range(len(writers)), P)
    idx, lab, isf = [], [], []
    for wi in ws:
        g = gen[wi]
        idx += [g[j] for j in np.random.choice(len(g), K, replace=len(g) < K)]; lab += [wi] * K; isf += [0] * K
        if forg[wi]:
            f = forg[wi]
            idx += [f[j] for j in np.random.choice(len(f), KF, replace=len(f) < KF)]; lab += [wi] * KF; isf += [1] * KF
    return torch.tensor(idx), torch.tensor(lab), torch.tensor(isf)


def triplet(emb, lab, isf, margin=0.3):
    e = F.normalize(emb, dim=1)
    d = torch.cdist(e, e)
    g = isf == 0
    same = (lab[:, None] == lab[None, :])
    pos = same & g[None, :] & g[:, None]
    pos.fill_diagonal_(False)
    neg = (~same) | (same & (isf[None, :] == 1))  # other writers, or skilled forgeries of the writer
    anc = g & pos.any(1)
    dp = torch.where(pos, d, torch.full_like(d, -1)).max(1).values
    dn = torch.where(neg, d, torch.full_like(d, 9)).min(1).values
    return F.relu(dp - dn + margin)[anc].mean()


t0 = time.time()
# schedule by wall clock (the machine is shared): warm-up 100 steps, cosine over --minutes
budget = args.minutes * 60
step = 0
lr0 = 2e-3
hist = []
while True:
    prog = (time.time() - t0) / budget
    if (args.steps and step >= args.steps) or (not args.steps and prog >= 1):
        break
    if args.steps:
        prog = step / args.steps
    lr = lr0 * min(1, (step + 1) / 100) * 0.5 * (1 + math.cos(math.pi * min(1, prog)))
    for gq in opt.param_groups:
        gq["lr"] = lr
    model.train()
    idx, lab, isf = batch()
    with torch.no_grad():
        xb = augment(X[idx].clone())
    emb = model(xb)
    g = isf == 0
    l_cls = F.cross_entropy(model.cls(emb[g]), lab[g], label_smoothing=0.1)
    l_f = F.binary_cross_entropy_with_logits(model.forg(emb).squeeze(1), isf.float())
    l_t = triplet(emb, lab, isf)
    loss = l_cls + 0.5 * l_f + 1.0 * l_t
    opt.zero_grad(); loss.backward(); opt.step()
    hist.append([l_cls.item(), l_f.item(), l_t.item()])
    if step % 100 == 0:
        h = np.mean(hist[-100:], 0)
        print(f"step {step} lr {lr:.5f} cls {h[0]:.3f} forg {h[1]:.3f} trip {h[2]:.3f}  {time.time()-t0:.0f}s", flush=True)
    step += 1

secs = time.time() - t0
ext = {k: v for k, v in model.state_dict().items() if not k.startswith(("cls.", "forg."))}
nparam = sum(v.numel() for k, v in ext.items() if "running" not in k and "num_batches" not in k)
torch.save({"state": model.state_dict(), "n_writers": len(writers), "train": args.train}, args.out)
info = {"train": args.train, "steps": step, "seconds": secs, "extractor_params": nparam,
        "weight_bytes_f32": nparam * 4, "macs": macs(model)}
json.dump(info, open(args.out + ".json", "w"), indent=1)
print(info, flush=True)
