#![no_main]
//! Fuzz target `npy`: [`sci_ir::fuzz_entry::npy`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_ir::fuzz_entry::npy(data));
