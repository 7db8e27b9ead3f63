//! Vetting of MCP tool definitions: a static scan with a versioned,
//! digested ruleset ([`scan`]), trust-on-first-use pins and operator
//! approvals kept in the chain log, and the verdict records the wrapper
//! writes (docs/FORMAT.md §19).

pub mod scan;
