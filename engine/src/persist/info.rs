//! INFO's `# Persistence` section, field for field as Redis 7.0.15
//! prints it (copy-on-write figures are 0: a child's memory is the host's).

use std::fmt::Write;

use crate::server::Server;
use crate::time::Now;

pub(crate) fn write(server: &Server, now: Now, out: &mut String) -> std::fmt::Result {
    let rdb = &server.persist.rdb;
    let aof = &server.persist.aof;
    let rw = &aof.rewrite;
    let secs_since = |started: u64| ((now.mono_ns.saturating_sub(started)) / 1_000_000_000) as i64;
    let bgsave_now = rdb
        .child
        .as_ref()
        .map_or(-1, |c| secs_since(c.started_mono_ns));
    let rewrite_now = rw
        .child
        .as_ref()
        .map_or(-1, |c| secs_since(c.started_mono_ns));
    let status = |ok: bool| if ok { "ok" } else { "err" };
    write!(
        out,
        "# Persistence\r\n\
         loading:{}\r\n\
         async_loading:0\r\n\
         current_cow_peak:0\r\n\
         current_cow_size:0\r\n\
         current_cow_size_age:0\r\n\
         current_fork_perc:0.00\r\n\
         current_save_keys_processed:0\r\n\
         current_save_keys_total:0\r\n\
         rdb_changes_since_last_save:{}\r\n\
         rdb_bgsave_in_progress:{}\r\n\
         rdb_last_save_time:{}\r\n\
         rdb_last_bgsave_status:{}\r\n\
         rdb_last_bgsave_time_sec:{}\r\n\
         rdb_current_bgsave_time_sec:{}\r\n\
         rdb_saves:{}\r\n\
         rdb_last_cow_size:0\r\n\
         rdb_last_load_keys_expired:{}\r\n\
         rdb_last_load_keys_loaded:{}\r\n\
         aof_enabled:{}\r\n\
         aof_rewrite_in_progress:{}\r\n\
         aof_rewrite_scheduled:{}\r\n\
         aof_last_rewrite_time_sec:{}\r\n\
         aof_current_rewrite_time_sec:{}\r\n\
         aof_last_bgrewrite_status:{}\r\n\
         aof_rewrites:{}\r\n\
         aof_rewrites_consecutive_failures:{}\r\n\
         aof_last_write_status:{}\r\n\
         aof_last_cow_size:0\r\n\
         module_fork_in_progress:0\r\n\
         module_fork_last_cow_size:0\r\n",
        (server.persist.load.is_some() || server.persist.aof_load.is_some()) as u8,
        server.dirty,
        rdb.child.is_some() as u8,
        rdb.lastsave_unix_s,
        status(rdb.last_bgsave_ok),
        rdb.last_bgsave_time_s,
        bgsave_now,
        rdb.saves,
        rdb.last_load_keys_expired,
        rdb.last_load_keys_loaded,
        (aof.on || rw.turning_on) as u8,
        rw.child.is_some() as u8,
        rw.scheduled as u8,
        rw.last_time_s,
        rewrite_now,
        status(rw.last_ok),
        rw.rewrites,
        rw.consecutive_failures,
        status(aof.write_error.is_none() && aof.fsync_error.is_none()),
    )?;
    if aof.on {
        write!(
            out,
            "aof_current_size:{}\r\n\
             aof_base_size:{}\r\n\
             aof_pending_rewrite:{}\r\n\
             aof_buffer_length:{}\r\n\
             aof_pending_bio_fsync:{}\r\n\
             aof_delayed_fsync:{}\r\n",
            aof.base_size_bytes + aof.incr_size_bytes,
            rw.base_size_bytes,
            rw.scheduled as u8,
            aof.buf.len(),
            aof.fsync_in_flight as u8,
            aof.delayed_fsync,
        )?;
    }
    Ok(())
}
