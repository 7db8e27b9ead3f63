//! A pre-scan of YAML text that bounds nesting before libyaml sees it.
//!
//! serde_yaml_ng reads through libyaml (`unsafe-libyaml`), whose scanner
//! keeps one "simple key" slot per open flow collection and walks all of
//! them for every token: reading `[[[[...` costs the square of the flow
//! depth, and the whole stream is read before serde_yaml_ng's own depth
//! limit or ours can act (100,000 levels took 20 s; the bug is known
//! upstream). This pre-scan follows libyaml's scanner token by token,
//! keeping only what decides where tokens start and end (flow level, the
//! block indentation stack, the one simple key that block indentation
//! needs, whether a simple key is allowed) and produces nothing. It stops at
//! the first token that opens a collection deeper than
//! [`super::MAX_DEPTH`]: the flow level plus the open block collections,
//! which is never more than the nesting of the value libyaml's parser then
//! builds (an indentless sequence adds a level the scanner does not count),
//! so a document the visitor would accept is never refused here. Its work
//! is linear in the input: each character is looked at a bounded number of
//! times and the stacks it keeps are at most [`super::MAX_DEPTH`] deep.
//!
//! It also counts alias tokens (`*name`): a document without any cannot
//! expand, so a value count beyond the limit is then `too_many_values`, not
//! `alias_expansion`.
//!
//! Where libyaml would stop with an error, the pre-scan goes on as best it
//! can: libyaml reads no further than its error, which the pre-scan has
//! already passed with exact state, so the bound holds either way; a
//! document that is invalid *and* too deep after its error may be reported
//! as too deep rather than with libyaml's message.

/// What the pre-scan found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Scanned {
    /// Alias tokens (`*name`) in the stream.
    pub aliases: usize,
}

/// A collection opened at byte `offset` is nested deeper than allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TooDeep {
    pub offset: usize,
}

/// Where a simple key started (libyaml's `yaml_mark_t`, less the byte).
#[derive(Clone, Copy)]
struct Mark {
    line: usize,
    column: i64,
    index: usize,
}

struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
    /// libyaml's mark: line, column and index count characters.
    line: usize,
    column: i64,
    index: usize,
    flow_level: u32,
    indent: i64,
    indents: Vec<i64>,
    simple_key_allowed: bool,
    /// The simple key of the block context (flow level 0): the only one
    /// that moves the block indentation.
    block_key: Option<Mark>,
    max_depth: u32,
    aliases: usize,
}

/// Scans `text` (see the module docs); `max_depth` is the nesting allowed.
pub(super) fn scan(text: &str, max_depth: u32) -> Result<Scanned, TooDeep> {
    let mut s = Scanner {
        text: text.as_bytes(),
        pos: 0,
        line: 0,
        column: 0,
        index: 0,
        flow_level: 0,
        indent: -1,
        indents: Vec::new(),
        simple_key_allowed: true,
        block_key: None,
        max_depth,
        aliases: 0,
    };
    s.run()?;
    Ok(Scanned { aliases: s.aliases })
}

