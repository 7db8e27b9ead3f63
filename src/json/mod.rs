//! JSON as compared and pointed into: RFC 6901 pointers ([`pointer`], the
//! one escaper of reference tokens) and the structural and word diff
//! ([`diff`]).
//!
//! Canonical form (RFC 8785) and exact-number checks are `crate::jcs`,
//! a format floor below this one. Users: `drift` (configuration and
//! definition changes), `mcp` (tool-definition field diff), `vet` (review
//! words, finding pointers), `redact` (masked-secret pointers) and
//! `enforce` (policy pointers).

pub mod diff;
pub mod pointer;
