//! Text as the scan reads it: invisible and confusable characters, normalisation, excerpts, words of names and purposes.

use super::*;

// ---------------------------------------------------------------- characters

/// Characters removed from the normalised text and escaped in excerpts
/// (besides controls).
pub(super) fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5
        | 0x180B..=0x180F | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F
        | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

pub(super) fn needs_escape(c: char) -> bool {
    c.is_control() || is_invisible(c) || (c.is_whitespace() && c != ' ')
}

/// Combining marks kept with their base character for NFKC.
pub(super) fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A
        | 0x064B..=0x065F | 0x0900..=0x0903 | 0x093A..=0x094F | 0x1AB0..=0x1AFF
        | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0x3099 | 0x309A | 0xFE20..=0xFE2F)
}

pub(super) fn is_latin_letter(c: char) -> bool {
    c.is_ascii_alphabetic()
        || matches!(c as u32, 0x00C0..=0x024F | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A | 0x1D400..=0x1D7FF)
            && c.is_alphanumeric()
}

pub(super) fn homoglyph(c: char) -> Option<char> {
    rules::HOMOGLYPHS
        .iter()
        .find(|(h, _)| *h == c)
        .map(|(_, l)| *l)
}

pub(super) fn is_tag(c: char) -> bool {
    (0xE0000..=0xE007F).contains(&(c as u32))
}

pub(super) fn is_rtl_letter(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x05FF | 0x0600..=0x061B | 0x061D..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFE)
}

/// Byte ranges of Latin words containing homoglyphs.
pub(super) fn mixed_words(
    chars: &[(usize, char)],
    text_len: usize,
) -> Vec<(usize, usize, Vec<usize>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let in_word = |c: char| c.is_alphabetic() || is_mark(c) || is_invisible(c);
        if !in_word(chars[i].1) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && in_word(chars[i].1) {
            i += 1;
        }
        let word = &chars[start..i];
        let latin = word.iter().any(|(_, c)| is_latin_letter(*c));
        let glyphs: Vec<usize> = (start..i)
            .filter(|&k| homoglyph(chars[k].1).is_some())
            .collect();
        if latin && !glyphs.is_empty() {
            let end = chars.get(i).map_or(text_len, |(b, _)| *b);
            out.push((chars[start].0, end, glyphs));
        }
    }
    out
}

/// A normalised string with, for each of its bytes, the original byte range
/// of the cluster it came from.
pub(super) struct Norm {
    pub(super) text: String,
    start: Vec<usize>,
    end: Vec<usize>,
    pub(super) changed: bool,
}

impl Norm {
    pub(super) fn push(&mut self, c: char, s: usize, e: usize) {
        let before = self.text.len();
        self.text.push(c);
        for _ in before..self.text.len() {
            self.start.push(s);
            self.end.push(e);
        }
    }

    /// Original byte range of a normalised byte range.
    pub(super) fn original(&self, s: usize, e: usize) -> (usize, usize) {
        let os = self.start.get(s).copied().unwrap_or(0);
        let oe = if e > s {
            self.end.get(e - 1).copied().unwrap_or(os)
        } else {
            os
        };
        (os, oe.max(os))
    }
}

