#!/bin/sh
# E53 step 2: 2-fold writer-disjoint CNNs inside each training set (for fitting fusion weights without the scored set)
set -e
cd /tmp/e53
PY=/usr/bin/python3
for d in dutch bengali; do
  for k in 0 1; do
    W=$($PY -c "from common import load_index; _,w=load_index('$d'); print(','.join(x['id'] for i,x in enumerate(w) if i%2==$k))")
    $PY train.py --train $d --steps 400 --writers $W --out model_${d}_fold$k.pt > train_${d}_fold$k.log 2>&1
  done
done
for d in dutch bengali; do for k in 0 1; do $PY embed.py --model model_${d}_fold$k.pt --data $d --out emb_${d}_fold$k.npz; done; done
