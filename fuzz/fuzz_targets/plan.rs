#![no_main]
//! Fuzz target `plan`: [`sci_ir::fuzz_entry::plan`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_ir::fuzz_entry::plan(data));
