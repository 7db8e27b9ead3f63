//! Shared helpers for the soundness tests: run the real binary, build logs
//! through the CLI, and forge records, notes and proofs by hand as an
//! attacker with write access to the log (and sometimes a stolen key).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use vouch::chain::record::{self, NewRecord};
use vouch::merkle::{Hash, leaf_hash};
use vouch::note::{SignerKey, checkpoint::Checkpoint};

// The runner and output readers are the shared support module's (the test
// crate declares `mod support;`).
#[allow(unused_imports)]
pub use crate::support::{BIN, both, code, json, stderr, stdout, vouch_at, vouch_timeout};

/// Asserts the process did not panic (exit 101 or a panic message).
pub fn no_panic(o: &Output, what: &str) {
    assert_ne!(code(o), 101, "{what} panicked: {}", both(o));
    assert!(
        !stderr(o).contains("panicked"),
        "{what} panicked: {}",
        both(o)
    );
    assert!(code(o) >= 0, "{what} was killed by a signal: {}", both(o));
}

/// A temporary working directory.
pub struct Work {
    pub dir: tempfile::TempDir,
}

impl Work {
    pub fn new() -> Work {
        Work {
            dir: crate::support::workdir(),
        }
    }

    /// A work dir under /tmp, mode 755 all the way, for runs as another user.
    pub fn world_readable() -> Work {
        let dir = tempfile::Builder::new()
            .prefix("vouch-soundness-")
            .tempdir_in("/tmp")
            .unwrap();
        chmod(dir.path(), 0o755);
        Work { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn p(&self) -> &Path {
        self.dir.path()
    }

    pub fn run(&self, args: &[&str]) -> Output {
        vouch_at(args, self.p())
    }

    /// Runs and asserts exit 0.
    pub fn ok(&self, args: &[&str]) -> Output {
        let o = self.run(args);
        assert_eq!(code(&o), 0, "vouch {args:?}: {}", both(&o));
        o
    }

    /// `vouch keygen --origin ORIGIN --out NAME`: NAME and NAME.pub.
    pub fn keygen(&self, origin: &str, name: &str) -> SignerKey {
        self.ok(&["keygen", "--origin", origin, "--out", name]);
        self.signer(name)
    }

    /// The signer key in private key file `name`.
    pub fn signer(&self, name: &str) -> SignerKey {
        let text = std::fs::read_to_string(self.path(name)).unwrap();
        SignerKey::from_text(text.trim()).unwrap()
    }

    pub fn append(&self, log: &str, key: &str, n: usize) {
        for i in 0..n {
            self.ok(&["append", log, "--key", key, &format!("{{\"i\":{i}}}")]);
        }
    }

    pub fn checkpoint(&self, log: &str, key: &str) -> String {
        stdout(&self.ok(&["checkpoint", log, "--key", key]))
    }

    pub fn rotate(&self, log: &str, old: &str, new: &str) {
        self.ok(&["rotate", log, "--key", old, "--new-key", new]);
    }

    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    /// `vouch verify --format json ARGS`.
    pub fn verify_json(&self, args: &[&str]) -> (i32, Value, Output) {
        let mut all = vec!["verify", "--format", "json"];
        all.extend_from_slice(args);
        let o = self.run(&all);
        let v = json(&o);
        (code(&o), v, o)
    }
}

pub fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Appends a record of any kind, reserved ones included, as a forger with
/// write access would (the CLI refuses reserved kinds).
pub fn append_forged(path: &Path, origin: &str, kind: &str, body: &Value) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (seq, prev) = match text.lines().last() {
        Some(last) => {
            let rec: Value = serde_json::from_str(last).unwrap();
            (rec["seq"].as_u64().unwrap() + 1, leaf_hash(last.as_bytes()))
        }
        None => (0, record::genesis_prev(origin)),
    };
    append_forged_at(path, origin, seq, prev, kind, body);
    seq
}

/// Appends a record with the given seq and prev.
pub fn append_forged_at(path: &Path, origin: &str, seq: u64, prev: Hash, kind: &str, body: &Value) {
    let mut line = Vec::new();
    record::encode(
        &NewRecord {
            origin,
            seq,
            prev,
            ts: "2026-11-29T16:00:00.000Z",
            kind,
            body,
        },
        &mut line,
    )
    .unwrap();
    line.push(b'\n');
    let mut bytes = std::fs::read(path).unwrap_or_default();
    bytes.extend_from_slice(&line);
    std::fs::write(path, bytes).unwrap();
}

/// The leaf hashes of every line of the log.
pub fn leaves(path: &Path) -> Vec<Hash> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| leaf_hash(l.as_bytes()))
        .collect()
}

