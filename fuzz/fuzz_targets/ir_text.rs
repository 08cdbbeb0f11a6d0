#![no_main]
//! Fuzz target `ir_text`: [`sci_ir::fuzz_entry::text`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_ir::fuzz_entry::text(data));
