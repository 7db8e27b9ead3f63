//! Shared helpers for the anchor and receipt tests: run the real binary,
//! make logs, and start moto's standalone S3 server on 127.0.0.1.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

// The runner, output readers and the key/log builder are the shared
// support module's (the test crate declares `mod support;`).
#[allow(unused_imports)]
pub use crate::support::{ORIGIN, Work, code, json, stderr, stdout, vouch, vouch_env};

/// The report on the first (only) log of an `anchor verify --format json`
/// document.
pub fn one(o: &Output) -> serde_json::Value {
    let doc = json(o);
    assert_eq!(doc["format"], "vouch-anchor-verify/2", "{doc}");
    doc["logs"][0].clone()
}

/// The single anchored file below a dir target.
pub fn anchored_file(d: &std::path::Path) -> std::path::PathBuf {
    let sub = std::fs::read_dir(d)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_dir(sub)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// The reasons of every rejected, failed or unchecked anchor in a log's
/// verify report ([`one`]), and the log's reason.
pub fn reasons(report: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = report["anchors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["reason"].as_str().map(str::to_owned))
        .collect();
    if let Some(r) = report["log"]["failure"]["reason"].as_str() {
        out.push(format!("log:{r}"));
    }
    out
}

/// Whether process `pid` holds the socket listening on 127.0.0.1:`port`
/// (from /proc/net/tcp and the process's file descriptors).
fn listens_on(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    let want = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // local address, state 0A = LISTEN, inode
            (f.len() > 9 && f[1] == want && f[3] == "0A").then(|| f[9].to_owned())
        })
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|t| {
            let t = t.to_string_lossy();
            inodes.iter().any(|i| t == format!("socket:[{i}]"))
        })
    })
}

/// A free TCP port on 127.0.0.1 (nothing listens on it once returned),
/// never handed out twice in this process: between the probe and the
/// server's own bind (a Python server takes a second to start) another test
/// could otherwise be given the same port and talk to the wrong server.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// moto's standalone S3 server, killed on drop.
pub struct Moto {
    child: Child,
    pub endpoint: String,
    python: PathBuf,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Moto {
    /// Starts moto from `.venv` (made by scripts/setup-test-env.sh). When it
    /// is missing: panics under CI=true, else prints a notice and returns
    /// None so the test can skip.
    pub fn start() -> Option<Moto> {
        Self::start_with(&[])
    }

    pub fn start_with(env: &[(&str, &str)]) -> Option<Moto> {
        // A port can be taken by another server between the probe and
        // moto's bind; then this moto exits and another server answers.
        // Only a listener that belongs to our child counts; else retry.
        for _ in 0..5 {
            match Self::try_start(env) {
                Some(Ok(m)) => return Some(m),
                Some(Err(())) => continue,
                None => return None,
            }
        }
        panic!("moto_server did not start on a port of its own in 5 tries");
    }

    fn try_start(env: &[(&str, &str)]) -> Option<Result<Moto, ()>> {
        let venv = repo_root().join(".venv/bin");
        let server = venv.join("moto_server");
        if !server.exists() {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{} is missing: run scripts/setup-test-env.sh (CI=true: S3 tests must not skip)",
                    server.display()
                );
            }
            eprintln!(
                "NOTICE: skipping an S3 test: {} is missing (run scripts/setup-test-env.sh)",
                server.display()
            );
            return None;
        }
        let port = free_port();
        let mut cmd = Command::new(&server);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("start moto_server");
        let pid = child.id();
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            python: venv.join("python"),
        };
        let start = Instant::now();
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() && listens_on(pid, port) {
                return Some(Ok(moto));
            }
            if moto.child.try_wait().ok().flatten().is_some() {
                return Some(Err(()));
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "moto_server did not start"
            );
            // Polling a starting server (no readiness signal to wait on).
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs Python with boto3 against this server: `s3` is a client.
    /// Returns stdout; panics on failure.
    pub fn py(&self, script: &str) -> String {
        let prelude = format!(
            "import boto3, botocore, datetime, json, base64, hashlib\n\
             from botocore.config import Config\n\
             s3 = boto3.client('s3', endpoint_url='{}', region_name='us-east-1', \
             aws_access_key_id='testing', aws_secret_access_key='testing', \
             config=Config(request_checksum_calculation='when_required'))\n\
             def err(f):\n    try:\n        f()\n        return 'OK'\n    except botocore.exceptions.ClientError as e:\n        return e.response['Error']['Code']\n",
            self.endpoint
        );
        let o = Command::new(&self.python)
            .arg("-c")
            .arg(format!("{prelude}{script}"))
            .output()
            .expect("run python");
        assert!(
            o.status.success(),
            "python failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    }

    /// A bucket with versioning and Object Lock enabled.
    pub fn lock_bucket(&self, name: &str) {
        self.py(&format!(
            "s3.create_bucket(Bucket='{name}', ObjectLockEnabledForBucket=True)"
        ));
    }

    /// A versioned bucket without Object Lock.
    pub fn plain_bucket(&self, name: &str) {
        self.py(&format!(
            "s3.create_bucket(Bucket='{name}')\n\
             s3.put_bucket_versioning(Bucket='{name}', VersioningConfiguration={{'Status': 'Enabled'}})"
        ));
    }
}

/// A local OpenSSL TSA over HTTP with its root certificate file, or None
/// (with a notice; a panic under CI=true) when openssl is missing.
pub struct TestTsa {
    pub url: String,
    pub roots: PathBuf,
    pub other_roots: PathBuf,
    _pki: crate::tsa_support::Pki,
}

pub fn local_tsa(test: &str) -> Option<TestTsa> {
    use crate::tsa_support::{KeyKind, LocalTsa, Pki, openssl_or_skip};
    if !openssl_or_skip(test) {
        return None;
    }
    let pki = Pki::new();
    let root = pki.root("Anchor Test Root", KeyKind::P256);
    let other = pki.root("Other Root", KeyKind::P256);
    let tsa = pki.issue(&root, "Anchor Test TSA", KeyKind::P256, "tsa_ok", 365);
    let server = LocalTsa::start(pki.path().to_path_buf(), tsa, None, "sha256");
    Some(TestTsa {
        url: server.url,
        roots: root.cert_pem.clone(),
        other_roots: other.cert_pem.clone(),
        _pki: pki,
    })
}
