//! INFO's `# Replication` section, field for field as Redis 7.0.15's
//! `genRedisInfoString` writes it.

use std::fmt::Write;

use crate::server::Server;
use crate::time::Now;

/// Writes the section into `out`.
pub fn write(server: &Server, now: Now, out: &mut String) {
    let repl = &server.repl;
    out.push_str("# Replication\r\n");
    match repl.master.as_deref() {
        Some(link) => super::replica::write_info(server, link, now, out),
        None => {
            out.push_str("role:master\r\n");
        }
    }
    let _ = write!(out, "connected_slaves:{}\r\n", repl.replicas.len());
    for (i, r) in repl.replicas.iter().enumerate() {
        let lag_s = now.mono_ns.saturating_sub(r.ack_mono_ns) / 1_000_000_000;
        let _ = write!(
            out,
            "slave{i}:ip={},port={},state={},offset={},lag={lag_s}\r\n",
            r.ip,
            r.listening_port,
            match r.state {
                super::ReplicaState::WaitAck => "wait_bgsave",
                super::ReplicaState::Online => "online",
            },
            r.ack_offset
        );
    }
    let (active, size, first, histlen) = match &repl.backlog {
        Some(b) => (1, b.size_bytes(), b.first_byte_offset(), b.histlen()),
        None => (0, backlog_size_configured(server), 0, 0),
    };
    let _ = write!(
        out,
        "master_failover_state:{}\r\n\
         master_replid:{}\r\n\
         master_replid2:{}\r\n\
         master_repl_offset:{}\r\n\
         second_repl_offset:{}\r\n\
         repl_backlog_active:{active}\r\n\
         repl_backlog_size:{size}\r\n\
         repl_backlog_first_byte_offset:{first}\r\n\
         repl_backlog_histlen:{histlen}\r\n",
        super::failover::state_name(repl.failover.as_ref()),
        repl.replid,
        repl.replid2,
        repl.master_repl_offset,
        repl.second_replid_offset,
    );
}

fn backlog_size_configured(server: &Server) -> usize {
    super::primary::config_u64(&server.config, "repl-backlog-size") as usize
}
