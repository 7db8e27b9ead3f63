//! PEM (RFC 7468) blocks, read strictly: every BEGIN line needs its
//! matching END line and a base64 body.

/// Every PEM block with its exact label, or `None` when the input is not
/// PEM (or a block is not closed by a matching END line, or not base64).
pub(crate) fn labelled_blocks(data: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    use base64::Engine;
    let text = std::str::from_utf8(data).ok()?;
    if !text.trim_start().starts_with("-----BEGIN ") {
        return None;
    }
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let label_end = after.find("-----")?;
        let label = &after[..label_end];
        let body = &after[label_end + 5..];
        let end_marker = format!("-----END {label}-----");
        let end = body.find(&end_marker)?;
        let b64: String = body[..end].split_whitespace().collect();
        let der = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        out.push((label.to_owned(), der));
        rest = &body[end + end_marker.len()..];
    }
    Some(out)
}

/// PEM with 64-character lines.
pub(crate) fn encode(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}