impl Scanner<'_> {
    fn at(&self, k: usize) -> u8 {
        self.text.get(self.pos + k).copied().unwrap_or(0)
    }

    fn end(&self) -> bool {
        self.pos >= self.text.len()
    }

    /// Byte length of a line break at `pos + k` (CR LF counts as one), 0
    /// when there is none: CR, LF, NEL, LS, PS as libyaml's `IS_BREAK`.
    fn break_len(&self, k: usize) -> usize {
        match (self.at(k), self.at(k + 1), self.at(k + 2)) {
            (b'\r', b'\n', _) => 2,
            (b'\r' | b'\n', _, _) => 1,
            (0xC2, 0x85, _) => 2,
            (0xE2, 0x80, 0xA8 | 0xA9) => 3,
            _ => 0,
        }
    }

    fn is_break(&self, k: usize) -> bool {
        self.break_len(k) > 0
    }

    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    /// Blank, break or the end (libyaml's `IS_BLANKZ`).
    fn is_blankz(&self, k: usize) -> bool {
        self.pos + k >= self.text.len() || self.is_blank(k) || self.is_break(k)
    }

    fn is_breakz(&self, k: usize) -> bool {
        self.pos + k >= self.text.len() || self.is_break(k)
    }

    /// One character forward (libyaml's `SKIP`).
    fn skip(&mut self) {
        if self.end() {
            return;
        }
        let width = match self.at(0) {
            b if b < 0x80 => 1,
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            _ => 2,
        };
        self.pos = (self.pos + width).min(self.text.len());
        self.column += 1;
        self.index += 1;
    }

    /// Past one line break (libyaml's `SKIP_LINE`); a no-op elsewhere.
    fn skip_line(&mut self) {
        let len = self.break_len(0);
        if len == 0 {
            return;
        }
        self.index += if len == 2 && self.at(0) == b'\r' {
            2
        } else {
            1
        };
        self.pos += len;
        self.column = 0;
        self.line += 1;
    }

    fn mark(&self) -> Mark {
        Mark {
            line: self.line,
            column: self.column,
            index: self.index,
        }
    }

    fn depth(&self) -> usize {
        self.indents.len() + self.flow_level as usize
    }

    fn check_depth(&self, offset: usize) -> Result<(), TooDeep> {
        if self.depth() > self.max_depth as usize {
            return Err(TooDeep { offset });
        }
        Ok(())
    }

    fn save_simple_key(&mut self) {
        if self.simple_key_allowed && self.flow_level == 0 {
            self.block_key = Some(self.mark());
        }
    }

    /// libyaml's `remove_simple_key`: the key of the innermost level.
    fn remove_simple_key(&mut self) {
        if self.flow_level == 0 {
            self.block_key = None;
        }
    }

    fn stale_simple_keys(&mut self) {
        if let Some(k) = self.block_key
            && (k.line < self.line || k.index + 1024 < self.index)
        {
            self.block_key = None;
        }
    }

    fn roll_indent(&mut self, column: i64, offset: usize) -> Result<(), TooDeep> {
        if self.flow_level != 0 {
            return Ok(());
        }
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            self.check_depth(offset)?;
        }
        Ok(())
    }

    fn unroll_indent(&mut self, column: i64) {
        if self.flow_level != 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn document_indicator(&self) -> bool {
        self.column == 0
            && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
            && self.is_blankz(3)
    }

    fn run(&mut self) -> Result<(), TooDeep> {
        loop {
            self.scan_to_next_token();
            self.stale_simple_keys();
            self.unroll_indent(self.column);
            if self.end() {
                return Ok(());
            }
            let start = self.pos;
            let c = self.at(0);
            if self.column == 0 && c == b'%' {
                // A directive: the rest of the line and its break.
                self.unroll_indent(-1);
                self.remove_simple_key();
                self.simple_key_allowed = false;
                while !self.is_breakz(0) {
                    self.skip();
                }
                self.skip_line();
                continue;
            }
            if self.document_indicator() {
                self.unroll_indent(-1);
                self.remove_simple_key();
                self.simple_key_allowed = false;
                self.skip();
                self.skip();
                self.skip();
                continue;
            }
            match c {
                b'[' | b'{' => {
                    self.save_simple_key();
                    self.flow_level += 1;
                    self.check_depth(start)?;
                    self.simple_key_allowed = true;
                    self.skip();
                }
                b']' | b'}' => {
                    self.remove_simple_key();
                    self.flow_level = self.flow_level.saturating_sub(1);
                    self.simple_key_allowed = false;
                    self.skip();
                }
                b',' => {
                    self.remove_simple_key();
                    self.simple_key_allowed = true;
                    self.skip();
                }
                b'-' if self.is_blankz(1) => {
                    self.roll_indent(self.column, start)?;
                    self.remove_simple_key();
                    self.simple_key_allowed = true;
                    self.skip();
                }
                b'?' if self.flow_level != 0 || self.is_blankz(1) => {
                    self.roll_indent(self.column, start)?;
                    self.remove_simple_key();
                    self.simple_key_allowed = self.flow_level == 0;
                    self.skip();
                }
                b':' if self.flow_level != 0 || self.is_blankz(1) => {
                    match self.block_key.take().filter(|_| self.flow_level == 0) {
                        Some(key) => {
                            self.roll_indent(key.column, start)?;
                            self.simple_key_allowed = false;
                        }
                        None => {
                            self.roll_indent(self.column, start)?;
                            self.simple_key_allowed = self.flow_level == 0;
                        }
                    }
                    self.skip();
                }
                b'*' | b'&' => {
                    if c == b'*' {
                        self.aliases += 1;
                    }
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.skip();
                    while self.at(0).is_ascii_alphanumeric() || matches!(self.at(0), b'-' | b'_') {
                        self.skip();
                    }
                }
                b'!' => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.scan_tag();
                }
                b'|' | b'>' if self.flow_level == 0 => {
                    self.remove_simple_key();
                    self.simple_key_allowed = true;
                    self.scan_block_scalar();
                }
                b'\'' | b'"' => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.scan_quoted(c == b'\'');
                }
                _ if self.plain_start(c) => {
                    self.save_simple_key();
                    self.simple_key_allowed = false;
                    self.scan_plain();
                }
                // libyaml stops here ("found character that cannot start
                // any token"); go on with the next character.
                _ => self.skip(),
            }
        }
    }

    fn plain_start(&self, c: u8) -> bool {
        let indicator = self.is_blankz(0)
            || matches!(
                c,
                b'-' | b'?'
                    | b':'
                    | b','
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b'#'
                    | b'&'
                    | b'*'
                    | b'!'
                    | b'|'
                    | b'>'
                    | b'\''
                    | b'"'
                    | b'%'
                    | b'@'
                    | b'`'
            );
        !indicator
            || (c == b'-' && !self.is_blank(1))
            || (self.flow_level == 0 && matches!(c, b'?' | b':') && !self.is_blankz(1))
    }

    fn scan_to_next_token(&mut self) {
        loop {
            if self.column == 0 && self.at(0) == 0xEF && self.at(1) == 0xBB && self.at(2) == 0xBF {
                self.skip();
            }
            while self.at(0) == b' '
                || ((self.flow_level != 0 || !self.simple_key_allowed) && self.at(0) == b'\t')
            {
                self.skip();
            }
            if self.at(0) == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                }
            }
            if !self.is_break(0) {
                return;
            }
            self.skip_line();
            if self.flow_level == 0 {
                self.simple_key_allowed = true;
            }
        }
    }

    /// A tag: `!<uri>`, or `!`, a handle and a suffix of URI characters.
    fn scan_tag(&mut self) {
        let verbatim = self.at(1) == b'<';
        self.skip();
        if verbatim {
            self.skip();
        }
        loop {
            let c = self.at(0);
            let uri = c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'-' | b'_'
                        | b';'
                        | b'/'
                        | b'?'
                        | b':'
                        | b'@'
                        | b'&'
                        | b'='
                        | b'+'
                        | b'$'
                        | b'.'
                        | b'%'
                        | b'!'
                        | b'~'
                        | b'*'
                        | b'\''
                        | b'('
                        | b')'
                )
                || (verbatim && matches!(c, b',' | b'[' | b']'));
            if !uri || self.end() {
                break;
            }
            self.skip();
        }
        if verbatim && self.at(0) == b'>' {
            self.skip();
        }
    }

    fn scan_plain(&mut self) {
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        loop {
            if self.document_indicator() || self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if self.flow_level != 0
                    && c == b':'
                    && matches!(self.at(1), b',' | b'?' | b'[' | b']' | b'{' | b'}')
                {
                    // libyaml: "found unexpected ':'" (it stops).
                    return;
                }
                if (c == b':' && self.is_blankz(1))
                    || (self.flow_level != 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                leading_blanks = false;
                self.skip();
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    self.skip();
                } else {
                    self.skip_line();
                    leading_blanks = true;
                }
            }
            if self.flow_level == 0 && self.column < indent {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
    }

    fn scan_quoted(&mut self, single: bool) {
        let quote = if single { b'\'' } else { b'"' };
        self.skip();
        loop {
            if self.document_indicator() || self.end() {
                // libyaml: unexpected document indicator / end of stream.
                return;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    self.skip();
                    self.skip();
                } else if c == quote {
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    self.skip();
                    self.skip_line();
                    break;
                } else if !single && c == b'\\' {
                    self.skip();
                    self.skip();
                } else {
                    self.skip();
                }
            }
            if self.at(0) == quote {
                self.skip();
                return;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    self.skip();
                } else {
                    self.skip_line();
                }
            }
        }
    }

    fn scan_block_scalar(&mut self) {
        self.skip();
        let mut increment: i64 = 0;
        let mut chomping = false;
        for _ in 0..2 {
            match self.at(0) {
                b'+' | b'-' if !chomping => chomping = true,
                // libyaml: "found an indentation indicator equal to 0".
                b'0' if increment == 0 => return,
                d @ b'1'..=b'9' if increment == 0 => increment = i64::from(d - b'0'),
                _ => break,
            }
            self.skip();
        }
        while self.is_blank(0) {
            self.skip();
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
        if !self.is_breakz(0) {
            // libyaml: "did not find expected comment or line break".
            return;
        }
        self.skip_line();
        let mut indent: i64 = if increment != 0 {
            if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            }
        } else {
            0
        };
        if !self.block_scalar_breaks(&mut indent) {
            return;
        }
        while self.column == indent && !self.end() {
            while !self.is_breakz(0) {
                self.skip();
            }
            if self.end() {
                return;
            }
            self.skip_line();
            if !self.block_scalar_breaks(&mut indent) {
                return;
            }
        }
    }

    /// libyaml's `scan_block_scalar_breaks`; false where it fails.
    fn block_scalar_breaks(&mut self, indent: &mut i64) -> bool {
        let mut max_indent: i64 = 0;
        loop {
            while (*indent == 0 || self.column < *indent) && self.at(0) == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.column);
            if (*indent == 0 || self.column < *indent) && self.at(0) == b'\t' {
                return false;
            }
            if !self.is_break(0) {
                break;
            }
            self.skip_line();
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn depth_ok(text: &str, max: u32) -> bool {
        scan(text, max).is_ok()
    }

    #[test]
    fn flow_and_block_nesting_count() {
        assert!(depth_ok("a: [[1]]", 3));
        assert_eq!(scan("a: [[1]]", 2), Err(TooDeep { offset: 4 }));
        assert!(depth_ok("- - - x", 3));
        assert!(!depth_ok("- - - x", 2));
        assert!(depth_ok("a:\n  b:\n    c: 1\n", 3));
        assert!(!depth_ok("a:\n  b:\n    c: 1\n", 2));
        // Siblings do not add up.
        assert!(depth_ok("a: [1]\nb: [2]\nc: {x: [3]}\n", 3));
        assert!(depth_ok("[[1], [2], [[3]]]", 3));
        assert!(depth_ok("? [[x]]\n: 1\n", 3));
        assert!(!depth_ok("? [[x]]\n: 1\n", 2));
    }

    #[test]
    fn brackets_inside_scalars_and_comments_do_not_count() {
        for doc in [
            "a: '[[[['\n",
            "a: \"[[[[\\\"[[\"\n",
            "a: x[[[[\n",
            "a: don't [[[[\nb: 1\n",
            "a: |\n  [[[[\n  {{{{\nb: 1\n",
            "a: >-\n  [[[[\n\n  [[[[\nb: 1\n",
            "a: 1 # [[[[\n",
            "# [[[[\na: 1\n",
            "a: foo\n  [[[[ bar\n",
            "%TAG ! tag:x,[[[[:\n--- 1\n",
        ] {
            assert!(depth_ok(doc, 2), "{doc:?}");
        }
    }

    #[test]
    fn real_flow_after_scalars_counts() {
        assert!(!depth_ok("a: 'x'\nb: [[[1]]]\n", 3));
        assert!(!depth_ok("a: |\n  text\nb: [[[1]]]\n", 3));
        assert!(!depth_ok("a: x\nb: [[[1]]]\n", 3));
        assert!(!depth_ok("[a, 'b', \"c\", [[[1]]]]", 3));
    }

    #[test]
    fn aliases_counted() {
        assert_eq!(
            scan("a: &x 1\nb: *x\nc: [*x, *x]\n", 64).unwrap().aliases,
            3
        );
        assert_eq!(scan("a: '*x'\nb: x*y\n", 64).unwrap().aliases, 0);
    }
}

