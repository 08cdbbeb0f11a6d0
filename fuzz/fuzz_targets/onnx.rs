#![no_main]
//! Fuzz target `onnx`: [`sci_compiler::fuzz_entry::onnx`] on every input.

libfuzzer_sys::fuzz_target!(|data: &[u8]| sci_compiler::fuzz_entry::onnx(data));
