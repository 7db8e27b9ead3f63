//! MCP protocol revisions and the `_meta` keys of the 2026-07-28 revision,
//! written once for the listing client ([`super::listing`]) and the wrapper
//! (`crate::enforce::wrap`).

/// The modern revision vouch speaks (no `initialize` handshake; per-request
/// `_meta`).
pub const MODERN_VERSION: &str = "2026-07-28";
/// The legacy revision vouch asks for in `initialize`.
pub const LEGACY_VERSION: &str = "2025-11-25";
/// Legacy revisions vouch accepts from a server's `initialize` result.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `_meta` key of the protocol version (2026-07-28).
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities (2026-07-28).
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's name and version (2026-07-28).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server's name and version (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
