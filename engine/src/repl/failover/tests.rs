//! FAILOVER between two engines wired together: the refusals, the pause,
//! the hand-over once the target acked, the target's promotion by
//! `PSYNC ... FAILOVER`, TIMEOUT and ABORT.

use crate::client::{ClientId, ConnectInfo};
use crate::event::Event;
use crate::propagate::encode_command;
use crate::resp::Frame;
use crate::testing::{bulk, err, simple, TestEngine};

fn command(args: &[&str]) -> Vec<u8> {
    let mut bytes = Vec::new();
    encode_command(&mut bytes, args);
    bytes
}

fn take(t: &mut TestEngine, client: ClientId) -> Vec<u8> {
    let out = t.engine.pending_output(client).to_vec();
    t.engine.consume_output(client, out.len());
    out
}

fn feed(t: &mut TestEngine, client: ClientId, bytes: &[u8]) {
    t.engine.handle_input(t.now, client, bytes);
    while let Some(e) = t.engine.poll_event() {
        t.events.push(e);
    }
}

/// One command of `c` and its reply, leaving every other client's output
/// (a replica's stream above all) in place, unlike `TestEngine::cmd`.
fn ask(t: &mut TestEngine, c: ClientId, args: &[&str]) -> Frame {
    feed(t, c, &command(args));
    let out = take(t, c);
    let mut d = crate::resp::FrameDecoder::new();
    d.feed(&out);
    let frame = d.next_frame().expect("valid RESP").expect("a reply");
    assert!(d.next_frame().expect("valid RESP").is_none(), "one reply");
    frame
}

fn info_field(t: &mut TestEngine, c: ClientId, name: &str) -> String {
    let Frame::Bulk(info) = ask(t, c, &["INFO", "replication"]) else {
        panic!("INFO reply");
    };
    let info = String::from_utf8(info).expect("text");
    let prefix = format!("{name}:");
    let line = info.lines().find(|l| l.starts_with(&prefix));
    line.unwrap_or_else(|| panic!("no {name} in {info}"))[prefix.len()..].to_string()
}

/// The last `ConnectPrimary` an engine emitted since `from`.
fn connect_event(t: &TestEngine, from: usize) -> Option<(ClientId, String, u16)> {
    t.events[from..].iter().rev().find_map(|e| match e {
        Event::ConnectPrimary { client, host, port } => Some((*client, host.clone(), *port)),
        _ => None,
    })
}

/// One connection between two engines: `up` is the dialing side's link
/// client, `down` the accepting side's client.
#[derive(Clone, Copy)]
struct Wire {
    up: ClientId,
    down: ClientId,
}

/// Moves bytes both ways, a bounded number of rounds. `a` dials `b`.
fn pump(a: &mut TestEngine, b: &mut TestEngine, w: Wire) {
    for _ in 0..20 {
        let up = take(a, w.up);
        if !up.is_empty() {
            feed(b, w.down, &up);
        }
        let down = take(b, w.down);
        if !down.is_empty() {
            feed(a, w.up, &down);
        }
    }
}

/// A primary engine `p` with `a` = 1, and a replica engine `r` synced
/// from it over `w`; `pc` and `rc` are ordinary clients of each.
struct Pair {
    p: TestEngine,
    r: TestEngine,
    pc: ClientId,
    rc: ClientId,
    w: Wire,
}

const REPLICA_IP: &str = "10.0.0.2";

fn pair() -> Pair {
    let mut p = TestEngine::new();
    let pc = p.connect();
    ask(&mut p, pc, &["SET", "a", "1"]);
    let mut r = TestEngine::new();
    let rc = r.connect();
    let before = r.events.len();
    r.cmd(rc, &["REPLICAOF", "10.0.0.1", "7000"]);
    let (up, _, _) = connect_event(&r, before).expect("REPLICAOF asks for a link");
    r.engine.primary_link_up(r.now, up);
    let info = ConnectInfo {
        addr: format!("{REPLICA_IP}:40000"),
        ..ConnectInfo::default()
    };
    let down = p.engine.connect(p.now, info);
    let w = Wire { up, down };
    pump(&mut r, &mut p, w);
    let mut pair = Pair { p, r, pc, rc, w };
    pair.ack();
    assert_eq!(
        ask(&mut pair.p, pair.pc, &["WAIT", "1", "0"]),
        crate::testing::int(1)
    );
    pair
}

impl Pair {
    /// A second of the replica's clock: its cron acks its offset.
    fn ack(&mut self) {
        self.r.advance_ms(1000);
        pump(&mut self.r, &mut self.p, self.w);
    }

