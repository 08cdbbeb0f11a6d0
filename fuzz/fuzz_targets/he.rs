#![no_main]
//! Fuzz target `he`: [`sci_runtime::fuzz_entry::he`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_runtime::fuzz_entry::he(data));
