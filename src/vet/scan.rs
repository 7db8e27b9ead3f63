//! The static scan of tool definitions (placeholder; see the API contract).
