//! The one-pass RFC 8785 validator.

use std::ops::Range;

use super::{DEFAULT_MAX_DEPTH, JcsError, NonCanonical, number, string};

/// Validates that `input` is exactly the RFC 8785 serialization of one JSON
/// value: no leading or trailing whitespace and no trailing newline.
///
/// When the value is an object, calls `on_member(raw_key_bytes, value_range)`
/// for each *top-level* member in order, as soon as the member has been
/// validated: `raw_key_bytes` are the bytes between the quotes, still escaped
/// (decode with [`super::unescape_str`]); `value_range` indexes `input`. If
/// validation fails later, members already reported must be discarded.
///
/// Arrays and objects may nest `max_depth` deep (the top-level container is
/// depth 1). Allocates nothing; see the module docs for the rules checked.
pub fn validate(
    input: &[u8],
    max_depth: u32,
    mut on_member: impl FnMut(&[u8], Range<usize>),
) -> Result<(), JcsError> {
    let mut p = Parser {
        input,
        pos: 0,
        max_depth,
    };
    if input.first() == Some(&b'{') {
        p.object(1, &mut on_member)?;
    } else {
        p.value(0)?;
    }
    match input.get(p.pos) {
        None => Ok(()),
        Some(&b) => Err(p.unexpected(b)),
    }
}

/// Validates without a callback, with [`DEFAULT_MAX_DEPTH`]. See [`validate`].
pub fn is_canonical(input: &[u8]) -> Result<(), JcsError> {
    validate(input, DEFAULT_MAX_DEPTH, |_, _| {})
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    max_depth: u32,
}

fn ignore_member(_: &[u8], _: Range<usize>) {}

impl Parser<'_> {
    /// Error for byte `b` at `self.pos` where something else was expected.
    #[cold]
    fn unexpected(&self, b: u8) -> JcsError {
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            JcsError::NotCanonical {
                offset: self.pos,
                why: NonCanonical::Whitespace,
            }
        } else {
            JcsError::Syntax { offset: self.pos }
        }
    }

    #[cold]
    fn unexpected_here(&self) -> JcsError {
        match self.input.get(self.pos) {
            Some(&b) => self.unexpected(b),
            None => JcsError::Syntax {
                offset: self.input.len(),
            },
        }
    }

    /// Consumes `b` or fails.
    #[inline(always)]
    fn expect(&mut self, b: u8) -> Result<(), JcsError> {
        if self.input.get(self.pos) == Some(&b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected_here())
        }
    }

    /// Validates one value at `self.pos`; `depth` is the depth of the
    /// enclosing container (0 at top level).
    fn value(&mut self, depth: u32) -> Result<(), JcsError> {
        match self.input.get(self.pos) {
            Some(b'"') => {
                self.pos = string::scan(self.input, self.pos)?.end;
                Ok(())
            }
            Some(b'-' | b'0'..=b'9') => {
                self.pos = number::scan(self.input, self.pos)?;
                Ok(())
            }
            Some(b'{') => self.object(depth + 1, &mut ignore_member),
            Some(b'[') => self.array(depth + 1),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            _ => Err(self.unexpected_here()),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), JcsError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(JcsError::Syntax { offset: self.pos })
        }
    }

    fn check_depth(&self, depth: u32) -> Result<(), JcsError> {
        if depth > self.max_depth {
            Err(JcsError::TooDeep {
                offset: self.pos,
                max: self.max_depth,
            })
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: u32) -> Result<(), JcsError> {
        self.check_depth(depth)?;
        self.pos += 1;
        if self.input.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value(depth)?;
            match self.input.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected_here()),
            }
        }
    }

    /// Validates the object whose `{` is at `self.pos`, reporting each member.
    fn object<F: FnMut(&[u8], Range<usize>)>(
        &mut self,
        depth: u32,
        on_member: &mut F,
    ) -> Result<(), JcsError> {
        self.check_depth(depth)?;
        self.pos += 1;
        if self.input.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        // Previous member name: body range and whether it has escapes.
        let mut prev: Option<(Range<usize>, bool)> = None;
        loop {
            if self.input.get(self.pos) != Some(&b'"') {
                return Err(self.unexpected_here());
            }
            let key_at = self.pos;
            let key = string::scan(self.input, key_at)?;
            let name = key_at + 1..key.end - 1;
            if let Some((p, p_escaped)) = prev {
                let order = string::cmp_names(
                    &self.input[p],
                    &self.input[name.clone()],
                    p_escaped || key.escaped,
                );
                let why = match order {
                    std::cmp::Ordering::Less => None,
                    std::cmp::Ordering::Equal => Some(NonCanonical::DuplicateKey),
                    std::cmp::Ordering::Greater => Some(NonCanonical::KeyOrder),
                };
                if let Some(why) = why {
                    return Err(JcsError::NotCanonical {
                        offset: key_at,
                        why,
                    });
                }
            }
            self.pos = key.end;
            self.expect(b':')?;
            let value_start = self.pos;
            self.value(depth)?;
            on_member(&self.input[name.clone()], value_start..self.pos);
            prev = Some((name, key.escaped));
            match self.input.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected_here()),
            }
        }
    }
}
