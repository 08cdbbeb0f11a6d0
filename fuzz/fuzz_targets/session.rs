#![no_main]
//! Fuzz target `session`: [`sci_runtime::fuzz_entry::session`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_runtime::fuzz_entry::session(data));
