//! One scan of one definition: every string in it, within the byte and depth budget, against every rule.

use super::*;

pub(super) struct Scan<'r> {
    rs: &'r Ruleset,
    purpose: Vec<String>,
    budget: usize,
    oversized: bool,
    found: Vec<(Finding, usize)>,
    seq: usize,
}

impl<'r> Scan<'r> {
    pub(super) fn new(rs: &'r Ruleset, purpose: Vec<String>) -> Self {
        Scan {
            rs,
            purpose,
            budget: MAX_SCAN_BYTES,
            oversized: false,
            found: Vec::new(),
            seq: 0,
        }
    }

    pub(super) fn add(&mut self, id: &str, pointer: &str, excerpt_text: String, decoded: bool) {
        let Some(info) = self.rs.info(id) else {
            return;
        };
        self.seq += 1;
        self.found.push((
            Finding {
                rule: info.id,
                family: info.family,
                severity: info.severity,
                advisory: info.advisory,
                pointer: pointer.to_owned(),
                excerpt: excerpt_text,
                decoded,
            },
            self.seq,
        ));
    }

    pub(super) fn walk(&mut self, v: &Value, ptr: &mut String, depth: usize, props_map: bool) {
        if self.oversized {
            return;
        }
        if depth > MAX_DEPTH {
            self.oversized = true;
            return;
        }
        match v {
            Value::String(s) => self.string(s, ptr),
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    self.walk(x, ptr, depth + 1, false);
                    ptr.truncate(len);
                    if self.oversized {
                        return;
                    }
                }
            }
            Value::Object(map) => {
                for (k, x) in map {
                    let len = ptr.len();
                    crate::json::pointer::push_token(ptr, k);
                    self.string(k, ptr);
                    if props_map && !self.oversized {
                        self.property(k, x, ptr);
                    }
                    let child_map = !props_map && k == "properties" && x.is_object();
                    self.walk(x, ptr, depth + 1, child_map);
                    ptr.truncate(len);
                    if self.oversized {
                        return;
                    }
                }
            }
            _ => {}
        }
    }

    /// The secret_field family for one member of a `properties` object.
    pub(super) fn property(&mut self, name: &str, schema: &Value, ptr: &str) {
        if !secret_shaped(name) {
            return;
        }
        let ty = schema.get("type");
        let non_string =
            |t: &Value| matches!(t.as_str(), Some("boolean" | "integer" | "number" | "null"));
        let excluded = match ty {
            Some(Value::String(_)) => ty.is_some_and(non_string),
            Some(Value::Array(ts)) => !ts.is_empty() && ts.iter().all(non_string),
            _ => false,
        };
        if excluded {
            return;
        }
        self.add("VET-SEC-001", ptr, excerpt(name), false);
        // Text of the property's schema, bounded.
        let mut text = String::new();
        collect_strings(schema, &mut text, 0);
        let norm = normalise(&text, true);
        if let Some(m) = self.rs.sec_source.find(&norm.text) {
            let (s, e) = norm.original(m.start(), m.end());
            self.add("VET-SEC-002", ptr, excerpt(&text[s..e]), false);
        }
    }

    /// Scans one string (or key) of the definition, charging the budget.
    pub(super) fn string(&mut self, s: &str, ptr: &str) {
        let cost = s.len() + PER_STRING_COST;
        if cost > self.budget {
            let mut cut = self.budget.saturating_sub(PER_STRING_COST).min(s.len());
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.budget = 0;
            self.oversized = true;
            self.text(&s[..cut], ptr, 0, false);
            return;
        }
        self.budget -= cost;
        self.text(s, ptr, 0, false);
    }

    /// All per-string rules over `s`; `depth` counts decoding levels.
    pub(super) fn text(&mut self, s: &str, ptr: &str, depth: usize, decoded: bool) {
        if s.is_empty() {
            return;
        }
        self.hidden_unicode(s, ptr, depth, decoded);
        let full = normalise(s, true);
        let hits = self.text_rules(s, &full);
        if full.changed {
            let plain = normalise(s, false);
            let plain_hits = self.text_rules(s, &plain);
            for (id, ex) in &hits {
                let info = self.rs.info(id);
                let counts = info.is_some_and(|i| !i.advisory);
                if counts && !plain_hits.iter().any(|(p, _)| p == id) {
                    self.add("VET-UNI-005", ptr, ex.clone(), decoded);
                }
            }
        }
        for (id, ex) in hits {
            self.add(id, ptr, ex, decoded);
        }
        self.blobs(s, ptr, depth, decoded);
    }

    /// The text rules over one normalised form: (rule id, excerpt) of the
    /// first accepted match of each rule.
    pub(super) fn text_rules(&self, orig: &str, norm: &Norm) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for rule in &self.rs.text {
            let def = rule.def;
            if def
                .unless_purpose
                .iter()
                .any(|w| self.purpose.iter().any(|p| p == w))
            {
                continue;
            }
            if let Some(also) = &rule.also
                && !also.is_match(&norm.text)
            {
                continue;
            }
            for m in rule.re.find_iter(&norm.text) {
                if m.start() == m.end() {
                    continue;
                }
                let after = &norm.text[m.end()..];
                if def.not_followed_by.iter().any(|x| after.starts_with(x)) {
                    continue;
                }
                if def.negatable && self.negated(&norm.text, m.start()) {
                    continue;
                }
                if rules::QUOTED_MENTION_RULES.contains(&def.id)
                    && quoted(&norm.text, m.start(), m.end())
                {
                    continue;
                }
                let (s, e) = norm.original(m.start(), m.end());
                out.push((def.id, excerpt(orig.get(s..e).unwrap_or(""))));
                break;
            }
        }
        out
    }

    /// Whether a negation precedes `at` within the window, in the same clause.
    pub(super) fn negated(&self, text: &str, at: usize) -> bool {
        let mut from = at.saturating_sub(rules::NEGATION_WINDOW);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let window = &text[from..at];
        let clause_start = self
            .rs
            .clause
            .find_iter(window)
            .last()
            .map_or(0, |m| m.end());
        self.rs.negation.is_match(&window[clause_start..])
    }

    /// Rescans decoded text and returns the worst non-advisory severity found in it.
    pub(super) fn rescan(
        &mut self,
        decoded_text: &str,
        ptr: &str,
        depth: usize,
    ) -> Option<Severity> {
        let before = self.found.len();
        self.text(decoded_text, ptr, depth + 1, true);
        self.found[before..]
            .iter()
            .filter(|(f, _)| !f.advisory)
            .map(|(f, _)| f.severity)
            .max()
    }

    pub(super) fn hidden_unicode(&mut self, s: &str, ptr: &str, depth: usize, decoded: bool) {
        let chars: Vec<(usize, char)> = s.char_indices().collect();
        let has_rtl = chars.iter().any(|(_, c)| is_rtl_letter(*c));
        let mut tags = String::new();
        let mut tag_seen = false;
        let mut first: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
        let mut i = 0;
        while i < chars.len() {
            let (at, c) = chars[i];
            let cp = c as u32;
            // Subdivision flags: U+1F3F4, up to 6 tag letters/digits, U+E007F.
            if cp == 0x1F3F4 {
                let mut j = i + 1;
                while j < chars.len()
                    && j - i <= 6
                    && matches!(chars[j].1 as u32, 0xE0030..=0xE0039 | 0xE0061..=0xE007A)
                {
                    j += 1;
                }
                if j > i + 1 && j < chars.len() && chars[j].1 as u32 == 0xE007F {
                    i = j + 1;
                    continue;
                }
            }
            let prev = i.checked_sub(1).map(|k| chars[k].1);
            let next = chars.get(i + 1).map(|x| x.1);
            if is_tag(c) {
                tag_seen = true;
                first.entry("VET-UNI-001").or_insert((at, c.len_utf8()));
                if (0xE0020..=0xE007E).contains(&cp)
                    && let Some(a) = char::from_u32(cp - 0xE0000)
                {
                    tags.push(a);
                }
            } else if matches!(cp, 0x202A..=0x202E | 0x2066..=0x2069) {
                first.entry("VET-UNI-002").or_insert((at, c.len_utf8()));
            } else if matches!(
                cp,
                0x200B | 0x200C | 0x200D | 0x2060 | 0xFEFF | 0x180E | 0x00AD
            ) {
                let alnum = |x: Option<char>| x.is_some_and(|x| x.is_ascii_alphanumeric());
                // In a tool's name anywhere: two names that look the same
                // are two tools.
                if alnum(prev) && alnum(next) || ptr == "/name" {
                    first.entry("VET-UNI-003").or_insert((at, c.len_utf8()));
                }
            } else if cp == 0x1B
                && next.is_some_and(|n| matches!(n, '[' | ']' | '(' | ')' | 'P' | '_' | '^' | 'c'))
                || cp == 0x9B
            {
                first.entry("VET-UNI-007").or_insert((at, c.len_utf8()));
            } else if matches!(cp, 0xFE00..=0xFE0F | 0xE0100..=0xE01EF) {
                let mut j = i;
                let mut bytes = Vec::new();
                while j < chars.len() {
                    match chars[j].1 as u32 {
                        v @ 0xFE00..=0xFE0F => bytes.push((v - 0xFE00) as u8),
                        v @ 0xE0100..=0xE01EF => bytes.push((v - 0xE0100 + 16) as u8),
                        _ => break,
                    }
                    j += 1;
                }
                if bytes.len() >= 4 {
                    let end = chars.get(j).map_or(s.len(), |x| x.0);
                    self.add(
                        "VET-UNI-008",
                        ptr,
                        excerpt(around(s, at, end - at, 4)),
                        decoded,
                    );
                    if depth < MAX_DECODE_DEPTH
                        && let Ok(t) = std::str::from_utf8(&bytes)
                        && is_text(t)
                    {
                        self.rescan(t, ptr, depth);
                    }
                }
                i = j;
                continue;
            } else if (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
                || (is_invisible(c)
                    && !matches!(
                        cp,
                        0x200B..=0x200F | 0x061C | 0x2060 | 0xFEFF | 0x180E | 0x00AD
                    ))
                || (matches!(cp, 0x200E | 0x200F | 0x061C) && !has_rtl)
            {
                first.entry("VET-UNI-004").or_insert((at, c.len_utf8()));
            }
            i += 1;
        }
        for (id, (at, len)) in first {
            if id == "VET-UNI-001" {
                let shown = if tags.is_empty() {
                    excerpt(around(s, at, len, 10))
                } else {
                    excerpt(&tags)
                };
                self.add(id, ptr, shown, decoded);
            } else {
                self.add(id, ptr, excerpt(around(s, at, len, 20)), decoded);
            }
        }
        if tag_seen && !tags.trim().is_empty() && depth < MAX_DECODE_DEPTH {
            self.rescan(&tags, ptr, depth);
        }
        if let Some((s0, e0, _)) = mixed_words(&chars, s.len()).first() {
            self.add("VET-UNI-006", ptr, excerpt(&s[*s0..*e0]), decoded);
        }
    }

    pub(super) fn blobs(&mut self, s: &str, ptr: &str, depth: usize, decoded: bool) {
        let spaced: Vec<(usize, usize)> = self
            .rs
            .separated_hex
            .find_iter(s)
            .map(|m| (m.start(), m.end()))
            .collect();
        for (hs, he) in spaced {
            let run = &s[hs..he];
            let digits: String = run
                .replace("\\x", "")
                .chars()
                .filter(char::is_ascii_hexdigit)
                .collect();
            if let Some(b) = crate::hex::decode_any(&digits)
                && let Ok(t) = std::str::from_utf8(&b)
                && is_text(t)
            {
                let worst = if depth < MAX_DECODE_DEPTH {
                    self.rescan(t, ptr, depth)
                } else {
                    None
                };
                let id = match worst {
                    Some(Severity::High | Severity::Critical) => "VET-ENC-001",
                    Some(_) => "VET-ENC-002",
                    None => "VET-ENC-003",
                };
                self.add(id, ptr, excerpt(run), decoded);
            }
        }
        let runs: Vec<(usize, usize)> = self
            .rs
            .base64_run
            .find_iter(s)
            .map(|m| (m.start(), m.end()))
            .collect();
        for (rs, re) in runs {
            let standalone = !s[..rs]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
                && !s[re..].chars().next().is_some_and(char::is_alphanumeric);
            let run = &s[rs..re];
            let body = run.strip_prefix("0x").unwrap_or(run);
            let hexish = body.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
            let decoded_bytes = if hexish {
                if body.contains('-')
                    || body.len() < rules::HEX_MIN
                    || !body.len().is_multiple_of(2)
                    || (standalone && rules::HEX_DIGEST_LENGTHS.contains(&body.len()))
                {
                    continue;
                }
                match crate::hex::decode_any(body) {
                    Some(b) => b,
                    None => continue,
                }
            } else {
                let upper = run.bytes().any(|b| b.is_ascii_uppercase());
                let lower = run.bytes().any(|b| b.is_ascii_lowercase());
                let digit = run.bytes().any(|b| b.is_ascii_digit());
                if !(upper && lower && (digit || run.ends_with('='))) {
                    continue;
                }
                match decode_base64(run) {
                    Some(b) => b,
                    None => continue,
                }
            };
            match std::str::from_utf8(&decoded_bytes) {
                Ok(t) if is_text(t) => {
                    let worst = if depth < MAX_DECODE_DEPTH {
                        self.rescan(t, ptr, depth)
                    } else {
                        None
                    };
                    let id = match worst {
                        Some(Severity::High | Severity::Critical) => "VET-ENC-001",
                        Some(_) => "VET-ENC-002",
                        None => "VET-ENC-003",
                    };
                    self.add(id, ptr, excerpt(run), decoded);
                }
                _ => {
                    if !hexish && run.len() >= rules::BASE64_BINARY_REPORT_MIN {
                        self.add("VET-ENC-004", ptr, excerpt(run), decoded);
                    }
                }
            }
        }
    }

    pub(super) fn finish(mut self) -> Vec<Finding> {
        if self.oversized {
            self.add(
                "VET-SIZE-001",
                "",
                String::from("definition exceeds the scan bounds; the rest was not scanned"),
                false,
            );
        }
        // The combination rule.
        let mut fams: BTreeMap<Family, &'static str> = BTreeMap::new();
        for (f, _) in &self.found {
            if !f.advisory && f.severity >= Severity::Medium && f.family != Family::EncodedBlob {
                fams.entry(f.family).or_insert(f.rule);
            }
        }
        if !(fams.contains_key(&Family::Credentials) || fams.contains_key(&Family::Exfiltration)) {
            fams.remove(&Family::SecretField);
        }
        if fams.get(&Family::Concealment) == Some(&"VET-SIZE-001") {
            fams.remove(&Family::Concealment);
        }
        if fams.len() >= 2 {
            let ids: BTreeSet<&str> = fams.values().copied().collect();
            let text = ids.into_iter().collect::<Vec<_>>().join(" + ");
            self.add("VET-CMB-001", "", text, false);
        }
        let mut found = self.found;
        found.sort_by(|(a, sa), (b, sb)| {
            (a.pointer.as_str(), a.rule, a.decoded, *sa).cmp(&(
                b.pointer.as_str(),
                b.rule,
                b.decoded,
                *sb,
            ))
        });
        found.dedup_by(|(a, _), (b, _)| a.pointer == b.pointer && a.rule == b.rule);
        found.into_iter().map(|(f, _)| f).collect()
    }
}

