//! A stamped file whose bytes change while `stamp verify` reads it does
//! not hold the stamped bytes: it is `modified` (exit 1, rejected), never
//! an operational error (exit 2). A race: repeated, with a writer that
//! keeps changing the file while vouch hashes it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::vouch_at;

#[test]
fn a_file_changing_while_verified_is_modified() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = vouch_at(
        &["keygen", "--origin", "example.com/changing", "--out", "k"],
        d,
    );
    assert_eq!(o.status.code(), Some(0));
    let big = vec![b'a'; 32 << 20];
    std::fs::write(d.join("f"), &big).unwrap();
    let o = vouch_at(&["stamp", "f", "--key", "k", "--out", "r.vouch"], d);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut caught_mid_read = 0;
    for _ in 0..8 {
        let stop = Arc::new(AtomicBool::new(false));
        let path = d.join("f");
        let flag = Arc::clone(&stop);
        // Rewrites a byte in place (same size) over and over: the file
        // changes under the reader.
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut b = 0u8;
            while !flag.load(Ordering::Relaxed) {
                b = b.wrapping_add(1);
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(1 << 20)).unwrap();
                f.write_all(&[b'a' + b % 2]).unwrap();
                f.sync_data().unwrap();
            }
        });
        let o = vouch_at(
            &[
                "stamp", "verify", "r.vouch", "--pub", "k.pub", "--format", "json",
            ],
            d,
        );
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        let status = report["files"][0]["status"]
            .as_str()
            .unwrap_or("ok")
            .to_owned();
        // The writer may have left the stamped byte in place when vouch
        // read it: then the file is ok (exit 0). Never an error.
        match o.status.code() {
            Some(0) => assert_eq!(report["summary"]["ok"], 1, "{out}"),
            Some(1) => {
                assert_eq!(status, "modified", "{out}");
                if out.contains("changed while it was hashed") {
                    caught_mid_read += 1;
                }
            }
            other => panic!("exit {other:?}: {out}"),
        }
        std::fs::write(d.join("f"), &big).unwrap();
    }
    // Not asserted (timing decides), but said when a run never hit the race.
    if caught_mid_read == 0 {
        eprintln!("note: no run caught the file mid-read");
    }
}
