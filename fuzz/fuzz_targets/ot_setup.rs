#![no_main]
//! Fuzz target `ot_setup`: [`sci_runtime::fuzz_entry::ot_setup`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_runtime::fuzz_entry::ot_setup(data));