/// The checkpoint text (unsigned) of the first `size` records of the log.
pub fn checkpoint_text(path: &Path, origin: &str, size: u64, extensions: &[String]) -> String {
    let l = leaves(path);
    Checkpoint {
        origin: origin.to_owned(),
        size,
        root: vouch::merkle::root(&l[..size as usize]),
        extensions: extensions.to_vec(),
    }
    .to_text()
}

/// A signed note over the first `size` records of the log.
pub fn sign_tree(path: &Path, origin: &str, size: u64, signers: &[&SignerKey]) -> String {
    vouch::note::sign(&checkpoint_text(path, origin, size, &[]), signers).unwrap()
}

/// Forges a checkpoint record at the end of the log over all records so
/// far, signed by `signers`.
pub fn forge_checkpoint(path: &Path, origin: &str, signers: &[&SignerKey]) -> u64 {
    let size = leaves(path).len() as u64;
    let note = sign_tree(path, origin, size, signers);
    append_forged(
        path,
        origin,
        "checkpoint",
        &serde_json::json!({ "note": note }),
    )
}

/// Forges a key rotation record to `new`, signed by `signers` (the note
/// names the new key in its extension line).
pub fn forge_rotation(path: &Path, origin: &str, new: &SignerKey, signers: &[&SignerKey]) -> u64 {
    let size = leaves(path).len() as u64;
    let new_text = new.verifier().to_text();
    let text = checkpoint_text(
        path,
        origin,
        size,
        &[format!("vouch-key-rotation {new_text}")],
    );
    let note = vouch::note::sign(&text, signers).unwrap();
    append_forged(
        path,
        origin,
        "key_rotation",
        &serde_json::json!({ "new_key": new_text, "note": note }),
    )
}

/// Forges plain event records (as the log's writer would, without a key).
pub fn forge_events(path: &Path, origin: &str, n: usize) {
    for i in 0..n {
        append_forged(path, origin, "event", &serde_json::json!({ "forged": i }));
    }
}

/// Replaces the signature bytes of the signature line of `name`+key id
/// `key_id` with garbage of the same length (a bad signature).
pub fn corrupt_signature(note: &str, signer: &SignerKey) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = String::new();
    for line in note.split_inclusive('\n') {
        let prefix = format!("— {} ", signer.name());
        if let Some(rest) = line.strip_prefix(&prefix) {
            let mut raw = b64.decode(rest.trim_end()).unwrap();
            if u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) == signer.key_id() {
                raw[10] ^= 0x55;
                out.push_str(&format!("{prefix}{}\n", b64.encode(&raw)));
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// A tlog-proof for record `index` of the first `size` records of the log,
/// carrying `note` as its checkpoint.
pub fn tlog_proof(path: &Path, index: u64, size: u64, note: &str) -> String {
    use base64::Engine as _;
    let l = leaves(path);
    let hashes = vouch::merkle::inclusion_proof(&l[..size as usize], index).unwrap();
    let mut text = format!("c2sp.org/tlog-proof@v1\nindex {index}\n");
    for h in hashes {
        text.push_str(&base64::engine::general_purpose::STANDARD.encode(h));
        text.push('\n');
    }
    text.push('\n');
    text.push_str(note);
    text
}

/// A consistency proof from `old` to `new` records of the log, carrying
/// `note` as the newer checkpoint.
pub fn consistency_proof(path: &Path, old: u64, new: u64, note: &str) -> String {
    use base64::Engine as _;
    let l = leaves(path);
    let hashes = vouch::merkle::consistency_proof(&l[..new as usize], old).unwrap();
    let mut text = format!("vouch/consistency-proof/v1\nold {old}\nnew {new}\n");
    for h in hashes {
        text.push_str(&base64::engine::general_purpose::STANDARD.encode(h));
        text.push('\n');
    }
    text.push('\n');
    text.push_str(note);
    text
}

/// The `n`th line of the log (0-based), without newline.
pub fn line_of(path: &Path, n: usize) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .nth(n)
        .unwrap()
        .to_owned()
}

/// Status and failure reason of the log row whose origin is `origin`.
pub fn row<'a>(v: &'a Value, origin: &str) -> &'a Value {
    v["logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["origin"] == origin)
        .unwrap_or_else(|| panic!("no row for {origin}: {v}"))
}

pub fn reasons(v: &Value) -> Vec<String> {
    v["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["failure"]["reason"].as_str().map(str::to_owned))
        .collect()
}
