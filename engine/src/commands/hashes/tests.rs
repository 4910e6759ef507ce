use crate::resp::Frame;
use crate::testing::{bulk, err, int, TestEngine};
use crate::Config;

fn arr(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|s| bulk(s)).collect())
}

#[test]
fn hset_hget_basics() {
    let mut t = TestEngine::new();
    let c = t.connect();
    assert_eq!(t.cmd(c, &["HSET", "h", "a", "1", "b", "2"]), int(2));
    assert_eq!(t.cmd(c, &["HSET", "h", "a", "3"]), int(0));
    assert_eq!(t.cmd(c, &["HGET", "h", "a"]), bulk("3"));
    assert_eq!(t.cmd(c, &["HGETALL", "h"]), arr(&["a", "3", "b", "2"]));
    assert_eq!(
        t.cmd(c, &["HSET", "h", "a"]),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(t.cmd(c, &["HDEL", "h", "a", "b", "c"]), int(2));
    assert_eq!(t.cmd(c, &["EXISTS", "h"]), int(0));
}

#[test]
fn hgetall_and_big_hash_delete_charge_per_field() {
    let mut t = TestEngine::with_config(Config {
        record_executions: true,
        ..Config::default()
    });
    let c = t.connect();
    for i in 0..1000 {
        t.cmd(c, &["HSET", "big", &format!("f{i}"), "v"]);
    }
    assert_eq!(t.cmd(c, &["OBJECT", "ENCODING", "big"]), bulk("hashtable"));
    t.cmd(c, &["HGETALL", "big"]);
    assert!(t.executed_work("hgetall") >= 1000);
    t.cmd(c, &["HKEYS", "big"]);
    assert!(t.executed_work("hkeys") >= 1000);
    t.cmd(c, &["HGET", "big", "f1"]);
    assert!(t.executed_work("hget") < 10);
    t.cmd(c, &["DEL", "big"]);
    assert!(t.executed_work("del") >= 1000);
}
