//! JSON configuration: RFC 8259 text read exactly (numbers, duplicate names) into a value.

use super::*;

pub(super) fn parse_json(text: &str) -> Result<Value, ConfigError> {
    let mut syntax_offset = None;
    match jcs::check_exact_counted(text.as_bytes(), MAX_DEPTH) {
        Ok(values) if values > MAX_VALUES => {
            return Err(ConfigError::TooManyValues {
                format: Format::Json,
                max: MAX_VALUES,
            });
        }
        Ok(_) => {}
        Err(InexactJson::Syntax { offset }) => {
            // serde_json says what and where; fall through to it.
            syntax_offset = Some(offset);
        }
        Err(InexactJson::TooDeep { offset, max }) => {
            return Err(ConfigError::TooDeep {
                format: Format::Json,
                max,
                position: Some(position_of(text, offset)),
            });
        }
        Err(InexactJson::DuplicateKey { path, offset }) => {
            let p = position_of(text, offset);
            return Err(ConfigError::DuplicateKey {
                format: Format::Json,
                pointer: Some(json_path_pointer(&path)),
                line: p.line,
                column: p.column,
            });
        }
        Err(InexactJson::InexactNumber {
            path,
            offset,
            literal,
            ..
        }) => {
            return Err(ConfigError::InexactNumber {
                format: Format::Json,
                pointer: json_path_pointer(&path),
                literal,
                position: Some(position_of(text, offset)),
            });
        }
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let p = position_of(text, offset_of(text, e.line(), e.column()));
        ConfigError::Syntax {
            format: Format::Json,
            line: e.line().max(1),
            column: p.column,
            detail: e.to_string(),
        }
    })?;
    if let Some(offset) = syntax_offset {
        // The checker refused what serde_json took: refuse it too, since
        // the duplicate and number checks did not run.
        let p = position_of(text, offset);
        return Err(ConfigError::Syntax {
            format: Format::Json,
            line: p.line,
            column: p.column,
            detail: "not RFC 8259 JSON".to_owned(),
        });
    }
    Ok(value)
}

pub(super) fn json_path_pointer(path: &jcs::JsonPath) -> String {
    let mut s = String::new();
    for step in &path.0 {
        match step {
            jcs::PathStep::Member(m) => crate::json::pointer::push_token(&mut s, m),
            jcs::PathStep::Index(i) => {
                s.push('/');
                s.push_str(&i.to_string());
            }
        }
    }
    s
}

/// Checks a decimal literal (JSON, YAML or TOML spelling: optional sign,
/// optional leading zeros, `.5`, `5.`) against RFC 8785's form of it.
pub(super) fn exact_literal(literal: &str) -> bool {
    let s = literal.strip_prefix('+').unwrap_or(literal);
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return false;
    }
    let int = int.trim_start_matches('0');
    let mut norm = String::with_capacity(literal.len() + 2);
    if neg {
        norm.push('-');
    }
    norm.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        norm.push('.');
        norm.push_str(frac);
    }
    if let Some(exp) = exp {
        norm.push('e');
        norm.push_str(exp);
    }
    jcs::check_exact(norm.as_bytes(), 1).is_ok()
}

pub(super) fn exact_integer(n: impl ToString) -> bool {
    exact_literal(&n.to_string())
}
