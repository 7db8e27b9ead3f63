//! Replays the `receipt_verify` fuzz corpus (and truncations and byte
//! changes of each seed) through the same calls as the fuzz target: nothing
//! may panic, and the seeds themselves verify as their names say.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use vouch::receipt::{self, Verdict};

/// Offline: no TSA roots, no targets.
const OFFLINE: vouch::anchor::check::CheckContext<'static> = vouch::anchor::check::CheckContext {
    tsa_roots: None,
    online: None,
};

const KEY: &str = "example.com/fuzz+504fa413+AVCs9qsOgBOcgANSzYcFmSfV5bKJ81fWUHD7cYrw9ps0";

fn exercise(data: &[u8]) -> Option<Verdict> {
    let key = vouch::note::VerifierKey::from_text(KEY).unwrap();
    let r = receipt::parse(data).ok()?;
    Some(
        receipt::verify(
            &r,
            &vouch::chain::TrustedKeys::new([key]).ok()?,
            &OFFLINE,
            None,
        )
        .verdict(),
    )
}

#[test]
fn receipt_corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/receipt_verify");
    let mut seeds = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = if name.starts_with("unanchored") {
            Verdict::SignedNotAnchored
        } else {
            Verdict::Complete
        };
        assert_eq!(exercise(&data), Some(want), "{name}");
        seeds += 1;
        // Every member before `anchors` is evidence; the anchor descriptors
        // after it are locators (docs/FORMAT.md §10), bound only by
        // note_sha256.
        let text = String::from_utf8(data.clone()).unwrap();
        let evidence_end = text.find("\"anchors\"").unwrap();
        for len in (0..data.len()).step_by(11) {
            exercise(&data[..len]);
        }
        for i in 0..data.len() {
            let mut m = data.clone();
            m[i] = match m[i] {
                b'0'..=b'8' => m[i] + 1,
                b'a'..=b'e' => m[i] + 1,
                b'A'..=b'Y' => m[i] + 1,
                _ => m[i] ^ 0x20,
            };
            // A changed evidence byte must never leave a complete verdict
            // (JSON whitespace aside).
            if let Some(Verdict::Complete) = exercise(&m) {
                assert!(
                    i >= evidence_end || data[i].is_ascii_whitespace(),
                    "{name}: changing byte {i} ({:?}) still verifies",
                    data[i] as char
                );
            }
        }
    }
    assert!(seeds >= 3, "seed corpus missing");
}
