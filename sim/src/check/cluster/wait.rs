//! WAIT n returning k: at the moment the primary produced that reply, at
//! least k replica links had handed it an ack of the client's write
//! offset (the primary's stream end after the connection's last write).

use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;
use seedkv_engine::resp::Frame;

pub struct Wait;

impl ClusterChecker for Wait {
    fn name(&self) -> &'static str {
        "repl-wait"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        for op in &h.ops {
            let (true, Some(Frame::Integer(k))) = (op.args[0] == b"WAIT", &op.reply) else {
                continue;
            };
            if op.wait_woff == 0 || op.wait_answered_ns == 0 {
                continue;
            }
            let at = op.wait_answered_ns;
            let acked = h
                .sessions
                .iter()
                .filter(|s| s.primary == op.node)
                .filter(|s| s.acks.iter().any(|&(t, o)| t <= at && o >= op.wait_woff))
                .count() as i64;
            if *k > acked {
                return fail(
                    self.name(),
                    format!(
                        "client {} WAIT {} got {k} at {at} ns, but only {acked} replicas had acked offset {} by then",
                        op.client,
                        String::from_utf8_lossy(&op.args[1]),
                        op.wait_woff
                    ),
                );
            }
        }
        Ok(())
    }
}
