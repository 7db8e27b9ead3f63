#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn nc(offset: usize, why: NonCanonical) -> Result<(), JcsError> {
    Err(JcsError::NotCanonical { offset, why })
}

/// The reference's verdict, after checking that the fast path agrees on
/// acceptance (so every case below is also a differential test).
fn check(input: &str) -> Result<(), JcsError> {
    let verdict = is_canonical(input.as_bytes());
    assert_eq!(
        is_canonical_fast(input.as_bytes(), DEFAULT_MAX_DEPTH),
        verdict.is_ok(),
        "fast path disagrees on {input:?}"
    );
    verdict
}

#[test]
fn accepts_canonical_values() {
    for ok in [
        "0",
        "-1",
        "123456789012345",
        "1e+21",
        "1e-7",
        "0.000001",
        "-5e-324",
        "9007199254740992",
        "295147905179352830000",
        "333333333.3333333",
        "true",
        "false",
        "null",
        "\"\"",
        "\"\\u0000\\u001f\\b\\t\\n\\f\\r\\\"\\\\\u{7f}\u{2028}/\"",
        "[]",
        "{}",
        "[1,[2,[]],{}]",
        "{\"\":0,\"a\":{\"b\":[null]},\"b\":\"x\"}",
        "\"é€😀\"",
    ] {
        assert_eq!(check(ok), Ok(()), "{ok}");
    }
}

#[test]
fn whitespace() {
    assert_eq!(check(" 1"), nc(0, NonCanonical::Whitespace));
    assert_eq!(check("1\n"), nc(1, NonCanonical::Whitespace));
    assert_eq!(check("[1, 2]"), nc(3, NonCanonical::Whitespace));
    assert_eq!(check("{\"a\" :1}"), nc(4, NonCanonical::Whitespace));
    assert_eq!(check("{\"a\": 1}"), nc(5, NonCanonical::Whitespace));
    assert_eq!(check("{ }"), nc(1, NonCanonical::Whitespace));
    assert_eq!(check("[\t]"), nc(1, NonCanonical::Whitespace));
    assert_eq!(check("{\"a\":1\r}"), nc(6, NonCanonical::Whitespace));
}

#[test]
fn key_order_and_duplicates() {
    assert_eq!(check("{\"b\":1,\"a\":2}"), nc(7, NonCanonical::KeyOrder));
    assert_eq!(check("{\"ab\":1,\"a\":2}"), nc(8, NonCanonical::KeyOrder));
    assert_eq!(
        check("{\"a\":1,\"a\":2}"),
        nc(7, NonCanonical::DuplicateKey)
    );
    // Nested objects are checked too.
    assert_eq!(
        check("[{\"x\":{\"a\":1,\"a\":2}}]"),
        nc(13, NonCanonical::DuplicateKey)
    );
    // UTF-16 order: U+1F600 (surrogates D83D DE00) sorts before U+E000.
    assert_eq!(check("{\"😀\":1,\"\u{e000}\":2}"), Ok(()));
    assert_eq!(
        check("{\"\u{e000}\":1,\"😀\":2}"),
        nc(9, NonCanonical::KeyOrder)
    );
    assert_eq!(
        check("{\"\u{ffff}\":1,\"😀\":2}"),
        nc(9, NonCanonical::KeyOrder)
    );
    // Below U+E000, UTF-8 order agrees with UTF-16 order.
    assert_eq!(check("{\"\u{d7ff}\":1,\"😀\":2}"), Ok(()));
    // Escaped names compare by decoded value: "\n" (0x0a) < "\"" (0x22) < "a".
    assert_eq!(check("{\"\\n\":1,\"\\\"\":2,\"a\":3}"), Ok(()));
    assert_eq!(
        check("{\"\\\"\":1,\"\\n\":2}"),
        nc(8, NonCanonical::KeyOrder)
    );
    assert_eq!(
        check("{\"\\u001f\":1,\"\\u001f\":2}"),
        nc(12, NonCanonical::DuplicateKey)
    );
    // A backslash escape decodes below the literal it would sort as: "\\" is 0x5c.
    assert_eq!(check("{\"[\":1,\"\\\\\":2,\"]\":3}"), Ok(()));
}

