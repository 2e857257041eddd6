#!/usr/bin/env python3
# Two builds (or settings) of hotfuse compared op by op inside one model's graph, where a
# shared host's speed moves between processes by more than most changes: each run's op
# medians (report.json ops_before, --fusion off) are divided by the summed medians of the
# ops whose names start with REF_PREFIX, ops the change leaves alone, so a run that landed in
# a slow stretch is scaled back. The two alternate, ROUNDS runs each; printed per op: the
# median normalised time of A and of B, and B / A, for the ops that moved by more than 5%.
#
#   bench/ops_ab.py MODEL_DIR ROUNDS THREADS REF_PREFIX A B
#
# A and B: a hotfuse-run binary, optionally with environment settings after it: e.g.
# `/tmp/old/hotfuse-run` and `build/hotfuse-run`, or `build/hotfuse-run,NAME=VALUE`. The
# reference ops must not change between A and B.
# bench/RESULTS.md (eleventh session) used it with REF_PREFIX /layer1/ on the ResNets.
import collections, json, os, statistics, subprocess, sys, tempfile

model, rounds, threads, ref_prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
specs = sys.argv[5:7]
report = os.path.join(tempfile.mkdtemp(prefix="hf-ops-ab-"), "r.json")
norm = [collections.defaultdict(list), collections.defaultdict(list)]
for _ in range(rounds):
    for k, spec in enumerate(specs):
        binary, *settings = spec.split(",")
        env = dict(os.environ, **dict(s.split("=", 1) for s in settings))
        subprocess.run([binary, os.path.join(model, "model.onnx"), "--inputs",
                        os.path.join(model, "test_data_set_0"), "--fusion", "off", "--iters", "30",
                        "--threads", threads, "--report", report],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        ops = json.load(open(report))["ops_before"]
        ref = sum(o["time_ms"] for o in ops if o["node"].startswith(ref_prefix))
        if ref <= 0:
            sys.exit(f"no op of {model} starts with {ref_prefix}")
        for o in ops:
            norm[k][o["node"]].append(o["time_ms"] / ref)
print(f"{'op':60s} {'A':>8s} {'B':>8s} {'B/A':>6s}")
for node in norm[0]:
    a, b = statistics.median(norm[0][node]), statistics.median(norm[1][node])
    if a > 0 and abs(b / a - 1) > 0.05:
        print(f"{node[:60]:60s} {a:8.4f} {b:8.4f} {b / a:6.2f}")
