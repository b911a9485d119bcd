# E53 shared helpers: dataset index, preprocessing, model.
import csv, os
import numpy as np
from PIL import Image

ROOT = "/work/shared/datasets"
DATASETS = {"bengali": "bhsig260-bengali", "dutch": "sigcomp2011-dutch"}
# stored canvas (2x the network input so augmentation such as stroke-width change is gentle)
CH, CW = 128, 384
H, W = 64, 192


def load_index(ds):
    """Writers in index order; genuine/forgery paths in index order (as bench/lib/dataset.ts)."""
    folder = os.path.join(ROOT, DATASETS[ds])
    writers = {}
    with open(os.path.join(folder, "index.csv")) as f:
        for r in csv.DictReader(f):
            w = writers.setdefault(r["writer"], {"id": r["writer"], "genuine": [], "forgeries": []})
            lab = r["label"].lower()
            if lab == "genuine":
                w["genuine"].append(r["path"])
            elif lab == "forgery":
                w["forgeries"].append(r["path"])
    return folder, list(writers.values())


def preprocess(path, ch=CH, cw=CW):
    """grey -> ink-high [0,1] -> crop ink box (robust to specks) -> resize keep aspect -> centred canvas."""
    im = Image.open(path).convert("L")
    g = 255.0 - np.asarray(im, dtype=np.float32)
    bg = np.median(g)
    hi = np.percentile(g, 99.7)
    if hi - bg < 20:
        hi = bg + 20
    x = np.clip((g - bg) / (hi - bg), 0, 1)
    ink = x > 0.35
    ys, xs = np.nonzero(ink)
    if len(ys) < 20:
        y0, y1, x0, x1 = 0, x.shape[0], 0, x.shape[1]
    else:
        # drop isolated specks: use robust percentiles of ink coordinates
        y0, y1 = np.percentile(ys, [0.3, 99.7]).astype(int)
        x0, x1 = np.percentile(xs, [0.3, 99.7]).astype(int)
        y1 += 1
        x1 += 1
    x = x[y0:y1, x0:x1]
    h, w = x.shape
    s = min((ch - 4) / h, (cw - 4) / w)
    nh, nw = max(1, int(round(h * s))), max(1, int(round(w * s)))
    r = Image.fromarray((x * 255).astype(np.uint8)).resize((nw, nh), Image.BOX if s < 1 else Image.BILINEAR)
    out = np.zeros((ch, cw), np.float32)
    oy, ox = (ch - nh) // 2, (cw - nw) // 2
    out[oy:oy + nh, ox:ox + nw] = np.asarray(r, np.float32) / 255.0
    return out


def cache_dataset(ds, cache_dir="/tmp/e53/cache"):
    os.makedirs(cache_dir, exist_ok=True)
    fn = os.path.join(cache_dir, f"{ds}.npz")
    if os.path.exists(fn):
        z = np.load(fn, allow_pickle=True)
        return list(z["paths"]), z["imgs"]
    folder, writers = load_index(ds)
    paths = [p for w in writers for p in w["genuine"] + w["forgeries"]]
    imgs = np.stack([preprocess(os.path.join(folder, p)) for p in paths]).astype(np.float16)
    np.savez(fn, paths=np.array(paths), imgs=imgs)
    return paths, imgs


def build_model(n_writers=0, emb=256):
    import torch.nn as nn

    def blk(i, o, k=3, s=1):
        return [nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(
                *blk(1, 16, 5, 2), nn.MaxPool2d(2),          # 64x192 -> 32x96 -> 16x48
                *blk(16, 32), nn.MaxPool2d(2),               # 8x24
                *blk(32, 64), nn.MaxPool2d(2),  # 4x12
                *blk(64, 128),                               # 4x12
                nn.AdaptiveAvgPool2d((2, 4)),
            )
            self.fc = nn.Sequential(nn.Flatten(), nn.Linear(128 * 8, emb, bias=False), nn.BatchNorm1d(emb), nn.ReLU(inplace=True))
            self.cls = nn.Linear(emb, n_writers) if n_writers else None
            self.forg = nn.Linear(emb, 1) if n_writers else None

        def forward(self, x):
            return self.fc(self.f(x))

    return Net()


def macs(model):
    """multiply-accumulates of one forward pass at 1x1xHxW (conv + linear)."""
    import torch
    import torch.nn as nn
    tot = [0]

    def hook(m, i, o):
        if isinstance(m, nn.Conv2d):
            tot[0] += o.numel() * m.in_channels // m.groups * m.kernel_size[0] * m.kernel_size[1]
        elif isinstance(m, nn.Linear):
            tot[0] += m.in_features * m.out_features
    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    model.eval()
    with torch.no_grad():
        model(torch.zeros(1, 1, H, W))
    for h in hs:
        h.remove()
    return tot[0]