    /// The primary dialed the replica (its hand-over): the link is wired
    /// and the handshake runs.
    fn wire_back(&mut self, from: usize) -> Wire {
        let (up, host, port) = connect_event(&self.p, from).expect("the hand-over dials");
        assert_eq!((host.as_str(), port), (REPLICA_IP, 6379));
        self.p.engine.primary_link_up(self.p.now, up);
        let down = self.r.connect();
        let w = Wire { up, down };
        pump(&mut self.p, &mut self.r, w);
        w
    }
}

#[test]
fn refusals_in_redis_order() {
    let mut t = TestEngine::new();
    let c = t.connect();
    for (args, reply) in [
        (&["FAILOVER", "ABORT"][..], "ERR No failover in progress."),
        (&["FAILOVER"], "ERR FAILOVER requires connected replicas."),
        (&["FAILOVER", "foo"], "ERR syntax error"),
        (
            &["FAILOVER", "TIMEOUT", "0"],
            "ERR FAILOVER timeout must be greater than 0",
        ),
        (
            &["FAILOVER", "TIMEOUT", "x"],
            "ERR value is not an integer or out of range",
        ),
        (
            &["FAILOVER", "TIMEOUT", "5", "TIMEOUT", "5"],
            "ERR syntax error",
        ),
        (&["FAILOVER", "TO", "h"], "ERR syntax error"),
        (
            &["FAILOVER", "TO", "h", "x"],
            "ERR value is not an integer or out of range",
        ),
        (&["FAILOVER", "ABORT", "TIMEOUT", "5"], "ERR syntax error"),
        (&["FAILOVER", "FORCE", "FORCE"], "ERR syntax error"),
    ] {
        assert_eq!(ask(&mut t, c, args), err(reply), "{args:?}");
    }
    let mut pair = pair();
    let (p, pc) = (&mut pair.p, pair.pc);
    for (args, reply) in [
        (
            &["FAILOVER", "FORCE"][..],
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        ),
        (
            &["FAILOVER", "TO", REPLICA_IP, "6379", "FORCE"],
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        ),
        (
            &["FAILOVER", "TO", REPLICA_IP, "9"],
            "ERR FAILOVER target HOST and PORT is not a replica.",
        ),
    ] {
        assert_eq!(ask(p, pc, args), err(reply), "{args:?}");
    }
    assert_eq!(
        ask(&mut pair.r, pair.rc, &["FAILOVER"]),
        err("ERR FAILOVER is not valid when server is a replica.")
    );
    let psync = [
        "PSYNC",
        "0123456789abcdef0123456789abcdef01234567",
        "1",
        "FAILOVER",
    ];
    assert_eq!(
        ask(&mut pair.p, pair.pc, &psync),
        err("ERR PSYNC FAILOVER can't be sent to a master.")
    );
    let other = pair.r.connect();
    assert_eq!(
        ask(&mut pair.r, other, &psync),
        err("ERR PSYNC FAILOVER replid must match my replid.")
    );
}

#[test]
fn failover_hands_the_role_to_the_synced_replica() {
    let mut pair = pair();
    let old_replid = info_field(&mut pair.p, pair.pc, "master_replid");
    // A write the replica has and has not acked yet: the failover waits.
    feed(&mut pair.p, pair.pc, &command(&["SET", "x", "9"]));
    assert_eq!(take(&mut pair.p, pair.pc), b"+OK\r\n");
    pump(&mut pair.r, &mut pair.p, pair.w);
    assert_eq!(ask(&mut pair.p, pair.pc, &["FAILOVER"]), simple("OK"));
    assert_eq!(
        info_field(&mut pair.p, pair.pc, "master_failover_state"),
        "waiting-for-sync"
    );
    assert_eq!(
        ask(&mut pair.p, pair.pc, &["FAILOVER"]),
        err("ERR FAILOVER already in progress.")
    );
    assert_eq!(
        ask(&mut pair.p, pair.pc, &["REPLICAOF", "NO", "ONE"]),
        err("ERR REPLICAOF not allowed while failing over.")
    );
    // A write waits (the pause); a read does not.
    let writer = pair.p.connect();
    feed(&mut pair.p, writer, &command(&["SET", "b", "2"]));
    assert!(take(&mut pair.p, writer).is_empty());
    assert_eq!(ask(&mut pair.p, pair.pc, &["GET", "a"]), bulk("1"));
    let from = pair.p.events.len();
    pair.ack();
    let w = pair.wire_back(from);
    // The held write meets a read-only replica once the pause ends.
    pair.p.advance_ms(0);
    assert_eq!(
        take(&mut pair.p, writer),
        b"-READONLY You can't write against a read only replica.\r\n"
    );
    // The target promoted itself and resynced its old primary partially.
    assert_eq!(info_field(&mut pair.r, pair.rc, "role"), "master");
    assert_eq!(
        info_field(&mut pair.r, pair.rc, "master_replid2"),
        old_replid
    );
    assert_eq!(info_field(&mut pair.r, pair.rc, "connected_slaves"), "1");
    assert_eq!(info_field(&mut pair.p, pair.pc, "role"), "slave");
    assert_eq!(
        info_field(&mut pair.p, pair.pc, "master_failover_state"),
        "no-failover"
    );
    assert_eq!(info_field(&mut pair.p, pair.pc, "master_link_status"), "up");
    // Writes on the new primary reach the old one.
    assert_eq!(ask(&mut pair.r, pair.rc, &["SET", "c", "3"]), simple("OK"));
    pump(&mut pair.p, &mut pair.r, w);
    assert_eq!(ask(&mut pair.p, pair.pc, &["GET", "c"]), bulk("3"));
    assert_eq!(ask(&mut pair.r, pair.rc, &["GET", "x"]), bulk("9"));
}

