//! Arbitrary bytes from several clients, split arbitrarily, must never panic
//! the engine, and a client's garbage must not disturb another client.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seedkv_engine::{Config, ConnectInfo, Engine, Now};

fuzz_target!(|data: &[u8]| {
    let mut now = Now::from_ns(0, 1_700_000_000_000_000);
    let mut engine = Engine::new(Config::default(), now);
    let clients = [
        engine.connect(now, ConnectInfo::default()),
        engine.connect(now, ConnectInfo::default()),
    ];
    // Each chunk: one byte header (client, length), then that many bytes.
    let mut rest = data;
    while let Some((&header, tail)) = rest.split_first() {
        let client = clients[(header & 1) as usize];
        let len = ((header >> 1) as usize).min(tail.len());
        let (chunk, tail) = tail.split_at(len);
        engine.handle_input(now, client, chunk);
        now.mono_ns += 1_000_000;
        now.unix_us += 1_000;
        engine.handle_timeout(now);
        while engine.poll_event().is_some() {}
        while let Some(c) = engine.poll_transmit() {
            let n = engine.pending_output(c).len();
            engine.consume_output(c, n);
        }
        rest = tail;
    }
});