pub(super) fn normalise(orig: &str, full: bool) -> Norm {
    let chars: Vec<(usize, char)> = orig.char_indices().collect();
    let mut fold = vec![false; chars.len()];
    if full {
        for (_, _, glyphs) in mixed_words(&chars, orig.len()) {
            for k in glyphs {
                fold[k] = true;
            }
        }
    }
    let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc();
    let mut n = Norm {
        text: String::with_capacity(orig.len()),
        start: Vec::with_capacity(orig.len()),
        end: Vec::with_capacity(orig.len()),
        changed: false,
    };
    let mut i = 0;
    let mut buf = String::new();
    while i < chars.len() {
        let cs = chars[i].0;
        let mut j = i + 1;
        while j < chars.len() && is_mark(chars[j].1) {
            j += 1;
        }
        let ce = chars.get(j).map_or(orig.len(), |(b, _)| *b);
        let cluster = &orig[cs..ce];
        buf.clear();
        if fold[i] {
            buf.push(homoglyph(chars[i].1).unwrap_or(chars[i].1));
            buf.push_str(&orig[chars.get(i + 1).map_or(ce, |(b, _)| *b).min(ce)..ce]);
            n.changed = true;
        } else {
            buf.push_str(cluster);
        }
        let out = if full {
            let o = nfkc.normalize(&buf).into_owned();
            if o != buf {
                n.changed = true;
            }
            o
        } else {
            buf.clone()
        };
        for c in out.chars() {
            if is_invisible(c) || (c.is_control() && !c.is_whitespace()) {
                if full {
                    n.changed = true;
                } else {
                    n.push(c, cs, ce);
                }
                continue;
            }
            if c.is_whitespace() {
                let nl = c == '\n' || c == '\u{2028}' || c == '\u{2029}';
                if matches!(n.text.as_bytes().last(), Some(b' ' | b'\n')) {
                    if nl {
                        n.text.pop();
                        n.text.push('\n');
                    }
                    if let Some(last) = n.end.last_mut() {
                        *last = ce;
                    }
                } else {
                    n.push(if nl { '\n' } else { ' ' }, cs, ce);
                }
                continue;
            }
            for l in c.to_lowercase() {
                n.push(l, cs, ce);
            }
        }
        i = j;
    }
    n
}

/// Escapes and truncates an excerpt.
pub(super) fn excerpt(s: &str) -> String {
    let mut out = String::new();
    let total = s.chars().count();
    for (n, c) in s.chars().enumerate() {
        if n + 1 >= MAX_EXCERPT_CHARS && total > MAX_EXCERPT_CHARS {
            out.push('…');
            break;
        }
        if needs_escape(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The original text around byte `at`, `radius` characters each side.
pub(super) fn around(s: &str, at: usize, len: usize, radius: usize) -> &str {
    let mut start = at;
    for _ in 0..radius {
        match s[..start].char_indices().next_back() {
            Some((i, _)) => start = i,
            None => break,
        }
    }
    let mut end = (at + len).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    for _ in 0..radius {
        match s[end..].chars().next() {
            Some(c) => end += c.len_utf8(),
            None => break,
        }
    }
    &s[start..end]
}

/// Words of a name: split at non-alphanumerics and camelCase humps, lower case.
pub(super) fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev
            && c.is_uppercase()
            && (p.is_lowercase() || p.is_ascii_digit())
            && !cur.is_empty()
        {
            words.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

pub(super) fn purpose_words(def: &Value) -> Vec<String> {
    let mut words = Vec::new();
    for p in ["/name", "/title", "/annotations/title"] {
        if let Some(s) = def.pointer(p).and_then(Value::as_str) {
            let s: String = s.chars().take(256).collect();
            words.extend(split_words(&s));
        }
    }
    words
}

/// Whether a property name asks for a secret.
pub(super) fn secret_shaped(name: &str) -> bool {
    use rules::secret_names as sn;
    let words = split_words(name);
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    let joined: String = words.concat();
    if sn::EXACT.contains(&joined.as_str()) {
        return true;
    }
    if words.len() > 1
        && (sn::SUFFIX_GUARD.contains(&last.as_str()) || sn::PREFIX_GUARD.contains(&first.as_str()))
    {
        return false;
    }
    if words.iter().any(|w| sn::WORDS.contains(&w.as_str())) {
        return true;
    }
    if words
        .windows(2)
        .any(|p| sn::PAIRS.contains(&(p[0].as_str(), p[1].as_str())))
    {
        return true;
    }
    // `github_token`, `slack_bot_token`: a token not about pagination or counts.
    if last == "token" && words.len() > 1 {
        let before = &words[words.len() - 2];
        return !sn::TOKEN_GUARD.contains(&before.as_str());
    }
    false
}

// ---------------------------------------------------------------- scanning
