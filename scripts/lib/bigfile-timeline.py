#!/usr/bin/env python3
"""Where each client's wall time went in a `scripts/bench -bigfile
-bigfile-timeline DIR` run: one Markdown table per client run.

    python3 scripts/lib/bigfile-timeline.py DIR

DIR holds runs.tsv (label, client, start and end of each client's run in
Unix seconds), and per server label its access log (JSON, Caddy's) and the
clients' logs (the desktop clients' --logdebug output). The phases:

  start          the client's process start until its first request
  before upload  its first requests (capabilities, user, discovery
                 PROPFIND) until it starts hashing the file
  hashing        the checksum of the file the desktop clients compute
                 before they send a byte (their log's "Computing ...
                 checksum" until the first upload request)
  in requests    the server's time in the upload's requests (start to
                 answer, from the access log: includes receiving the body)
  between        the gaps between those requests: the client's own work
                 from an answer to its next request
  exit           from the last answer until the process ended

A client without a log (curl, the page) shows no hashing; the page's run
starts with its browser's start. The desktop clients' CPU time (user +
system, /usr/bin/time) follows the wall time when it was recorded.
"""
import collections
import datetime
import json
import os
import re
import sys

LOG_TIME = re.compile(r"^(?:(\d{4})-)?(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d):(\d{3})")
UPLOAD_METHODS = {"POST", "PATCH", "PUT", "MKCOL", "MOVE"}
DESKTOP = {"owncloudcmd", "nextcloudcmd"}


def hashing_start(path, year):
    """When a desktop client's log says it started hashing the file (Unix
    seconds; the clients log local time, without the year), or None."""
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        for line in f:
            m = LOG_TIME.match(line)
            if m and "Computing" in line and "checksum of" in line:
                y, mo, d, h, mi, s, ms = (int(g) if g else year for g in m.groups())
                return datetime.datetime(y, mo, d, h, mi, s, ms * 1000).timestamp()
    return None


def requests(path, client, t0, t1):
    """The client's requests in [t0, t1] as (start, end, method, uri, bytes)."""
    out = []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            req = e.get("request", {})
            agent = " ".join(req.get("headers", {}).get("User-Agent", []))
            if client in DESKTOP:
                if "mirall" not in agent:
                    continue
            elif e.get("user_id") != client or agent.startswith("curl/") != client.startswith("curl"):
                continue
            end = e["ts"]
            start = end - e.get("duration", 0)
            if start < t0 - 0.01 or end > t1 + 0.01:
                continue
            out.append((start, end, req.get("method", "?"), req.get("uri", ""), e.get("bytes_read", 0)))
    return sorted(out)


def client_cpu(path):
    """The client's CPU time as /usr/bin/time -f '%e %U %S' wrote it."""
    try:
        with open(path) as f:
            _, user, system = f.read().split()[-3:]
    except (OSError, ValueError):
        return ""
    return "; client CPU %.2f s (user %s, sys %s)" % (float(user) + float(system), user, system)


def phases(run_dir, label, client, t0, t1):
    year = datetime.datetime.fromtimestamp(t0, datetime.timezone.utc).year
    reqs = requests(os.path.join(run_dir, label, "access.log"), client, t0, t1)
    hashing = hashing_start(os.path.join(run_dir, label, client + ".log"), year)
    upload = [r for r in reqs if r[2] in UPLOAD_METHODS]
    rows = collections.OrderedDict()
    if not reqs:
        rows["exit"] = t1 - t0
        return rows, reqs, upload
    first_upload = upload[0][0] if upload else reqs[-1][1]
    rows["start"] = reqs[0][0] - t0
    if hashing and reqs[0][0] <= hashing <= first_upload:
        rows["before upload"] = hashing - reqs[0][0]
        rows["hashing"] = first_upload - hashing
    else:
        rows["before upload"] = first_upload - reqs[0][0]
    busy = sum(r[1] - r[0] for r in upload)
    span = upload[-1][1] - upload[0][0] if upload else 0
    rows["in requests"] = busy
    rows["between"] = span - busy
    rows["exit"] = t1 - (upload[-1][1] if upload else reqs[-1][1])
    return rows, reqs, upload


def main(run_dir):
    with open(os.path.join(run_dir, "runs.tsv")) as f:
        runs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for label, client, t0, t1 in runs:
        t0, t1 = float(t0), float(t1)
        rows, reqs, upload = phases(run_dir, label, client, t0, t1)
        methods = collections.Counter(r[2] for r in upload)
        print("%s, %s: %.2f s wall, %d requests (upload: %s)%s" % (
            label, client, t1 - t0, len(reqs), ", ".join("%s×%d" % m for m in sorted(methods.items())) or "none",
            client_cpu(os.path.join(run_dir, label, client + ".time"))))
        print()
        print("| phase | seconds | share |")
        print("|---|---:|---:|")
        for name, secs in rows.items():
            print("| %s | %.2f | %d %% |" % (name, secs, round(100 * secs / (t1 - t0))))
        if len(upload) > 1:
            gaps = [b[0] - a[1] for a, b in zip(upload, upload[1:])]
            durations = sorted(r[1] - r[0] for r in upload)
            print()
            print("upload requests: median %.3f s, max %.3f s; gaps: mean %.4f s, max %.3f s" % (
                durations[len(durations) // 2], durations[-1], sum(gaps) / len(gaps), max(gaps)))
        print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
