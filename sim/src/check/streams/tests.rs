//! Hand-built histories for the stream checker.
