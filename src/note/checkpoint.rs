//! C2SP tlog-checkpoint note text (c2sp.org/tlog-checkpoint, "Note text").
//!
//! ```text
//! <origin>
//! <tree size, decimal>
//! <base64 RFC 6962 root hash>
//! [extension lines]
//! ```
//!
//! [`parse`] checks only the shape of the text. It does not verify the
//! signature (use [`super::open`] first and parse [`super::VerifiedNote::text`]),
//! and does not check that the origin matches the signer's key name or that the
//! root is the root of any particular log.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::{MAX_NOTE_SIZE, NoteError, check_chars};
use crate::merkle::Hash;

/// A checkpoint body: a log's origin, tree size and root hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's origin line (non-empty).
    pub origin: String,
    /// Number of leaves in the tree.
    pub size: u64,
    /// RFC 6962 root hash of the tree of `size` leaves.
    pub root: Hash,
    /// Opaque extension lines (each non-empty), in order.
    pub extensions: Vec<String>,
}

/// Parses a canonical ASCII decimal `u64`: digits only, no sign, no leading
/// zero unless the number is `0`.
pub(crate) fn parse_decimal(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if canonical { s.parse().ok() } else { None }
}

/// Decodes canonical standard base64 of exactly 32 bytes.
pub(crate) fn parse_hash(s: &str) -> Option<Hash> {
    BASE64.decode(s).ok()?.try_into().ok()
}

/// Parses checkpoint note text (c2sp.org/tlog-checkpoint, "Note text").
///
/// Strict: the text must end in a newline, use no control character other
/// than newline, and consist of at least three lines, all non-empty: origin;
/// tree size as canonical decimal; root hash as standard base64 of 32 bytes;
/// then any extension lines.
pub fn parse(text: &str) -> Result<Checkpoint, NoteError> {
    if text.len() > MAX_NOTE_SIZE {
        return Err(NoteError::NoteTooLarge {
            size: text.len(),
            max: MAX_NOTE_SIZE,
        });
    }
    check_chars(text.as_bytes())?;
    let body = text
        .strip_suffix('\n')
        .ok_or(NoteError::MissingFinalNewline)?;
    let mut lines = body.split('\n');
    let mut next = |line: usize| match lines.next() {
        None => Err(NoteError::CheckpointMissingLine { line }),
        Some("") => Err(NoteError::CheckpointEmptyLine { line }),
        Some(l) => Ok(l),
    };
    let origin = next(1)?.to_owned();
    let size = parse_decimal(next(2)?).ok_or(NoteError::CheckpointBadSize)?;
    let root = parse_hash(next(3)?).ok_or(NoteError::CheckpointBadRoot)?;
    let mut extensions = Vec::new();
    for (i, line) in lines.enumerate() {
        if line.is_empty() {
            return Err(NoteError::CheckpointEmptyLine { line: i + 4 });
        }
        extensions.push(line.to_owned());
    }
    Ok(Checkpoint {
        origin,
        size,
        root,
        extensions,
    })
}

impl Checkpoint {
    /// The note text: origin, size, base64 root and extension lines, each
    /// followed by a newline. It parses back to `self` when the fields obey
    /// the rules [`parse`] checks (no newlines or control characters, no
    /// empty origin or extension line).
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            BASE64.encode(self.root)
        );
        for ext in &self.extensions {
            out.push_str(ext);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The example in c2sp.org/tlog-checkpoint.
    const SPEC_NOTE: &str = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n\u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n";

    #[test]
    fn spec_example_parses_and_round_trips() {
        let note = crate::note::parse(SPEC_NOTE.as_bytes()).unwrap();
        let cp = parse(&note.text).unwrap();
        assert_eq!(cp.origin, "example.com/behind-the-sofa");
        assert_eq!(cp.size, 20852163);
        assert!(cp.extensions.is_empty());
        assert_eq!(cp.to_text(), note.text);
        // Nobody here trusts that key: open must say so.
        let other = crate::note::SignerKey::from_seed("example.com/behind-the-sofa", &[1; 32])
            .unwrap()
            .verifier();
        assert!(matches!(
            crate::note::open(SPEC_NOTE.as_bytes(), &[other]),
            Err(NoteError::UnknownKey { .. })
        ));
    }

    #[test]
    fn extensions_round_trip() {
        let text = "o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\next one\next two\n";
        let cp = parse(text).unwrap();
        assert_eq!(cp.size, 0);
        assert_eq!(cp.root, crate::merkle::empty_root());
        assert_eq!(cp.extensions, ["ext one", "ext two"]);
        assert_eq!(cp.to_text(), text);
    }

    #[test]
    fn malformed_checkpoints_are_rejected() {
        let root = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
        let cases: Vec<(String, &str)> = vec![
            (format!("o\n1\n{root}"), "note_missing_final_newline"),
            ("o\n1\n".into(), "checkpoint_missing_line"),
            ("o\n".into(), "checkpoint_missing_line"),
            ("\n".into(), "checkpoint_empty_line"),
            (format!("\n1\n{root}\n"), "checkpoint_empty_line"),
            (format!("o\n01\n{root}\n"), "checkpoint_bad_size"),
            (format!("o\n+1\n{root}\n"), "checkpoint_bad_size"),
            (format!("o\n-1\n{root}\n"), "checkpoint_bad_size"),
            (format!("o\n 1\n{root}\n"), "checkpoint_bad_size"),
            (
                format!("o\n18446744073709551616\n{root}\n"),
                "checkpoint_bad_size",
            ),
            ("o\n1\nAAAA\n".into(), "checkpoint_bad_root"),
            (format!("o\n1\n{root}=\n"), "checkpoint_bad_root"),
            (format!("o\n1\n{}\n", &root[..43]), "checkpoint_bad_root"),
            (format!("o\n1\n{root}\n\n"), "checkpoint_empty_line"),
            (format!("o\n1\n{root}\na\n\nb\n"), "checkpoint_empty_line"),
            (format!("o\r\n1\n{root}\n"), "note_control_character"),
        ];
        for (text, code) in cases {
            let err = parse(&text).unwrap_err();
            assert_eq!(err.code(), code, "{text:?}");
        }
        assert_eq!(
            parse("o\n18446744073709551615\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n")
                .unwrap()
                .size,
            u64::MAX
        );
    }
}
