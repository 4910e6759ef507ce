//! Drives the engine through its public boundary.

use seedkv_engine::{Config, ConnectInfo, Engine, Now};

fn now(ms: u64) -> Now {
    Now::from_ns(ms * 1_000_000, 1_700_000_000_000_000)
}

fn roundtrip(
    engine: &mut Engine,
    client: seedkv_engine::ClientId,
    t: u64,
    input: &[u8],
) -> Vec<u8> {
    engine.handle_input(now(t), client, input);
    while engine.poll_event().is_some() {}
    let mut out = Vec::new();
    while let Some(c) = engine.poll_transmit() {
        assert_eq!(c, client);
        let bytes = engine.pending_output(c).to_vec();
        engine.consume_output(c, bytes.len());
        out.extend_from_slice(&bytes);
    }
    out
}

#[test]
fn set_then_get() {
    let mut e = Engine::new(Config::default(), now(0));
    let c = e.connect(now(0), ConnectInfo::default());
    assert_eq!(
        roundtrip(&mut e, c, 1, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"),
        b"+OK\r\n"
    );
    assert_eq!(
        roundtrip(&mut e, c, 2, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"),
        b"$1\r\nv\r\n"
    );
    assert_eq!(
        roundtrip(&mut e, c, 3, b"*2\r\n$4\r\nNOPE\r\n$1\r\nk\r\n"),
        b"-ERR unknown command 'NOPE', with args beginning with: 'k' \r\n"
    );
    assert_eq!(
        roundtrip(&mut e, c, 4, b"*1\r\n$3\r\nGET\r\n"),
        b"-ERR wrong number of arguments for 'get' command\r\n"
    );
}