#[test]
fn timeout_aborts_and_force_hands_over() {
    let mut pair = pair();
    feed(&mut pair.p, pair.pc, &command(&["SET", "x", "9"]));
    assert_eq!(take(&mut pair.p, pair.pc), b"+OK\r\n");
    let writer = pair.p.connect();
    assert_eq!(
        ask(&mut pair.p, pair.pc, &["FAILOVER", "TIMEOUT", "500"]),
        simple("OK")
    );
    feed(&mut pair.p, writer, &command(&["SET", "b", "2"]));
    pair.p.advance_ms(600);
    // The abort ended the pause: the held write runs at the next turn.
    pair.p.advance_ms(0);
    assert_eq!(take(&mut pair.p, writer), b"+OK\r\n");
    assert_eq!(
        info_field(&mut pair.p, pair.pc, "master_failover_state"),
        "no-failover"
    );
    assert_eq!(info_field(&mut pair.p, pair.pc, "role"), "master");
    // FORCE: the target never acked, yet it gets the role at the timeout.
    let args = [
        "FAILOVER", "TO", REPLICA_IP, "6379", "TIMEOUT", "500", "FORCE",
    ];
    assert_eq!(ask(&mut pair.p, pair.pc, &args), simple("OK"));
    let from = pair.p.events.len();
    pair.p.advance_ms(600);
    assert_eq!(
        info_field(&mut pair.p, pair.pc, "master_failover_state"),
        "failover-in-progress"
    );
    assert_eq!(info_field(&mut pair.p, pair.pc, "role"), "slave");
    pump(&mut pair.r, &mut pair.p, pair.w);
    pair.wire_back(from);
    assert_eq!(info_field(&mut pair.r, pair.rc, "role"), "master");
    assert_eq!(info_field(&mut pair.p, pair.pc, "role"), "slave");
    assert_eq!(ask(&mut pair.p, pair.pc, &["GET", "b"]), bulk("2"));
}

#[test]
fn abort_in_either_state() {
    let mut pair = pair();
    feed(&mut pair.p, pair.pc, &command(&["SET", "x", "9"]));
    assert_eq!(take(&mut pair.p, pair.pc), b"+OK\r\n");
    assert_eq!(ask(&mut pair.p, pair.pc, &["FAILOVER"]), simple("OK"));
    assert_eq!(
        ask(&mut pair.p, pair.pc, &["FAILOVER", "ABORT"]),
        simple("OK")
    );
    assert_eq!(
        info_field(&mut pair.p, pair.pc, "master_failover_state"),
        "no-failover"
    );
    assert_eq!(ask(&mut pair.p, pair.pc, &["SET", "y", "1"]), simple("OK"));
    // Handed over, its PSYNC not answered yet: ABORT makes it a primary
    // again under a new id.
    let replid = info_field(&mut pair.p, pair.pc, "master_replid");
    assert_eq!(ask(&mut pair.p, pair.pc, &["FAILOVER"]), simple("OK"));
    pump(&mut pair.r, &mut pair.p, pair.w);
    pair.ack();
    assert_eq!(
        info_field(&mut pair.p, pair.pc, "master_failover_state"),
        "failover-in-progress"
    );
    assert_eq!(
        ask(&mut pair.p, pair.pc, &["FAILOVER", "ABORT"]),
        simple("OK")
    );
    assert_eq!(info_field(&mut pair.p, pair.pc, "role"), "master");
    assert_eq!(info_field(&mut pair.p, pair.pc, "master_replid2"), replid);
    assert_eq!(ask(&mut pair.p, pair.pc, &["SET", "z", "1"]), simple("OK"));
}
