//! One pass over a string: the candidates every detector finds, the
//! redaction markers already present (left alone), and the merge of
//! overlapping candidates into masks (leftmost, then longest, then most
//! specific kind).

use super::*;

/// One detection: a byte span of the string and its kind.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cand {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: SecretKind,
}

/// The markers already present in a string, to leave them alone.
pub(super) struct Markers {
    /// Sorted, non-overlapping `(start, end)` spans.
    pub(super) spans: Vec<(usize, usize)>,
    /// For each span, the end of the run of adjacent markers it starts.
    chain_end: Vec<usize>,
}

impl Markers {
    pub(super) fn find(b: &[u8]) -> Markers {
        let mut spans = Vec::new();
        for i in memmem::find_iter(b, b"[REDACTED:") {
            let name_start = i + 10;
            let mut j = name_start;
            while j < b.len() && j - name_start <= 20 && (b[j].is_ascii_lowercase() || b[j] == b'_')
            {
                j += 1;
            }
            if j < b.len() && b[j] == b']' {
                let name = std::str::from_utf8(&b[name_start..j]).unwrap_or("");
                if SecretKind::from_name(name).is_some() {
                    spans.push((i, j + 1));
                }
            }
        }
        let mut chain_end = vec![0; spans.len()];
        for k in (0..spans.len()).rev() {
            chain_end[k] = if k + 1 < spans.len() && spans[k + 1].0 == spans[k].1 {
                chain_end[k + 1]
            } else {
                spans[k].1
            };
        }
        Markers { spans, chain_end }
    }

    /// Whether `[start, end)` consists of markers only.
    pub(super) fn covers(&self, start: usize, end: usize) -> bool {
        let k = self.spans.partition_point(|&(s, _)| s <= start);
        if k == 0 {
            return false;
        }
        let (s, e) = self.spans[k - 1];
        s <= start && start < e && self.chain_end[k - 1] >= end
    }
}

pub(super) fn scan_once(s: &str, field: Option<Field>) -> Option<(String, Vec<SecretKind>)> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let lower = b.to_ascii_lowercase();
    let mut cands = Vec::new();
    if let Some(f) = field {
        field_value(b, 0, b.len(), f, &mut cands);
    }
    let public_pem = private_keys(b, &mut cands);
    vendor_tokens(b, &mut cands);
    aws_secret(b, &lower, &mut cands);
    jwts(b, &mut cands);
    bearer(b, &lower, &mut cands);
    authorization(b, &lower, &mut cands);
    url_credentials(b, &mut cands);
    query_params(b, &mut cands);
    assignments(b, &mut cands);
    quoted_pairs(b, &mut cands);
    high_entropy(b, &public_pem, &mut cands);

    let markers = Markers::find(b);
    cands.retain(|c| c.start < c.end && !markers.covers(c.start, c.end));
    if cands.is_empty() {
        return None;
    }
    for c in &mut cands {
        while c.start > 0 && !s.is_char_boundary(c.start) {
            c.start -= 1;
        }
        while c.end < b.len() && !s.is_char_boundary(c.end) {
            c.end += 1;
        }
    }
    cands.sort_by(|x, y| {
        x.start
            .cmp(&y.start)
            .then(y.end.cmp(&x.end))
            .then(y.kind.priority().cmp(&x.kind.priority()))
    });
    let mut merged: Vec<Cand> = Vec::new();
    for c in cands {
        if let Some(last) = merged.last_mut() {
            if c.end <= last.end {
                continue;
            }
            if c.start < last.end {
                last.end = c.end;
                continue;
            }
        }
        merged.push(c);
    }
    let mut out = String::with_capacity(s.len());
    let mut kinds = Vec::with_capacity(merged.len());
    let mut at = 0;
    for c in merged {
        out.push_str(s.get(at..c.start).unwrap_or(""));
        out.push_str("[REDACTED:");
        out.push_str(c.kind.as_str());
        out.push(']');
        kinds.push(c.kind);
        at = c.end;
    }
    out.push_str(s.get(at..).unwrap_or(""));
    if out == s {
        return None;
    }
    Some((out, kinds))
}

pub(super) fn push(cands: &mut Vec<Cand>, start: usize, end: usize, kind: SecretKind) {
    if start < end {
        cands.push(Cand { start, end, kind });
    }
}

pub(super) fn is_b64url(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// End of the run of bytes satisfying `f` starting at `i`.
pub(super) fn run_end(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && f(b[i]) {
        i += 1;
    }
    i
}

pub(super) fn prev_alnum(b: &[u8], i: usize) -> bool {
    i > 0 && b[i - 1].is_ascii_alphanumeric()
}

/// The candidates for a whole string value under a secret-like name.
pub(super) fn field_value(b: &[u8], start: usize, end: usize, field: Field, cands: &mut Vec<Cand>) {
    match field {
        Field::Secret => push(cands, start, end, SecretKind::SecretField),
        Field::Aws => push(cands, start, end, SecretKind::AwsSecretKey),
        Field::Header => {
            let w = run_end(b, start, |c| c.is_ascii_alphabetic());
            let sp = run_end(b, w, |c| c == b' ' || c == b'\t');
            if w > start && w - start <= 20 && sp > w && sp < end {
                push(cands, sp, end, SecretKind::Bearer);
            } else {
                push(cands, start, end, SecretKind::Bearer);
            }
        }
    }
}
