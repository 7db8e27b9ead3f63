//! Numbers: RFC 8259 grammar plus the RFC 8785 §3.2.2.3 rule that the text is
//! exactly ECMAScript `Number.prototype.toString` of the double it denotes.

use super::{JcsError, NonCanonical};

/// Integers of at most this many digits are below 2^53, so they are exact
/// doubles and ECMAScript prints them digit for digit.
pub(super) const FAST_DIGITS: usize = 15;

/// Checks the number starting at `start`; returns the offset after it.
#[inline]
pub(super) fn scan(input: &[u8], start: usize) -> Result<usize, JcsError> {
    let digit = |i: usize| input.get(i).is_some_and(u8::is_ascii_digit);
    let mut i = start;
    let neg = input.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let int_start = i;
    match input.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        _ => return Err(JcsError::Syntax { offset: i }),
    }
    let int_end = i;
    let mut plain = true;
    if input.get(i) == Some(&b'.') {
        plain = false;
        i += 1;
        if !digit(i) {
            return Err(JcsError::Syntax { offset: i });
        }
        while digit(i) {
            i += 1;
        }
    }
    if matches!(input.get(i), Some(b'e' | b'E')) {
        plain = false;
        i += 1;
        if matches!(input.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return Err(JcsError::Syntax { offset: i });
        }
        while digit(i) {
            i += 1;
        }
    }
    let form_error = Err(JcsError::NotCanonical {
        offset: start,
        why: NonCanonical::NumberForm,
    });
    if plain && int_end - int_start <= FAST_DIGITS {
        // ECMAScript prints zero as "0", never "-0".
        if neg && input[int_start] == b'0' {
            return form_error;
        }
        return Ok(i);
    }
    let text = &input[start..i];
    // The grammar above admits only ASCII, so this cannot fail.
    let Ok(s) = std::str::from_utf8(text) else {
        return Err(JcsError::Syntax { offset: start });
    };
    let Ok(value) = s.parse::<f64>() else {
        return Err(JcsError::Syntax { offset: start });
    };
    if !value.is_finite() {
        return form_error;
    }
    let mut buf = ryu_js::Buffer::new();
    if buf.format_finite(value).as_bytes() != text {
        return form_error;
    }
    Ok(i)
}

/// Appends the ECMAScript form of a finite double (RFC 8785 §3.2.2.3).
pub(super) fn write_f64(value: f64, out: &mut Vec<u8>) {
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(value).as_bytes());
}
