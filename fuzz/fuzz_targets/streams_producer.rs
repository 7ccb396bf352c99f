#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnkeep_fuzz::targets::streams_producer::run(data));
