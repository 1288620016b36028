#!/bin/sh
# make demo: run each grove module on generated data and say what it did.
# Usage: scripts/demo.sh path/to/grove
set -eu
grove=${1:-build/grove}
work=$(mktemp -d "${TMPDIR:-/tmp}/grove-demo-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

echo "== grove $($grove --version | cut -d' ' -f2) demo (files in a temporary folder, removed at the end)"
$grove info --quiet --json >/dev/null

echo
echo "== ball tree (Erwin): 16384 points in 3-D: a full tree, a rotated tree with level-4 balls, a 4-level partition"
$grove gen uniform --n 16384 --dims 3 --seed 1 -o "$work/cloud.npy"
$grove balltree "$work/cloud.npy" --indices "$work/tree.npy" --mask "$work/mask.npy" --verify
$grove gen uniform --n 16384 --dims 3 --seed 2 -o "$work/cloud8.npy"
$grove balltree "$work/cloud8.npy" --rotate 7 --indices "$work/rot.npy" --mask "$work/rotmask.npy" \
    --centers "$work/centers.npy" --radii "$work/radii.npy" --level 4 --verify
$grove balltree "$work/cloud.npy" --levels 4 --indices "$work/part.npy" --verify --quiet
echo "balltree: partition mode (4 levels, 16 balls of 1024 points) verified"
echo
echo "== epsilon join and kNN (RT-HiSS on the CPU): 200000 uniform points in 3-D (about 250 neighbours each), 20000 in 16-D blobs"
$grove gen uniform --n 200000 --dims 3 --seed 3 -o "$work/join.npy"
$grove join "$work/join.npy" --eps 0.0678 --offsets "$work/join_o.npy" --indices "$work/join_i.npy" --verify 20
$grove gen blobs --n 20000 --dims 16 --centers 10 --seed 4 -o "$work/join16.npy"
$grove join "$work/join16.npy" --eps 2.5 --exclude-self --count-only --offsets "$work/join16_o.npy"
$grove knn "$work/join16.npy" -k 10 --exclude-self --indices "$work/knn_i.npy" --distances "$work/knn_d.npy" --verify 20
echo
echo "== EMST, HDBSCAN* and DBSCAN: 20000 points in 12 Gaussian blobs (2-D)"
$grove gen blobs --n 20000 --dims 2 --centers 12 --seed 5 -o "$work/blobs.npy"
$grove emst "$work/blobs.npy" --edges "$work/edges.npy" --weights "$work/weights.npy"
$grove emst "$work/blobs.npy" --mutual-reachability 10 --edges "$work/mr_edges.npy" --weights "$work/mr_weights.npy"
picture=${GROVE_DEMO_OUT:-build}/hdbscan-demo.svg
$grove hdbscan "$work/blobs.npy" --min-cluster-size 100 --min-samples 10 --labels "$work/labels.npy" \
    --probabilities "$work/probabilities.npy" --outlier-scores "$work/scores.npy" --plot "$picture"
echo "hdbscan: cluster picture written to $picture (noise in grey)"
$grove dbscan "$work/blobs.npy" --eps 0.3 --min-samples 10 --labels "$work/dbscan_labels.npy" --core "$work/dbscan_core.npy"
echo
echo "== N-body (Bonsai-style tree gravity): a 20000-particle Plummer sphere, 64 leapfrog steps with energy reports"
render=
if $grove info | grep -q "png: yes"; then render=--render; fi
$grove nbody --ic plummer --n 20000 --seed 1 --dt 0.0078125 --steps 64 --report-every 16 --theta 0.75 --softening 0.01 \
    --snapshot-every 64 --out "$work/nbody" $render --no-progress
if [ -n "$render" ]; then
    picture=${GROVE_DEMO_OUT:-build}/nbody-plummer.png
    cp "$work/nbody/snap_000064.png" "$picture"
    echo "nbody: density projection after 64 steps written to $picture"
else
    echo "nbody: built without libpng, so no picture"
fi
$grove fof "$work/nbody/snap_000064.npy" --b 0.2 --min-members 20 --groups "$work/fof_groups.npy" \
    --catalogue "$work/fof_halos.csv"
echo
echo "demo finished: the ball trees were verified independently and sampled join/kNN queries against brute force (--verify); EMST weights, clusters, energy reports and FoF groups are above."
