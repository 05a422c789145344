#!/usr/bin/env python3
"""Abuse probes against a running `yoke serve` on loopback, the ones issue 30 reproduced:

  chunked   a chunked body of --flood-mb MB to /translate: the answer must be 413, early, and the
            server's memory must not grow with the flood;
  slow      --slow connections send their headers a byte a second for --slow-seconds while
            ordinary requests go on: those must be answered, and the slow ones get 408;
  crowd     --clients concurrent clients send --requests requests in all, each on a new
            connection (the listen backlog's test): none may fail.

Prints each probe's failures, latencies and the server's resident memory (from /proc, --pid);
exits 1 when a probe failed. Standard library only.

    python3 bench/serve_abuse.py --port 8080 --pid PID [--probes chunked,slow,crowd]
"""
import argparse
import http.client
import json
import socket
import statistics
import sys
import threading
import time


from serve_load import rss_mib  # noqa: E402 - beside this file


def mib(x):
    return "?" if x is None else f"{x:.0f}"


def status_of(answer):
    try:
        return int(answer.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def read_answer(sock, seconds):
    sock.settimeout(seconds)
    out = b""
    try:
        while True:
            got = sock.recv(65536)
            if not got:
                break
            out += got
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def translate(port, timeout, text="a b c"):
    """One /translate on a new connection: (status or error text, seconds)."""
    t = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("POST", "/translate", json.dumps({"text": [text], "beam": 2}), {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        c.close()
        return r.status, time.monotonic() - t
    except Exception as e:  # noqa: BLE001 - every failure is a result here
        return f"{type(e).__name__}: {e}", time.monotonic() - t


def probe_chunked(a):
    before = rss_mib(a.pid)
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    s.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"10000\r\n" + b'["aaaa",' * 8192 + b"\r\n"
    sent, t = 0, time.monotonic()
    s.setblocking(False)
    answer = b""
    while sent < a.flood_mb << 20:
        try:
            answer = s.recv(65536)
            break  # the server answered (or closed)
        except BlockingIOError:
            pass
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            time.sleep(0.001)
        except (BrokenPipeError, ConnectionResetError):
            break
    answer += read_answer(s, 10)
    seconds = time.monotonic() - t
    after = rss_mib(a.pid)
    s.close()
    status = status_of(answer)
    growth = (after - before) if before is not None and after is not None else None
    ok = status == 413 and (growth is None or growth < 64)
    print(f"chunked: status {status} after {sent / 2**20:.1f} MB sent, {seconds:.2f} s; "
          f"RSS {mib(before)} → {mib(after)} MiB" + ("" if ok else "   FAILED"))
    return ok


def probe_slow(a):
    slow = []
    for _ in range(a.slow):
        s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
        slow.append(s)
    request = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"z" * 400 + b"\r\n\r\n"
    stop = threading.Event()

    def trickle():
        for i in range(len(request)):
            if stop.is_set():
                return
            for s in slow:
                try:
                    s.send(request[i:i + 1])
                except OSError:
                    pass
            time.sleep(1.0)
    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    time.sleep(1.5)
    results = []
    t_end = time.monotonic() + a.slow_seconds
    while time.monotonic() < t_end:
        results.append(translate(a.port, a.timeout))
        time.sleep(0.2)
    answers = [status_of(read_answer(s, 30)) for s in slow]
    stop.set()
    for s in slow:
        s.close()
    failed = [r for r in results if r[0] != 200]
    lat = sorted(r[1] for r in results)
    got_408 = sum(1 for x in answers if x == 408)
    ok = not failed and got_408 == len(slow)
    print(f"slow: {len(slow)} slow connections; {len(results)} ordinary requests meanwhile, {len(failed)} failed, "
          f"latency max {lat[-1] * 1000:.0f} ms; {got_408}/{len(slow)} slow ones got 408" + ("" if ok else "   FAILED"))
    for f in failed[:5]:
        print("   ", f)
    return ok


def probe_crowd(a):
    results, lock = [], threading.Lock()
    per_client = [a.requests // a.clients + (1 if i < a.requests % a.clients else 0) for i in range(a.clients)]
    start = threading.Barrier(a.clients)

    def client(n):
        start.wait()
        mine = [translate(a.port, a.timeout) for _ in range(n)]
        with lock:
            results.extend(mine)
    before = rss_mib(a.pid)
    t = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in per_client]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    seconds = time.monotonic() - t
    failed = [r for r in results if r[0] != 200]
    lat = sorted(r[1] for r in results)
    ok = not failed
    print(f"crowd: {a.clients} clients, {len(results)} requests in {seconds:.1f} s, {len(failed)} failed; "
          f"latency p50 {statistics.median(lat) * 1000:.0f} ms, p99 {lat[int(0.99 * (len(lat) - 1))] * 1000:.0f} ms, "
          f"max {lat[-1] * 1000:.0f} ms; RSS {mib(before)} → {mib(rss_mib(a.pid))} MiB" + ("" if ok else "   FAILED"))
    kinds = {}
    for r in failed:
        kinds[str(r[0])[:60]] = kinds.get(str(r[0])[:60], 0) + 1
    for k, n in kinds.items():
        print(f"    {n} × {k}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, default=None, help="the server's process id, to report its memory")
    ap.add_argument("--probes", default="chunked,slow,crowd")
    ap.add_argument("--flood-mb", type=int, default=50)
    ap.add_argument("--slow", type=int, default=70, help="slow connections")
    ap.add_argument("--slow-seconds", type=float, default=15, help="how long ordinary requests run beside them")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a request may take")
    a = ap.parse_args()
    probes = {"chunked": probe_chunked, "slow": probe_slow, "crowd": probe_crowd}
    ok = True
    for name in a.probes.split(","):
        ok = probes[name](a) and ok
    print("all probes passed" if ok else "some probes FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