/// The pre-scan against serde_yaml_ng itself: for documents libyaml reads,
/// the pre-scan's nesting is the value's nesting, whatever scalars,
/// comments, tags and anchors come before, so it neither refuses what the
/// parser would accept nor lets a deeper flow collection through.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod differential {
    use super::scan;

    const FRAGMENTS: &[&str] = &[
        "a: don't [ {\n",
        "b: 'it''s [ { '\n",
        "c: \"q \\\" [ { \\\\\"\n",
        "d: |\n  [[[\n   {{{\n\n  ' \"\n",
        "e: >-\n  ] ] }\n",
        "f: plain [ {\n  continued [ ' \"\n",
        "g: x # [[[ '\n",
        "# ' [[ \n",
        "h: !tag 'x['\n",
        "i: &anc [1, 2]\n",
        "k: {x: '[', y: \"]\", z: [a, 'b]']}\n",
        "l: |2\n   [[ indented\n",
        "'m': [\"x\", 'y']\n",
        "n: a:b [\n",
        "? complex [\n: value\n",
        "o:\n  - [x]\n  - {y: '['}\n",
        "p: \"multi\n  line [ \\\"\n  end\"\n",
        "q: 'multi\n  line [ ''\n  end'\n",
        "r: !!str [x]\n",
        "s: x-[y]-{z}\n",
    ];

    fn deep(kind: usize, d: usize) -> String {
        match kind {
            0 => format!("deep: {}1{}\n", "[".repeat(d), "]".repeat(d)),
            1 => format!("deep: {}1{}\n", "{a: ".repeat(d), "}".repeat(d)),
            2 => format!("deep: {}1{}\n", "[ 'x]', \"y}\", ".repeat(d), "]".repeat(d)),
            3 => format!(
                "deep:\n  {}1{}\n",
                "[\n   # ]] '\n   ".repeat(d),
                "\n  ]".repeat(d)
            ),
            _ => format!("deep: {}1{}\n", "[ !t x, &y z, ".repeat(d), "]".repeat(d)),
        }
    }

    fn depth(v: &serde_yaml_ng::Value) -> usize {
        match v {
            serde_yaml_ng::Value::Sequence(s) => 1 + s.iter().map(depth).max().unwrap_or(0),
            serde_yaml_ng::Value::Mapping(m) => {
                1 + m.iter().map(|(_, v)| depth(v)).max().unwrap_or(0)
            }
            serde_yaml_ng::Value::Tagged(t) => depth(&t.value),
            _ => 0,
        }
    }

    #[test]
    fn agrees_with_the_parser() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut checked = 0;
        for _ in 0..600 {
            let mut doc = String::new();
            let mut used = std::collections::BTreeSet::new();
            for _ in 0..next(6) {
                let f = next(FRAGMENTS.len());
                if used.insert(f) {
                    doc.push_str(FRAGMENTS[f]);
                }
            }
            let d = 5 + next(6);
            doc.push_str(&deep(next(5), d));
            for _ in 0..next(3) {
                let f = next(FRAGMENTS.len());
                if used.insert(f) {
                    doc.push_str(FRAGMENTS[f]);
                }
            }
            let Ok(v) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&doc) else {
                continue;
            };
            let real = depth(&v);
            assert_eq!(real, d + 1, "{doc}");
            assert!(
                scan(&doc, real as u32).is_ok(),
                "refused at its depth:\n{doc}"
            );
            assert!(scan(&doc, real as u32 - 1).is_err(), "missed:\n{doc}");
            checked += 1;
        }
        assert!(checked > 300, "only {checked} documents parsed");
    }
}
