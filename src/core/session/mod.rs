//! Session envelope v1, resume rules, turn lease, confirmations.
