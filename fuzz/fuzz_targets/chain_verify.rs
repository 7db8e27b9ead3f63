//! Fuzzes the chain verifier on arbitrary log bytes: it must never panic,
//! every record line it reports must be a line of the input, and a log it
//! calls valid must parse record by record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use vouch::chain::verify::{self, LogStatus, VerifyOptions};

fuzz_target!(|data: &[u8]| {
    let report = verify::verify_bytes(Path::new("fuzz.jsonl"), data, &VerifyOptions::default());
    let complete_lines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(report.records, complete_lines);
    if report.status != LogStatus::Invalid {
        for line in data.split(|&b| b == b'\n').take(complete_lines as usize) {
            assert!(vouch::chain::record::parse_line(line).is_ok());
        }
    }
});