#[test]
fn string_escapes() {
    let e = NonCanonical::StringEscape;
    assert_eq!(check("\"\\/\""), nc(1, e));
    assert_eq!(check("\"a\\u0041\""), nc(2, e));
    assert_eq!(check("\"\\u000a\""), nc(1, e));
    assert_eq!(check("\"\\u0008\""), nc(1, e));
    assert_eq!(check("\"\\u001F\""), nc(1, e));
    assert_eq!(check("\"\\u007f\""), nc(1, e));
    assert_eq!(check("\"\\u2028\""), nc(1, e));
    assert_eq!(check("\"\\ud83d\\ude00\""), nc(1, e));
    assert_eq!(check("{\"\\u0020\":1}"), nc(2, e));
    // Malformed escapes and raw controls are syntax errors.
    assert_eq!(check("\"\\x\""), Err(JcsError::Syntax { offset: 2 }));
    assert_eq!(check("\"\\u00g0\""), Err(JcsError::Syntax { offset: 5 }));
    assert_eq!(check("\"a\nb\""), Err(JcsError::Syntax { offset: 2 }));
    assert_eq!(check("\"abc"), Err(JcsError::Syntax { offset: 4 }));
    assert_eq!(
        check("\"0123456789abcdef"),
        Err(JcsError::Syntax { offset: 17 })
    );
}

#[test]
fn number_forms() {
    let e = NonCanonical::NumberForm;
    for (bad, at) in [
        ("-0", 0),
        ("[-0]", 1),
        ("1.0", 0),
        ("1e2", 0),
        ("1E+21", 0),
        ("1e21", 0),
        ("0.10", 0),
        ("1.5E3", 0),
        ("100000000000000000000000", 0),
        ("9007199254740993", 0),
        ("-0.0", 0),
        ("1e400", 0),
        ("0.0000001", 0),
        ("{\"a\":2.50}", 5),
    ] {
        assert_eq!(check(bad), nc(at, e), "{bad}");
    }
    for (bad, at) in [
        ("01", 1),
        ("-", 1),
        ("1.", 2),
        ("1e", 2),
        ("+1", 0),
        (".5", 0),
    ] {
        assert_eq!(check(bad), Err(JcsError::Syntax { offset: at }), "{bad}");
    }
}

#[test]
fn syntax_errors() {
    for (bad, at) in [
        ("", 0),
        ("[", 1),
        ("[1,]", 3),
        ("{\"a\"}", 4),
        ("{\"a\":1,}", 7),
        ("{1:1}", 1),
        ("tru", 0),
        ("nul", 0),
        ("[1]]", 3),
        ("\u{feff}1", 0),
    ] {
        assert_eq!(check(bad), Err(JcsError::Syntax { offset: at }), "{bad:?}");
    }
}

#[test]
fn nesting_limit() {
    let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
    assert_eq!(check(&deep(64)), Ok(()));
    assert_eq!(
        check(&deep(65)),
        Err(JcsError::TooDeep {
            offset: 64,
            max: 64
        })
    );
    assert_eq!(
        validate(b"{\"a\":{}}", 1, |_, _| {}),
        Err(JcsError::TooDeep { offset: 5, max: 1 })
    );
    assert_eq!(validate(b"{\"a\":{}}", 2, |_, _| {}), Ok(()));
    assert_eq!(
        validate(b"[]", 0, |_, _| {}),
        Err(JcsError::TooDeep { offset: 0, max: 0 })
    );
    assert_eq!(validate(b"7", 0, |_, _| {}), Ok(()));
    let huge = "[".repeat(100_000);
    assert_eq!(
        check(&huge),
        Err(JcsError::TooDeep {
            offset: 64,
            max: 64
        })
    );

    let mut v = serde_json::json!(1);
    for _ in 0..64 {
        v = serde_json::json!([v]);
    }
    assert!(to_canonical_vec(&v).is_ok());
    v = serde_json::json!({ "a": v });
    assert_eq!(
        to_canonical_vec(&v),
        Err(CanonicalizeError::TooDeep { max: 64 })
    );
}

#[test]
fn bad_utf8() {
    let cases: &[(&[u8], usize)] = &[
        (b"\"\xc0\xaf\"", 1),         // overlong '/'
        (b"\"ab\xe0\x80\xaf\"", 3),   // overlong 3-byte
        (b"\"\xf0\x80\x80\xaf\"", 1), // overlong 4-byte
        (b"\"\xed\xa0\x80\"", 1),     // U+D800 encoded in UTF-8
        (b"\"x\xed\xbf\xbf\"", 2),    // U+DFFF encoded in UTF-8
        (b"\"\xe2\x82\"", 1),         // truncated 3-byte
        (b"\"\xf0\x9f\x98\"", 1),     // truncated 4-byte
        (b"\"\x80\"", 1),             // stray continuation
        (b"\"\xf4\x90\x80\x80\"", 1), // above U+10FFFF
        (b"\"\xff\"", 1),
        (b"\"0123456789\xc3\"", 11), // truncated after the SWAR loop
        (b"{\"k\xc3\":1}", 3),       // in a member name
        (b"\"a\\n\xe2\x82\"", 4),    // after an escape
    ];
    for &(bad, at) in cases {
        assert_eq!(
            is_canonical(bad),
            Err(JcsError::BadUtf8 { offset: at }),
            "{bad:?}"
        );
    }
    // Non-ASCII outside a string is not JSON.
    assert_eq!(
        is_canonical(b"[\xc3\xa9]"),
        Err(JcsError::Syntax { offset: 1 })
    );
}

