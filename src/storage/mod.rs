//! Host-independent adapters of the ports and their conformance suites.