/// Whether `text[s..e]` stands between quotation marks.
pub(super) fn quoted(text: &str, s: usize, e: usize) -> bool {
    let before = text[..s].trim_end().chars().next_back();
    let after = text[e..].trim_start().chars().next();
    before.is_some_and(|c| rules::QUOTES.contains(c))
        && after.is_some_and(|c| rules::QUOTES.contains(c))
}

/// Strings of a value, joined by newlines, at most 4 KiB.
pub(super) fn collect_strings(v: &Value, out: &mut String, depth: usize) {
    const CAP: usize = 4096;
    if out.len() >= CAP || depth > 8 {
        return;
    }
    match v {
        Value::String(s) => {
            let mut cut = (CAP - out.len()).min(s.len());
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&s[..cut]);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out, depth + 1)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out, depth + 1)),
        _ => {}
    }
}

pub(super) fn decode_base64(run: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{
        STANDARD_NO_PAD_INDIFFERENT, URL_SAFE_NO_PAD_INDIFFERENT,
    };
    let body = run.trim_end_matches('=');
    let url = body.contains(['-', '_']);
    if url && body.contains(['+', '/']) {
        return None;
    }
    let engine = if url {
        &URL_SAFE_NO_PAD_INDIFFERENT
    } else {
        &STANDARD_NO_PAD_INDIFFERENT
    };
    let mut len = body.len();
    if len % 4 == 1 {
        len -= 1;
    }
    for cut in 0..3 {
        let Some(l) = len.checked_sub(cut) else { break };
        if l % 4 == 1 {
            continue;
        }
        if let Ok(b) = engine.decode(&body[..l]) {
            return Some(b);
        }
    }
    None
}

/// Whether decoded text is text: mostly printable, with some letters.
pub(super) fn is_text(t: &str) -> bool {
    let total = t.chars().count();
    if total < 4 {
        return false;
    }
    let printable = t
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .filter(|c| *c != '\u{FFFD}')
        .count();
    let letters = t.chars().filter(|c| c.is_alphanumeric()).count();
    printable * 1000 >= total * rules::PRINTABLE_PER_MILLE && letters * 4 >= total
}
