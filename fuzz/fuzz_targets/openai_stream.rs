#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| turnkeep_fuzz::targets::openai_stream::run(data));
