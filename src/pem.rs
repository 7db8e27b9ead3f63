//! PEM (RFC 7468) blocks, read strictly: every BEGIN line needs its
//! matching END line and a base64 body. Each block is decoded by
//! `pem-rfc7468`; this module only finds where the blocks are, since that
//! crate reads one document at a time.

use pem_rfc7468::LineEnding;

const BEGIN: &str = "-----BEGIN ";
const DASHES: &str = "-----";

/// Every PEM block with its exact label, or `None` when the input is not
/// PEM (or a block is not closed by a matching END line, or not base64).
///
/// The input must start with a BEGIN line (leading whitespace aside); text
/// between and after blocks is skipped (RFC 7468 §5.2 explanatory text).
/// The base64 lines of a block may be of any one width (64 as written by
/// OpenSSL, 76, or a single line), with LF or CRLF line ends.
pub(crate) fn labelled_blocks(data: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let text = std::str::from_utf8(data).ok()?;
    if !text.trim_start().starts_with(BEGIN) {
        return None;
    }
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let block = &rest[start..];
        let after = &block[BEGIN.len()..];
        let label = &after[..after.find(DASHES)?];
        let end_marker = format!("-----END {label}-----");
        let end = after.find(&end_marker)? + BEGIN.len() + end_marker.len();
        let (found, der) = decode_block(&block[..end])?;
        if found != label {
            return None;
        }
        out.push((label.to_owned(), der));
        rest = &block[end..];
    }
    Some(out)
}

/// Decodes one block, from its BEGIN line to the end of its END line.
fn decode_block(block: &str) -> Option<(&str, Vec<u8>)> {
    let mut decoder = pem_rfc7468::Decoder::new_detect_wrap(block.as_bytes()).ok()?;
    let label = decoder.type_label();
    let mut der = Vec::new();
    decoder.decode_to_end(&mut der).ok()?;
    Some((label, der))
}

/// PEM with 64-character lines and LF line ends.
pub(crate) fn encode(label: &str, der: &[u8]) -> String {
    // Only an invalid label fails; the labels passed here are constants of
    // this crate ("CERTIFICATE", "PUBLIC KEY").
    pem_rfc7468::encode_string(label, LineEnding::LF, der).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n";

    #[test]
    fn several_blocks_with_text_around_them() {
        let two = format!("{CERT}between\n{CERT}trailing text\n");
        let blocks = labelled_blocks(two.as_bytes()).unwrap();
        assert_eq!(
            blocks,
            vec![
                ("CERTIFICATE".to_owned(), vec![0x30, 0]),
                ("CERTIFICATE".to_owned(), vec![0x30, 0]),
            ]
        );
        assert!(labelled_blocks(format!("  \n{CERT}").as_bytes()).is_some());
        assert!(labelled_blocks(CERT.replace('\n', "\r\n").as_bytes()).is_some());
        // Text before the first block, or none at all, is not PEM.
        assert_eq!(labelled_blocks(format!("intro\n{CERT}").as_bytes()), None);
        assert_eq!(labelled_blocks(b"\x30\x00"), None);
        // Unclosed, mislabelled or not base64.
        assert_eq!(
            labelled_blocks(b"-----BEGIN CERTIFICATE-----\nMAA=\n"),
            None
        );
        assert_eq!(
            labelled_blocks(b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END X-----\n"),
            None
        );
        assert_eq!(
            labelled_blocks(b"-----BEGIN CERTIFICATE-----\nM@A=\n-----END CERTIFICATE-----\n"),
            None
        );
    }

    #[test]
    fn encode_wraps_at_64_and_round_trips() {
        let der: Vec<u8> = (0..=255).collect();
        let pem = encode("PUBLIC KEY", &der);
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert!(pem.ends_with("\n-----END PUBLIC KEY-----\n"));
        let body: Vec<&str> = pem.lines().skip(1).collect();
        assert!(body[..body.len() - 2].iter().all(|l| l.len() == 64));
        assert_eq!(
            labelled_blocks(pem.as_bytes()).unwrap(),
            vec![("PUBLIC KEY".to_owned(), der.clone())]
        );
        // pem-rfc7468 writes an empty line for empty content (the
        // hand-written encoder wrote none); nothing here encodes empty DER.
        assert_eq!(encode("X", &[]), "-----BEGIN X-----\n\n-----END X-----\n");
        // One long base64 line, or 76-character lines, are read too.
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
        let one = format!("-----BEGIN PKCS7-----\n{b64}\n-----END PKCS7-----\n");
        assert_eq!(labelled_blocks(one.as_bytes()).unwrap()[0].1, der);
        let wrapped: Vec<&str> = b64
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let mime = format!(
            "-----BEGIN PKCS7-----\n{}\n-----END PKCS7-----\n",
            wrapped.join("\n")
        );
        assert_eq!(labelled_blocks(mime.as_bytes()).unwrap()[0].1, der);
    }
}
