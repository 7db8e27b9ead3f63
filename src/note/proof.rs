//! C2SP tlog-proof files (c2sp.org/tlog-proof, "Format").
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64 opaque data>          (optional; data may be empty)
//! index <decimal leaf index>
//! <base64 inclusion proof hash>       (zero or more, leaf sibling first)
//!
//! <signed checkpoint note, verbatim>
//! ```
//!
//! [`parse`] checks the layout, that the checkpoint part is a well-formed
//! signed note ([`super::parse`]) whose text is a well-formed checkpoint
//! ([`super::checkpoint::parse`]), and bounds the proof at
//! [`MAX_INCLUSION_PROOF_LEN`] hashes. It verifies nothing.
//! [`TlogProof::verify`] checks the checkpoint signatures ([`super::open`]),
//! the origin, and the inclusion proof ([`crate::merkle::verify_inclusion`])
//! against the checkpoint's size and root. The extra data is never
//! authenticated.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::checkpoint::{parse_decimal, parse_hash};
use super::{MAX_NOTE_SIZE, NoteError, check_chars};
use crate::merkle::{Hash, MAX_INCLUSION_PROOF_LEN};

/// First line of every tlog-proof.
pub const HEADER: &str = "c2sp.org/tlog-proof@v1";

/// Largest tlog-proof [`parse`] accepts: a maximal note plus room for the
/// header, index, proof hashes and extra data.
pub const MAX_PROOF_SIZE: usize = MAX_NOTE_SIZE + 64 * 1024;

/// A parsed (unverified) tlog-proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlogProof {
    /// Opaque, unauthenticated extra data: `None` when the `extra` line is
    /// absent, `Some(vec![])` for an `extra ` line with no data (as Go's
    /// `transparency-dev/merkle` writes for empty non-nil extra data).
    pub extra: Option<Vec<u8>>,
    /// Zero-based index of the entry in the log.
    pub index: u64,
    /// RFC 6962 inclusion proof, from the leaf's sibling up to the root's child.
    pub hashes: Vec<Hash>,
    /// The signed checkpoint note, verbatim (text, blank line, signatures).
    pub checkpoint: String,
}

/// Splits off the next newline-terminated line.
fn next_line(s: &str) -> Option<(&str, &str)> {
    s.split_once('\n')
}

/// Parses a tlog-proof (c2sp.org/tlog-proof, "Format"). Strict: every line
/// ends in a newline, the index is canonical decimal, extra data and hashes
/// are canonical standard base64 (hashes of exactly 32 bytes), and the
/// checkpoint is a well-formed signed checkpoint note.
pub fn parse(bytes: &[u8]) -> Result<TlogProof, NoteError> {
    if bytes.len() > MAX_PROOF_SIZE {
        return Err(NoteError::NoteTooLarge {
            size: bytes.len(),
            max: MAX_PROOF_SIZE,
        });
    }
    let s = check_chars(bytes)?;
    let mut line_no = 1;
    let bad = |line| NoteError::ProofMalformedLine { line };

    let (header, mut rest) = next_line(s).ok_or(bad(line_no))?;
    if header != HEADER {
        return Err(bad(line_no));
    }

    line_no += 1;
    let (mut line, after) = next_line(rest).ok_or(bad(line_no))?;
    rest = after;
    let mut extra = None;
    if let Some(data) = line.strip_prefix("extra ") {
        extra = Some(BASE64.decode(data).map_err(|_| bad(line_no))?);
        line_no += 1;
        (line, rest) = next_line(rest).ok_or(bad(line_no))?;
    }

    let index = line
        .strip_prefix("index ")
        .and_then(parse_decimal)
        .ok_or(bad(line_no))?;

    let mut hashes = Vec::new();
    loop {
        line_no += 1;
        let (line, after) = next_line(rest).ok_or(NoteError::ProofMissingCheckpoint)?;
        rest = after;
        if line.is_empty() {
            break;
        }
        if hashes.len() == MAX_INCLUSION_PROOF_LEN {
            return Err(NoteError::ProofTooLong {
                max: MAX_INCLUSION_PROOF_LEN,
            });
        }
        hashes.push(parse_hash(line).ok_or(bad(line_no))?);
    }

    if rest.is_empty() {
        return Err(NoteError::ProofMissingCheckpoint);
    }
    let note = super::parse(rest.as_bytes())?;
    super::checkpoint::parse(&note.text)?;
    Ok(TlogProof {
        extra,
        index,
        hashes,
        checkpoint: rest.to_owned(),
    })
}

impl TlogProof {
    /// The tlog-proof text. Parses back to `self` when `checkpoint` is a
    /// well-formed signed checkpoint note and there are at most
    /// [`MAX_INCLUSION_PROOF_LEN`] hashes.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(64 + self.hashes.len() * 45 + self.checkpoint.len());
        out.push_str(HEADER);
        out.push('\n');
        if let Some(extra) = &self.extra {
            out.push_str("extra ");
            out.push_str(&BASE64.encode(extra));
            out.push('\n');
        }
        out.push_str("index ");
        out.push_str(&self.index.to_string());
        out.push('\n');
        for h in &self.hashes {
            out.push_str(&BASE64.encode(h));
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&self.checkpoint);
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::merkle;
    use crate::note::{SignerKey, checkpoint::Checkpoint, open, sign};

