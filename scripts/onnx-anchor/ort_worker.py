#!/usr/bin/env python3
"""ONNX Runtime side of higmem's embedding anchor (scripts/onnx-anchor.sh).

A worker process driven by BenchmarkONNXAnchor (embed/minilm/anchor_test.go)
over JSON lines: one request a line on stdin, one reply a line on stdout.

    {"cmd": "load", "model": PATH, "threads": T}
        -> {"ok": true, "version": "1.x.y"}
    {"cmd": "set", "name": "short", "ids": [[101, ...], ...]}
        -> {"ok": true, "texts": N, "tokens": M}
    {"cmd": "run", "name": "short", "batch": B, "spin": true, "vectors": false}
        -> {"ok": true, "seconds": S, "vectors": [[...], ...] (if asked)}

The token ids are higmem's own (its tokenizer, its "passage: " prompt), so both
sides embed exactly the same input. "run" embeds the named set in batches of
B texts taken in order of length (the Go side hands them sorted), each batch
padded to its longest text with an attention mask, as a sentence-transformers
pipeline on ONNX Runtime does; B = 1 runs every text alone, unpadded. It mean
pools the last hidden state over the mask and L2-normalises, and S is the
wall time of that alone (perf_counter), not of the JSON exchange. The session
uses T intra-op threads, one inter-op thread, all graph optimisations, and
its intra-op threads spin while they wait for work when "spin" is true (ONNX
Runtime's default: the fastest on an idle machine) or sleep when it is false
(the fastest on a busy one); the worker keeps one session of each kind.

Test and benchmark only: higmem never imports or runs ONNX Runtime.
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    model, threads = None, 1
    sessions = {}  # allow_spinning → InferenceSession
    sets = {}
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req.get("cmd")
        try:
            if cmd == "load":
                model, threads = req["model"], int(req["threads"])
                sessions = {True: session(model, threads, True)}
                reply = {"ok": True, "version": ort.__version__}
            elif cmd == "set":
                ids = [np.asarray(x, dtype=np.int64) for x in req["ids"]]
                sets[req["name"]] = ids
                reply = {"ok": True, "texts": len(ids), "tokens": int(sum(len(x) for x in ids))}
            elif cmd == "run":
                spin = bool(req.get("spin", True))
                if spin not in sessions:
                    sessions[spin] = session(model, threads, spin)
                vecs, secs = run(sessions[spin], sets[req["name"]], int(req.get("batch", 1)))
                reply = {"ok": True, "seconds": secs}
                if req.get("vectors"):
                    reply["vectors"] = [[float(v) for v in row] for row in vecs]
            else:
                reply = {"ok": False, "error": "unknown command %r" % cmd}
        except Exception as e:  # reported to the Go side, which fails the run
            reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def session(model, threads, spin):
    """An ONNX Runtime CPU session of model with threads intra-op threads."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def run(sess, ids, batch):
    """Embeds ids in batches; returns the vectors and the seconds taken."""
    names = {i.name for i in sess.get_inputs()}
    vecs = []
    start = time.perf_counter()
    for b in range(0, len(ids), batch):
        chunk = ids[b : b + batch]
        n = max(len(x) for x in chunk)
        input_ids = np.zeros((len(chunk), n), dtype=np.int64)
        mask = np.zeros((len(chunk), n), dtype=np.int64)
        for i, x in enumerate(chunk):
            input_ids[i, : len(x)] = x
            mask[i, : len(x)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = sess.run(None, feed)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        vecs.extend(pooled)
    return vecs, time.perf_counter() - start


if __name__ == "__main__":
    main()
