# E53: embed every image of a dataset with a trained model (no augmentation).
#   /usr/bin/python3 /tmp/e53/embed.py --model /tmp/e53/model_dutch.pt --data bengali --out /tmp/e53/emb_bengali_by_dutch.npz
import argparse, time
import numpy as np, torch, torch.nn.functional as F
from common import cache_dataset, build_model
ap = argparse.ArgumentParser(); ap.add_argument("--model", required=True); ap.add_argument("--data", required=True); ap.add_argument("--out", required=True)
a = ap.parse_args()
torch.set_num_threads(2)
ck = torch.load(a.model)
m = build_model(ck["n_writers"]); m.load_state_dict(ck["state"]); m.eval()
paths, imgs = cache_dataset(a.data)
out = []
t0 = time.time()
with torch.no_grad():
    for i in range(0, len(paths), 128):
        x = F.avg_pool2d(torch.from_numpy(imgs[i:i + 128].astype(np.float32)).unsqueeze(1), 2)
        out.append(F.normalize(m(x), dim=1).numpy())
E = np.concatenate(out)
print(f"{a.data}: {len(paths)} images embedded in {time.time()-t0:.1f}s ({1000*(time.time()-t0)/len(paths):.2f} ms/img batched, torch CPU)")
np.savez(a.out, paths=np.array(paths), emb=E)
