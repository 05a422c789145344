#!/usr/bin/env python3
"""Load test of `yoke serve` on loopback: a bounded number of /translate requests from N
concurrent keep-alive connections; prints sentences/s, p50/p99 latency, failed requests and the
server's resident memory before and after (from /proc, when --pid is given). Standard library only.

    python3 bench/serve_load.py --port 8080 --input test.src.txt --requests 3000 --connections 32 --pid PID
"""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--input", required=True, help="source sentences, one a line (cycled)")
    ap.add_argument("--requests", type=int, default=3000, help="requests in all")
    ap.add_argument("--connections", type=int, default=32, help="concurrent connections")
    ap.add_argument("--sentences", type=int, default=1, help="sentences per request")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--model", default=None, help="model name, when the server has several")
    ap.add_argument("--pid", type=int, default=None, help="the server's process id, to report its memory")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args()
    with open(a.input, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    next_request = iter(range(a.requests))
    lock = threading.Lock()
    latencies, failures = [], []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=a.timeout)
        while True:
            with lock:
                i = next(next_request, None)
            if i is None:
                break
            text = [lines[(i * a.sentences + k) % len(lines)] for k in range(a.sentences)]
            body = {"text": text, "beam": a.beam}
            if a.model:
                body["model"] = a.model
            start = time.perf_counter()
            try:
                conn.request("POST", "/translate", json.dumps(body), {"Content-Type": "application/json"})
                res = conn.getresponse()
                data = res.read()
                ok = res.status == 200 and len(json.loads(data)["translations"]) == len(text)
            except Exception as e:  # a failed request is counted, the connection made anew
                ok, data = False, f"{type(e).__name__} {e} after {time.perf_counter() - start:.2f} s".encode()
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=a.timeout)
            elapsed = time.perf_counter() - start
            with lock:
                (latencies if ok else failures).append(elapsed if ok else data[:200])
        conn.close()

    rss_before = rss_mib(a.pid) if a.pid else None
    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(a.connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    rss_after = rss_mib(a.pid) if a.pid else None
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] if latencies else float("nan")
    summary = {
        "requests": a.requests, "connections": a.connections, "sentences_per_request": a.sentences, "beam": a.beam,
        "ok": len(latencies), "failed": len(failures), "seconds": round(wall, 2),
        "sentences_per_s": round(len(latencies) * a.sentences / wall, 1),
        "p50_ms": round(pct(50) * 1000, 1), "p99_ms": round(pct(99) * 1000, 1),
        "mean_ms": round(statistics.mean(latencies) * 1000, 1) if latencies else None,
        "server_rss_mib_before": rss_before and round(rss_before, 1), "server_rss_mib_after": rss_after and round(rss_after, 1),
    }
    if a.json:
        print(json.dumps(summary))
    else:
        for k, v in summary.items():
            print(f"{k:24} {v}")
    for f in failures[:5]:
        print("failure:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
