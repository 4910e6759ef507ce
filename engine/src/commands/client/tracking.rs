//! CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: client-side
//! caching's commands (Redis 7.0.15's `clientCommand` parts). The table
//! they drive lives in [`crate::tracking`].

use crate::client::ClientId;
use crate::cmd::Ctx;
use crate::tracking::{self, TrackingOptions};
use crate::util::parse_i64_strict;

/// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN]
/// [OPTOUT] [NOLOOP]. Options are parsed first (a syntax error, a second
/// REDIRECT, a redirect to a client that does not exist), then ON checks
/// them against each other and the client's mode; OFF ignores them.
pub(super) fn client_tracking(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let options = match parse_options(ctx, args) {
        Ok(o) => o,
        Err(e) => return ctx.error(&e),
    };
    let id = ctx.client_id;
    if args[2].eq_ignore_ascii_case(b"on") {
        let c = &ctx.clients[&id];
        let compared = match tracking::check_enable(c, &options) {
            Ok(n) => n,
            Err(e) => return ctx.error(&e),
        };
        ctx.work(compared + options.prefixes.len() as u64);
        let c = ctx.clients.get_mut(&id).expect("calling client exists");
        tracking::enable(&mut ctx.server.tracking, c, options);
    } else if args[2].eq_ignore_ascii_case(b"off") {
        let prefixes_count = ctx.client().tracking.prefixes.len() as u64;
        ctx.work(prefixes_count);
        let c = ctx.clients.get_mut(&id).expect("calling client exists");
        tracking::disable(&mut ctx.server.tracking, c);
    } else {
        return ctx.error("ERR syntax error");
    }
    ctx.ok();
}

/// The options after ON|OFF, in Redis's order of checks.
fn parse_options(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<TrackingOptions, String> {
    let mut o = TrackingOptions::default();
    let mut j = 3;
    while j < args.len() {
        ctx.work(1);
        let more = j + 1 < args.len();
        let a = &args[j];
        if a.eq_ignore_ascii_case(b"redirect") && more {
            j += 1;
            if o.redirect != 0 {
                return Err("ERR A client can only redirect to a single other client".into());
            }
            let Some(redirect) = parse_i64_strict(&args[j]) else {
                return Err("ERR value is not an integer or out of range".into());
            };
            if redirect <= 0 || ctx.clients.get(&ClientId(redirect as u64)).is_none() {
                return Err("ERR The client ID you want redirect to does not exist".into());
            }
            o.redirect = redirect as u64;
        } else if a.eq_ignore_ascii_case(b"bcast") {
            o.bcast = true;
        } else if a.eq_ignore_ascii_case(b"optin") {
            o.optin = true;
        } else if a.eq_ignore_ascii_case(b"optout") {
            o.optout = true;
        } else if a.eq_ignore_ascii_case(b"noloop") {
            o.noloop = true;
        } else if a.eq_ignore_ascii_case(b"prefix") && more {
            j += 1;
            o.prefixes.push(args[j].clone());
        } else {
            return Err("ERR syntax error".into());
        }
        j += 1;
    }
    Ok(o)
}

/// CLIENT CACHING YES|NO: only in OPTIN (YES) or OPTOUT (NO) mode; sets
/// the flag for the next command, or the whole MULTI.
pub(super) fn client_caching(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let t = &ctx.client().tracking;
    if !t.on {
        return ctx.error(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with \
             OPTIN or OPTOUT mode enabled",
        );
    }
    let (optin, optout) = (t.optin, t.optout);
    if args[2].eq_ignore_ascii_case(b"yes") {
        if !optin {
            return ctx.error(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            );
        }
    } else if args[2].eq_ignore_ascii_case(b"no") {
        if !optout {
            return ctx.error(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            );
        }
    } else {
        return ctx.error("ERR syntax error");
    }
    ctx.client().tracking.caching = true;
    ctx.ok();
}

/// CLIENT GETREDIR: the redirect target, 0 for none, -1 when tracking is
/// off.
pub(super) fn client_getredir(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let t = &ctx.client().tracking;
    let redirect = if t.on { t.redirect as i64 } else { -1 };
    ctx.int(redirect);
}

/// CLIENT TRACKINGINFO: a map of `flags` (a set), `redirect` and
/// `prefixes`, as Redis 7.0.15 lays it out.
pub(super) fn client_trackinginfo(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let t = ctx.client().tracking.clone();
    let mut flags = vec![if t.on { "on" } else { "off" }];
    if t.bcast {
        flags.push("bcast");
    }
    if t.optin {
        flags.push("optin");
        if t.caching {
            flags.push("caching-yes");
        }
    }
    if t.optout {
        flags.push("optout");
        if t.caching {
            flags.push("caching-no");
        }
    }
    if t.noloop {
        flags.push("noloop");
    }
    if t.broken_redirect {
        flags.push("broken_redirect");
    }
    ctx.work(t.prefixes.len() as u64);
    let mut w = ctx.w();
    w.map_len(3);
    w.bulk_str("flags");
    w.set_len(flags.len());
    for f in flags {
        w.bulk_str(f);
    }
    w.bulk_str("redirect");
    w.int(if t.on { t.redirect as i64 } else { -1 });
    w.bulk_str("prefixes");
    w.array_len(t.prefixes.len());
    for p in &t.prefixes {
        w.bulk(p);
    }
}