    /// The header part of the example in c2sp.org/tlog-proof, verbatim.
    const SPEC_HEAD: &str = "c2sp.org/tlog-proof@v1
extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ
index 73894
gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=
B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=
EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=
RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=
AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=

";
    /// The checkpoint text of that example.
    const SPEC_CHECKPOINT: &str =
        "example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n";

    fn signer() -> SignerKey {
        SignerKey::from_seed("example.com/fancylog", &[7; 32]).unwrap()
    }

    #[test]
    fn spec_example_with_real_signature_parses_and_round_trips() {
        let note = sign(SPEC_CHECKPOINT, &[&signer()]).unwrap();
        let text = format!("{SPEC_HEAD}{note}");
        let p = parse(text.as_bytes()).unwrap();
        assert_eq!(p.index, 73894);
        assert_eq!(p.hashes.len(), 5);
        assert_eq!(p.extra.as_deref().map(<[u8]>::len), Some(39));
        assert_eq!(p.checkpoint, note);
        assert_eq!(p.to_text(), text);
        open(p.checkpoint.as_bytes(), &[signer().verifier()]).unwrap();
    }

    #[test]
    fn spec_example_verbatim_is_rejected_for_its_elided_signatures() {
        let verbatim = format!(
            "{SPEC_HEAD}{SPEC_CHECKPOINT}\n\u{2014} example.com/fancylog hI2DJw[...]1roloI=\n"
        );
        assert!(matches!(
            parse(verbatim.as_bytes()),
            Err(NoteError::MalformedSignatureLine { .. })
        ));
    }

    #[test]
    fn generated_proof_round_trips_and_verifies() {
        let leaves: Vec<merkle::Hash> = (0..13u8).map(|i| merkle::leaf_hash(&[i])).collect();
        let cp = Checkpoint {
            origin: "example.com/fancylog".into(),
            size: 13,
            root: merkle::root(&leaves),
            extensions: vec![],
        };
        let note = sign(&cp.to_text(), &[&signer()]).unwrap();
        for (index, extra) in [(0u64, None), (12, Some(b"ctx".to_vec())), (5, Some(vec![]))] {
            let p = TlogProof {
                extra,
                index,
                hashes: merkle::inclusion_proof(&leaves, index).unwrap(),
                checkpoint: note.clone(),
            };
            let parsed = parse(p.to_text().as_bytes()).unwrap();
            assert_eq!(parsed, p);
            let v = open(parsed.checkpoint.as_bytes(), &[signer().verifier()]).unwrap();
            let c = crate::note::checkpoint::parse(v.text()).unwrap();
            merkle::verify_inclusion(
                &leaves[index as usize],
                parsed.index,
                c.size,
                &parsed.hashes,
                &c.root,
            )
            .unwrap();
        }
        // A single-leaf tree has an empty proof: the blank line follows index.
        let p = TlogProof {
            extra: None,
            index: 0,
            hashes: vec![],
            checkpoint: note.clone(),
        };
        assert!(
            p.to_text()
                .starts_with("c2sp.org/tlog-proof@v1\nindex 0\n\n")
        );
        assert_eq!(parse(p.to_text().as_bytes()).unwrap(), p);
    }

    #[test]
    fn malformed_proofs_are_rejected() {
        let note = sign(SPEC_CHECKPOINT, &[&signer()]).unwrap();
        let h = "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=";
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "tlog_proof_malformed_line"),
            (
                format!("c2sp.org/tlog-proof@v2\nindex 1\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("c2sp.org/tlog-proof@v1 \nindex 1\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex 01\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex -1\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex  1\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nextra !!\nindex 1\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex 1\nextra AA==\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex 1\n{h}x\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex 1\nAAAA\n\n{note}"),
                "tlog_proof_malformed_line",
            ),
            (
                format!("{HEADER}\nindex 1\n{h}\n"),
                "tlog_proof_missing_checkpoint",
            ),
            (
                format!("{HEADER}\nindex 1\n{h}\n\n"),
                "tlog_proof_missing_checkpoint",
            ),
            (
                format!("{HEADER}\nindex 1\n{h}"),
                "tlog_proof_missing_checkpoint",
            ),
            (
                format!("{HEADER}\nindex 1\n\n\n{note}"),
                "checkpoint_empty_line",
            ),
            (
                format!("{HEADER}\nindex 1\n\nnot a note\n"),
                "note_missing_signature_block",
            ),
            (
                format!(
                    "{HEADER}\nindex 1\n\n{}",
                    sign("o\nx\ny\n", &[&signer()]).unwrap()
                ),
                "checkpoint_bad_size",
            ),
            (
                format!("{HEADER}\nindex 1\n{}\n{note}", vec![h; 65].join("\n")),
                "tlog_proof_too_long",
            ),
            (
                format!("{HEADER}\r\nindex 1\n\n{note}"),
                "note_control_character",
            ),
        ];
        for (text, code) in cases {
            let err = parse(text.as_bytes()).unwrap_err();
            assert_eq!(err.code(), code, "{text:?}");
        }
        let empty_extra = format!("{HEADER}\nextra \nindex 1\n\n{note}");
        assert_eq!(parse(empty_extra.as_bytes()).unwrap().extra, Some(vec![]));
        let ok = format!("{HEADER}\nindex 1\n{}\n\n{note}", vec![h; 64].join("\n"));
        assert_eq!(parse(ok.as_bytes()).unwrap().hashes.len(), 64);
        let huge = vec![b'a'; MAX_PROOF_SIZE + 1];
        assert_eq!(parse(&huge).unwrap_err().code(), "note_too_large");
    }
}
