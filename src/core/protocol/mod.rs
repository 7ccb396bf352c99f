//! Turn protocol v1 (AgentsKit Chat compatible). Owned by the protocol work; see ARCHITECTURE.md.
