//! Signatures over files in other tools' formats, made with vouch's keys.
pub mod minisign;
