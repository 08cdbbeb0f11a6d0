#![no_main]
//! Fuzz target `npz`: [`sci_ir::fuzz_entry::npz`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_ir::fuzz_entry::npz(data));
