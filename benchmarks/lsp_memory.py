"""The language server's memory over many edits, traced by tracemalloc (issue 27).

    PYTHONPATH=. python benchmarks/lsp_memory.py [--rounds 4] [--edits 1000] [--top 8]

The server runs in this process (build_server + serve on a pair of pipes, in a
thread), so that tracemalloc sees every allocation it keeps; a client thread
speaks JSON-RPC to it as an editor does while you type: each edit is a
`didChange` of the whole buffer (one line changed, the version one higher)
followed by the `inlayHint` request an editor sends for the new text, awaited.
After each round the garbage is collected and the traced memory printed: a
server that keeps nothing per edit stays flat from the second round on (the
first pays for imports, caches and the watchdog). `--top` lists the lines that
allocated what grew between the first and the last round. Nothing here runs in
the test suite: the tests assert what is retained (counts), never bytes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import re
import sys
import threading
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TEXT = (
    "from einops import rearrange\n"
    "import torch\n\n\n"
    "def f(x, w):\n"
    '    y = rearrange(x, "b (h d) -> b h d", h=8)\n'
    '    z = torch.einsum("bhd,de->bhe", y, w)\n'
    "    return z  # edit {n}\n"
)


class Client:
    def __init__(self, out, inp):
        self.out, self.inp = out, inp
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = self.inp.read(1)
                if not byte:
                    return
                header += byte
            length = int(re.search(rb"content-length: *(\d+)", header, re.IGNORECASE)[1])
            msg = json.loads(self.inp.read(length))
            if "id" in msg and "method" not in msg:
                self.replies.put(msg)

    def send(self, msg: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.out.flush()

    def call(self, id_, method: str, params) -> dict:
        self.send({"id": id_, "method": method, "params": params})
        while True:
            reply = self.replies.get(timeout=120)
            if reply.get("id") == id_:
                return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--edits", type=int, default=1000, help="edits per round")
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()

    tracemalloc.start(12)
    from shapelint import lsp

    server = lsp.build_server()
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    stdin, stdout = os.fdopen(to_server, "rb"), os.fdopen(from_server, "wb")
    threading.Thread(target=lsp.serve, args=(server, stdin, stdout), daemon=True).start()
    client = Client(os.fdopen(from_client, "wb"), os.fdopen(to_client, "rb"))

    root = Path.cwd()
    uri = (root / "lsp_memory_bench.py").as_uri()
    client.call(1, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    client.send({"method": "initialized", "params": {}})
    doc = {"uri": uri, "languageId": "python", "version": 0, "text": TEXT.format(n=0)}
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}

    version = 0
    first = None
    print(f"{'round':>5} {'edits':>7} {'traced MB':>10} {'growth MB':>10} {'s':>6}")
    for r in range(args.rounds):
        t = time.monotonic()
        for _ in range(args.edits):
            version += 1
            change = {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": TEXT.format(n=version)}],
            }
            client.send({"method": "textDocument/didChange", "params": change})
            hint = {"textDocument": {"uri": uri}, "range": whole}
            reply = client.call(10 + version, "textDocument/inlayHint", hint)
            assert "result" in reply, reply
        time.sleep(1.0)  # the debounced publish of the last edit
        gc.collect()
        now, _ = tracemalloc.get_traced_memory()
        snap = tracemalloc.take_snapshot()
        base = first[0] if first else now
        print(
            f"{r + 1:>5} {version:>7} {now / 1e6:>10.2f} {(now - base) / 1e6:>10.2f}"
            f" {time.monotonic() - t:>6.1f}",
            flush=True,
        )
        if first is None:
            first = (now, snap)
    if args.top and first is not None:
        print(f"\nwhat grew from round 1 to round {args.rounds}:")
        for stat in snap.compare_to(first[1], "lineno")[: args.top]:
            print(f"  {stat.size_diff / 1e3:>9.1f} kB {stat.count_diff:>+7}  {stat.traceback[0]}")
    client.call(2, "shutdown", None)
    client.send({"method": "exit"})


if __name__ == "__main__":
    main()
