//! Redis 7.0's script shebang (`#!lua flags=no-writes,allow-oom`), as
//! `evalExtractShebangFlags` parses it. A script without one runs in
//! compatibility mode (it may write, EVAL_RO makes it read-only).

/// The flags a script declared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// The script has a shebang (Redis: not SCRIPT_FLAG_EVAL_COMPAT_MODE).
    pub declared: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot_keys: bool,
}

/// The flags and the Lua source to compile: the body with its shebang line
/// cut before the newline, so that line numbers stay those of the body.
pub fn parse(body: &[u8]) -> Result<(ScriptFlags, Vec<u8>), String> {
    let mut flags = ScriptFlags::default();
    if !body.starts_with(b"#!") {
        return Ok((flags, body.to_vec()));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid script shebang".to_string());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    let Some(engine) = parts.next() else {
        return Err("ERR Invalid engine in script shebang".to_string());
    };
    if engine != "#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
    }
    flags.declared = true;
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {part}"));
        };
        if list.is_empty() {
            continue;
        }
        for flag in list.split(',') {
            match flag {
                "no-writes" => flags.no_writes = true,
                "allow-oom" => flags.allow_oom = true,
                "allow-stale" => flags.allow_stale = true,
                "no-cluster" => flags.no_cluster = true,
                "allow-cross-slot-keys" => flags.allow_cross_slot_keys = true,
                other => return Err(format!("ERR Unexpected flag in script shebang: {other}")),
            }
        }
    }
    Ok((flags, body[end..].to_vec()))
}
