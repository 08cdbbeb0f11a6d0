#![no_main]
//! Fuzz target `handshake`: [`sci_runtime::fuzz_entry::handshake`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_runtime::fuzz_entry::handshake(data));
