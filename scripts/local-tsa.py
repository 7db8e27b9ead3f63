#!/usr/bin/env python3
"""A local RFC 3161 time-stamp authority for trying vouch out and for tests.

OpenSSL's own TSA (`openssl ts -reply`) behind a few lines of HTTP: each
POST body (a TimeStampReq) is answered with the TimeStampResp that
`openssl ts -reply` makes. On first use it makes, in DIR, a test root CA
(root.pem) and a TSA certificate signed by it (critical timeStamping EKU).

    python3 scripts/local-tsa.py --dir /tmp/tsa --port 3161 &
    vouch stamp out/ --key audit.key --tsa http://127.0.0.1:3161/ --tsa-ca /tmp/tsa/root.pem

It prints `listening http://127.0.0.1:PORT/` on stdout once it accepts
requests (`--port 0` lets the system choose). For testing only: the keys
sit unprotected in DIR and the clock is this machine's. See docs/TSA.md.
"""

import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import threading

CNF = """
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused

[ v3_ca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash

[ v3_tsa ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ tsa ]
default_tsa = tsa_config

[ tsa_config ]
dir = .
serial = ./tsaserial
crypto_device = builtin
signer_cert = ./tsa.pem
signer_key = ./tsa.key
certs = ./tsa.pem
signer_digest = sha256
default_policy = 1.3.6.1.4.1.4146.2.3
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def openssl(d, *args):
    subprocess.run(["openssl", *args], cwd=d, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_pki(d):
    """The root CA and the TSA certificate, once."""
    if os.path.exists(os.path.join(d, "tsa.pem")):
        return
    with open(os.path.join(d, "openssl.cnf"), "w") as f:
        f.write(CNF)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl(d, "req", "-config", "openssl.cnf", "-x509", *ec,
            "-keyout", "root.key", "-out", "root.pem", "-days", "3650",
            "-subj", "/CN=vouch local test TSA root", "-extensions", "v3_ca")
    openssl(d, "req", "-config", "openssl.cnf", "-new", *ec,
            "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", "/CN=vouch local test TSA")
    openssl(d, "x509", "-req", "-in", "tsa.csr", "-CA", "root.pem", "-CAkey", "root.key",
            "-CAcreateserial", "-out", "tsa.pem", "-days", "825",
            "-extfile", "openssl.cnf", "-extensions", "v3_tsa")
    with open(os.path.join(d, "tsaserial"), "w") as f:
        f.write("01\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True, help="where the test PKI lives (made on first use)")
    p.add_argument("--port", type=int, default=3161, help="0: the system chooses")
    a = p.parse_args()
    d = os.path.abspath(a.dir)
    os.makedirs(d, exist_ok=True)
    make_pki(d)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n <= 0 or n > 64 << 10:
                self.send_error(400, "a TimeStampReq of 1 byte to 64 KiB")
                return
            query = self.rfile.read(n)
            with lock, tempfile.TemporaryDirectory(dir=d) as t:
                q, r = os.path.join(t, "q.tsq"), os.path.join(t, "r.tsr")
                with open(q, "wb") as f:
                    f.write(query)
                done = subprocess.run(
                    ["openssl", "ts", "-reply", "-config", "openssl.cnf",
                     "-queryfile", q, "-out", r],
                    cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if done.returncode != 0 or not os.path.exists(r):
                    self.send_error(500, "openssl ts -reply failed")
                    return
                with open(r, "rb") as f:
                    reply = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"listening http://127.0.0.1:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
