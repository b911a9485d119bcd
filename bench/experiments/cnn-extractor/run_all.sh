#!/bin/sh
# E53 end to end, as actually run (times are wall clock on the shared 2-core box).
set -e
PY=/usr/bin/python3   # Debian python; apt python3-torch 1.13 / numpy / PIL
# 0. hand-crafted LODO baseline + per-trial JSONL (worktree /tmp/e53wt, patched protocol.ts/accuracy.ts)
cd /tmp/e53wt
TRIALS_OUT=/tmp/e53/trials.jsonl npx tsx bench/accuracy.ts /work/shared/datasets --cache /tmp/fcache9 --out /tmp/e53/out > /tmp/e53/bench.stdout 2> /tmp/e53/bench.stderr
# hand-crafted 5-fold writer-disjoint cv scores of each set (only used to FIT fusion weights for the other set)
for d in sigcomp2011-dutch bhsig260-bengali; do
  TRIALS_DATASET=$d TRIALS_OUT=/tmp/e53/trials_cv_$d.jsonl npx tsx bench/accuracy.ts /work/shared/datasets/$d --weights cv --cache /tmp/fcache9 --json /tmp/e53/out/cv-$d.json > /tmp/e53/bench_cv_$d.stdout 2> /tmp/e53/bench_cv_$d.stderr
done
cd /tmp/e53
# 1. LODO CNNs (preprocessing cache /tmp/e53/cache/*.npz is built on first use)
$PY train.py --train dutch --minutes 13 --out model_dutch.pt > train_dutch.log 2>&1      # ran 622 steps (contended)
$PY train.py --train bengali --steps 1000 --out model_bengali.pt > train_bengali.log 2>&1
# 2. 2-fold writer-disjoint CNNs inside each training set (400 steps each) + their embeddings
./run_folds.sh
# 3. embeddings of the scored sets, EERs, fusion
$PY embed.py --model model_dutch.pt --data bengali --out emb_bengali_by_dutch.npz
$PY embed.py --model model_bengali.pt --data dutch --out emb_dutch_by_bengali.npz
for o in "" --nonorm; do
$PY eval.py --trials trials.jsonl --emb bengali=emb_bengali_by_dutch.npz --emb dutch=emb_dutch_by_bengali.npz --weights 0.1,0.25,0.5 $o \
  --fit bengali=dutch:trials_cv_sigcomp2011-dutch.jsonl:emb_dutch_fold0.npz,emb_dutch_fold1.npz \
  --fit dutch=bengali:trials_cv_bhsig260-bengali.jsonl:emb_bengali_fold0.npz,emb_bengali_fold1.npz
done | tee eval.out
$PY boot.py | tee boot.out
# side experiment (transductive, label-free): AdaBN on the scored set
$PY adabn.py --model model_dutch.pt --data bengali --out emb_bengali_by_dutch_adabn.npz
$PY adabn.py --model model_bengali.pt --data dutch --out emb_dutch_by_bengali_adabn.npz
$PY eval.py --trials trials.jsonl --emb bengali=emb_bengali_by_dutch_adabn.npz --emb dutch=emb_dutch_by_bengali_adabn.npz --weights 0.1,0.25 | tee eval_adabn.out
