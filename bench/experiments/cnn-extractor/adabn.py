# side experiment: AdaBN (BN statistics re-estimated on the scored set's images, label-free, transductive)
#   /usr/bin/python3 adabn.py --model model_dutch.pt --data bengali --out emb_bengali_by_dutch_adabn.npz
import argparse, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from common import cache_dataset, build_model
ap = argparse.ArgumentParser(); ap.add_argument("--model"); ap.add_argument("--data"); ap.add_argument("--out"); a = ap.parse_args()
torch.set_num_threads(2)
ck = torch.load(a.model); m = build_model(ck["n_writers"]); m.load_state_dict(ck["state"])
paths, imgs = cache_dataset(a.data)
for mod in m.modules():
    if isinstance(mod, (nn.BatchNorm2d, nn.BatchNorm1d)):
        mod.reset_running_stats(); mod.momentum = None
m.train()
X = lambda i: F.avg_pool2d(torch.from_numpy(imgs[i:i + 128].astype(np.float32)).unsqueeze(1), 2)
with torch.no_grad():
    for i in range(0, len(paths), 128): m(X(i))
    m.eval(); E = np.concatenate([F.normalize(m(X(i)), dim=1).numpy() for i in range(0, len(paths), 128)])
np.savez(a.out, paths=np.array(paths), emb=E)