#[test]
fn member_callback_ranges() {
    let input = br#"{"a\nb":[1,{"x":2}],"body":{"msg":"hi"},"seq":12,"z":"\"q\""}"#;
    let mut seen = Vec::new();
    validate(input, DEFAULT_MAX_DEPTH, |k, r| {
        seen.push((k.to_vec(), input[r].to_vec()));
    })
    .unwrap();
    let expect: Vec<(Vec<u8>, Vec<u8>)> = [
        (&br"a\nb"[..], &br#"[1,{"x":2}]"#[..]),
        (b"body", br#"{"msg":"hi"}"#),
        (b"seq", b"12"),
        (b"z", br#""\"q\"""#),
    ]
    .iter()
    .map(|(k, v)| (k.to_vec(), v.to_vec()))
    .collect();
    assert_eq!(seen, expect);
    assert_eq!(unescape_str(&seen[0].0).unwrap(), "a\nb");

    // No callbacks for a non-object top level.
    let mut calls = 0;
    validate(b"[{\"a\":1}]", 8, |_, _| calls += 1).unwrap();
    assert_eq!(calls, 0);
}

#[test]
fn unescape() {
    assert_eq!(unescape_str(br"plain").unwrap(), "plain");
    assert_eq!(
        unescape_str(br#"\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00"#).unwrap(),
        "\"\\/\u{8}\u{c}\n\r\tAé😀"
    );
    assert_eq!(unescape_str("é€".as_bytes()).unwrap(), "é€");
    assert_eq!(
        unescape_str(br"\ud83d"),
        Err(JcsError::Syntax { offset: 0 })
    );
    assert_eq!(unescape_str(br"ab\x"), Err(JcsError::Syntax { offset: 3 }));
    assert_eq!(unescape_str(b"a\"b"), Err(JcsError::Syntax { offset: 1 }));
    assert_eq!(
        unescape_str(b"a\xffb"),
        Err(JcsError::BadUtf8 { offset: 1 })
    );
}

#[test]
fn writer() {
    let v: serde_json::Value = serde_json::from_str(
        r#"{"b":[1.0,-0.0,1e21,0.1,"\u001f\u007f/"],"a":{"\ud83d\ude00":1,"\ue000":2},"":null}"#,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(to_canonical_vec(&v).unwrap()).unwrap(),
        "{\"\":null,\"a\":{\"😀\":1,\"\u{e000}\":2},\"b\":[1,0,1e+21,0.1,\"\\u001f\u{7f}/\"]}"
    );
    let big = serde_json::json!(u64::MAX);
    assert_eq!(
        to_canonical_vec(&big),
        Err(CanonicalizeError::NumberNotExact {
            number: u64::MAX.to_string()
        })
    );
    assert!(to_canonical_vec(&serde_json::json!(9_007_199_254_740_993_u64)).is_err());
    assert!(to_canonical_vec(&serde_json::json!(-9_007_199_254_740_993_i64)).is_err());
    // 2^60 is an exact double, but its RFC 8785 form 1152921504606847000
    // denotes another integer: refused rather than silently changed.
    assert!(to_canonical_vec(&serde_json::json!(1_u64 << 60)).is_err());
    assert!(to_canonical_vec(&serde_json::json!(i64::MIN)).is_err());
    // Not an exact double, but its own decimal text is the canonical form
    // of the nearest one, so the written text denotes the same value: kept.
    assert_eq!(
        to_canonical_vec(&serde_json::json!(1_152_921_504_606_847_000_u64)).unwrap(),
        b"1152921504606847000"
    );
    assert_eq!(
        to_canonical_vec(&serde_json::json!(9_007_199_254_740_994_u64)).unwrap(),
        b"9007199254740994"
    );
}

#[test]
fn error_offsets_and_codes() {
    let e = JcsError::NotCanonical {
        offset: 9,
        why: NonCanonical::KeyOrder,
    };
    assert_eq!(e.offset(), 9);
    assert_eq!(NonCanonical::KeyOrder.code(), "key_order");
    assert_eq!(
        e.to_string(),
        "not canonical JSON at byte 9: object members not in UTF-16 order"
    );
}
