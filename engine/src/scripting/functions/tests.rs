//! FUNCTION and FCALL through the engine, with replies checked against
//! redis-server 7.0.15's (each expected reply below was read from it).

use crate::resp::Frame;
use crate::testing::{bulk, err, int, simple, TestEngine};
use crate::ClientId;

const COUNTER: &str = "#!lua name=counter\n\
redis.register_function('incr_by', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)\n\
redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}";

fn engine() -> (TestEngine, ClientId) {
    let mut t = TestEngine::new();
    let c = t.connect();
    (t, c)
}

fn load(t: &mut TestEngine, c: ClientId, code: &str) -> Frame {
    t.cmd(c, &["FUNCTION", "LOAD", code])
}

#[test]
fn load_and_call() {
    let (mut t, c) = engine();
    assert_eq!(load(&mut t, c, COUNTER), bulk("counter"));
    assert_eq!(t.cmd(c, &["FCALL", "incr_by", "1", "k", "5"]), int(5));
    assert_eq!(t.cmd(c, &["FCALL", "INCR_BY", "1", "k", "2"]), int(7));
    assert_eq!(t.cmd(c, &["FCALL_RO", "peek", "1", "k"]), bulk("7"));
    assert_eq!(
        t.cmd(c, &["FCALL_RO", "incr_by", "1", "k", "1"]),
        err("ERR Can not execute a script with write flag using *_ro command.")
    );
    assert_eq!(
        t.cmd(c, &["FCALL", "nope", "0"]),
        err("ERR Function not found")
    );
    assert_eq!(
        t.cmd(c, &["FCALL", "peek", "x"]),
        err("ERR Bad number of keys provided")
    );
    assert_eq!(
        t.cmd(c, &["FCALL", "peek", "2", "k"]),
        err("ERR Number of keys can't be greater than number of args")
    );
    assert_eq!(
        t.cmd(c, &["FCALL", "peek", "-1"]),
        err("ERR Number of keys can't be negative")
    );
}

#[test]
fn metadata_and_registration_errors() {
    let (mut t, c) = engine();
    let cases: &[(&str, &str)] = &[
        ("return 1", "ERR Missing library metadata"),
        ("#!lua name=x", "ERR Invalid library metadata"),
        ("#!foo name=x\n", "ERR Engine 'foo' not found"),
        ("#!foo name=x-y\n", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("#!lua name=x\nreturn 1", "ERR No functions registered"),
        ("#!lua name=x\nredis.call('ping')", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"),
        ("#!lua name=x\nlocal s = string.len('a')", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'"),
        ("#!lua name=x\nx = 1", "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table"),
        ("#!lua name=x\nfoo(", "ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'"),
        ("#!lua name=x\nredis.register_function('a', function() end) redis.register_function('A', function() end)", "ERR Error registering functions: ERR Function already exists in the library"),
        ("#!lua name=x\nredis.register_function('f-1', function() end)", "ERR Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("#!lua name=x\nredis.register_function('s6', 'x')", "ERR Error registering functions: ERR second argument to redis.register_function must be a function"),
        ("#!lua name=x\nredis.register_function()", "ERR Error registering functions: ERR wrong number of arguments to redis.register_function"),
        ("#!lua name=x\nredis.register_function({callback=function() end})", "ERR Error registering functions: ERR redis.register_function must get a function name argument"),
        ("#!lua name=x\nredis.register_function{function_name='g', callback=function() end, flags={'bad'}}", "ERR Error registering functions: ERR unknown flag given"),
        ("#!lua name=x\nredis.register_function('x')", "ERR Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."),
        ("#!lua name=x\nredis.setresp(3)", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'setresp'"),
    ];
    for (code, expected) in cases {
        assert_eq!(load(&mut t, c, code), err(expected), "{code}");
    }
    assert_eq!(t.cmd(c, &["FUNCTION", "STATS"]), stats(0, 0));
}

fn stats(libraries: i64, functions: i64) -> Frame {
    Frame::Array(vec![
        bulk("running_script"),
        Frame::Null,
        bulk("engines"),
        Frame::Array(vec![
            bulk("LUA"),
            Frame::Array(vec![
                bulk("libraries_count"),
                int(libraries),
                bulk("functions_count"),
                int(functions),
            ]),
        ]),
    ])
}

#[test]
fn names_collide_across_libraries_and_replace_restores_on_failure() {
    let (mut t, c) = engine();
    assert_eq!(load(&mut t, c, COUNTER), bulk("counter"));
    assert_eq!(
        load(&mut t, c, COUNTER),
        err("ERR Library 'counter' already exists")
    );
    let other = "#!lua name=other\nredis.register_function('PEEK', function() return 1 end)";
    assert_eq!(
        load(&mut t, c, other),
        err("ERR Function PEEK already exists")
    );
    // A REPLACE that collides keeps the old library.
    let bad = "#!lua name=counter\nredis.register_function('x', function() return 1 end)";
    let clash = "#!lua name=clash\nredis.register_function('x', function() return 2 end)";
    assert_eq!(load(&mut t, c, clash), bulk("clash"));
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LOAD", "REPLACE", bad]),
        err("ERR Function x already exists")
    );
    assert_eq!(t.cmd(c, &["FCALL", "peek", "1", "k"]), Frame::Null);
    assert_eq!(t.cmd(c, &["FUNCTION", "STATS"]), stats(2, 3));
    assert_eq!(t.cmd(c, &["FUNCTION", "DELETE", "clash"]), simple("OK"));
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LOAD", "replace", bad]),
        bulk("counter")
    );
    assert_eq!(t.cmd(c, &["FCALL", "x", "0"]), int(1));
    assert_eq!(
        t.cmd(c, &["FCALL", "peek", "0"]),
        err("ERR Function not found")
    );
    assert_eq!(
        t.cmd(c, &["FUNCTION", "DELETE", "nope"]),
        err("ERR Library not found")
    );
}

#[test]
fn run_time_sandbox_and_errors() {
    let (mut t, c) = engine();
    let lib = "#!lua name=rt\n\
local function helper() return KEYS end\n\
redis.register_function('g_keys', function(k, a) return helper() end)\n\
redis.register_function('g_err', function(k, a) error('boom') end)\n\
redis.register_function('g_tab', function(k, a) return {k[1], a[1], #k, #a} end)\n\
redis.register_function('g_glob', function(k, a) x = 5 end)\n\
redis.register_function('g_reg', function(k, a) return redis.register_function('z', function() end) end)\n\
redis.register_function('g_raw', function(k, a) rawset(_G, 'leak', 1) end)";
    assert_eq!(load(&mut t, c, lib), bulk("rt"));
    assert_eq!(t.cmd(c, &["FCALL", "g_keys", "0"]), err("ERR user_function:2: Script attempted to access nonexistent global variable 'KEYS' script: g_keys, on @user_function:2."));
    assert_eq!(
        t.cmd(c, &["FCALL", "g_err", "0"]),
        err("ERR user_function:4: boom script: g_err, on @user_function:4.")
    );
    assert_eq!(
        t.cmd(c, &["FCALL", "g_tab", "2", "a", "b", "c"]),
        Frame::Array(vec![bulk("a"), bulk("c"), int(2), int(1)])
    );
    assert_eq!(t.cmd(c, &["FCALL", "g_glob", "0"]), err("ERR user_function:6: Attempt to modify a readonly table script: g_glob, on @user_function:6."));
    assert_eq!(t.cmd(c, &["FCALL", "g_reg", "0"]), err("ERR user_function:7: attempt to call field 'register_function' (a nil value) script: g_reg, on @user_function:7."));
    let Frame::Error(e) = t.cmd(c, &["FCALL", "g_raw", "0"]) else {
        panic!("rawset on the globals must fail");
    };
    assert!(e.starts_with(b"ERR Attempt to modify a readonly table"));
    // EVAL's state is another one: a script cannot see a function.
    assert_eq!(
        t.cmd(c, &["EVAL", "return type(helper)", "0"]),
        err("ERR user_script:1: Script attempted to access nonexistent global variable 'helper' script: b754c9a4da842451926f26bd2b87525d2dfadc73, on @user_script:1.")
    );
}

#[test]
fn load_timeout_is_counted() {
    let (mut t, c) = engine();
    let code = "#!lua name=tm\nredis.register_function('f', function() end)\nwhile true do end";
    assert_eq!(
        load(&mut t, c, code),
        err("ERR Error registering functions: ERR FUNCTION LOAD timeout")
    );
    assert_eq!(t.cmd(c, &["FUNCTION", "STATS"]), stats(0, 0));
}

#[test]
fn list_layout_and_options() {
    let (mut t, c) = engine();
    assert_eq!(load(&mut t, c, COUNTER), bulk("counter"));
    let function = |name: &str, description: Frame, flags: Vec<Frame>| {
        Frame::Array(vec![
            bulk("name"),
            bulk(name),
            bulk("description"),
            description,
            bulk("flags"),
            Frame::Array(flags),
        ])
    };
    let library = Frame::Array(vec![
        bulk("library_name"),
        bulk("counter"),
        bulk("engine"),
        bulk("LUA"),
        bulk("functions"),
        Frame::Array(vec![
            function("incr_by", Frame::Null, vec![]),
            function("peek", bulk("reads"), vec![simple("no-writes")]),
        ]),
    ]);
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LIST"]),
        Frame::Array(vec![library.clone()])
    );
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LIST", "LIBRARYNAME", "COUNT*"]),
        Frame::Array(vec![library])
    );
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LIST", "libraryname", "x*"]),
        Frame::Array(vec![])
    );
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LIST", "libraryname"]),
        err("ERR library name argument was not given")
    );
    assert_eq!(
        t.cmd(c, &["FUNCTION", "LIST", "withcode", "withcode"]),
        err("ERR Unknown argument withcode")
    );
    let Frame::Array(libs) = t.cmd(c, &["FUNCTION", "LIST", "WITHCODE"]) else {
        panic!("an array");
    };
    let Frame::Array(fields) = &libs[0] else {
        panic!("a library");
    };
    assert_eq!(fields[6..], [bulk("library_code"), bulk(COUNTER)]);
}

/// `FUNCTION DUMP` of this library on redis-server 7.0.15.
const LIB1: &str = "#!lua name=lib1\nredis.register_function('ff', function() return 1 end)";
const LIB1_DUMP_HEX: &str = "f5404623216c7561206e616d653d6c6962310a72656469732e72656769737465725f66756e6374696f6e28276666272c2066756e6374696f6e28292072657475726e203120656e64290a00dc9e4aeb8eef879e";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn dump_is_redis_bytes_and_restore_policies() {
    let (mut t, c) = engine();
    assert_eq!(load(&mut t, c, LIB1), bulk("lib1"));
    let redis_payload = unhex(LIB1_DUMP_HEX);
    assert_eq!(
        t.cmd(c, &["FUNCTION", "DUMP"]),
        Frame::Bulk(redis_payload.clone())
    );
    let restore = |t: &mut TestEngine, policy: &[&[u8]]| {
        let mut args: Vec<&[u8]> = vec![b"FUNCTION", b"RESTORE", &redis_payload];
        args.extend_from_slice(policy);
        t.cmd_bytes(c, &args)
    };
    assert_eq!(restore(&mut t, &[]), err("ERR Library lib1 already exists"));
    assert_eq!(
        restore(&mut t, &[b"append"]),
        err("ERR Library lib1 already exists")
    );
    assert_eq!(restore(&mut t, &[b"REPLACE"]), simple("OK"));
    assert_eq!(t.cmd(c, &["FUNCTION", "FLUSH"]), simple("OK"));
    let other = "#!lua name=lib2\nredis.register_function('ff', function() return 2 end)";
    assert_eq!(load(&mut t, c, other), bulk("lib2"));
    assert_eq!(restore(&mut t, &[]), err("ERR Function ff already exists"));
    assert_eq!(
        restore(&mut t, &[b"replace"]),
        err("ERR Function ff already exists")
    );
    assert_eq!(t.cmd(c, &["FCALL", "ff", "0"]), int(2));
    assert_eq!(restore(&mut t, &[b"FLUSH"]), simple("OK"));
    assert_eq!(t.cmd(c, &["FCALL", "ff", "0"]), int(1));
    assert_eq!(
        restore(&mut t, &[b"bad"]),
        err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    );
    assert_eq!(
        restore(&mut t, &[b"flush", b"x"]),
        err(
            "ERR unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION HELP."
        )
    );
    let mut broken = redis_payload.clone();
    broken.pop();
    assert_eq!(
        t.cmd_bytes(c, &[b"FUNCTION", b"RESTORE", &broken]),
        err("ERR DUMP payload version or checksum are wrong")
    );
}

#[test]
fn functions_survive_flushall_and_flush_clears_them() {
    let (mut t, c) = engine();
    assert_eq!(load(&mut t, c, COUNTER), bulk("counter"));
    assert_eq!(t.cmd(c, &["FLUSHALL"]), simple("OK"));
    assert_eq!(t.cmd(c, &["FCALL", "incr_by", "1", "k", "1"]), int(1));
    assert_eq!(
        t.cmd(c, &["FUNCTION", "FLUSH", "LAZY"]),
        err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    );
    assert_eq!(t.cmd(c, &["FUNCTION", "FLUSH", "ASYNC"]), simple("OK"));
    assert_eq!(t.cmd(c, &["FUNCTION", "LIST"]), Frame::Array(vec![]));
    assert_eq!(
        t.cmd(c, &["FUNCTION", "KILL"]),
        err("NOTBUSY No scripts in execution right now.")
    );
}

#[test]
fn maxmemory_refuses_functions_that_may_write() {
    let (mut t, c) = engine();
    let lib = "#!lua name=m\n\
redis.register_function('mw', function(k) return redis.call('set', k[1], 'x') end)\n\
redis.register_function{function_name='mr', callback=function(k) return 1 end, flags={'no-writes'}}\n\
redis.register_function{function_name='mo', callback=function(k) return redis.call('set', k[1], 'x') end, flags={'allow-oom'}}";
    assert_eq!(load(&mut t, c, lib), bulk("m"));
    assert_eq!(t.cmd(c, &["CONFIG", "SET", "maxmemory", "1"]), simple("OK"));
    assert_eq!(
        t.cmd(c, &["FCALL", "mw", "1", "a"]),
        err("OOM command not allowed when used memory > 'maxmemory'.")
    );
    assert_eq!(t.cmd(c, &["FCALL", "mr", "1", "a"]), int(1));
    assert_eq!(t.cmd(c, &["FCALL", "mo", "1", "a"]), simple("OK"));
}

#[test]
fn writes_propagate_as_redis_does() {
    let (mut t, c) = engine();
    t.engine.propagation_mut().set_enabled(true);
    assert_eq!(load(&mut t, c, COUNTER), bulk("counter"));
    assert_eq!(t.cmd(c, &["FCALL", "incr_by", "1", "k", "5"]), int(5));
    assert_eq!(t.cmd(c, &["FCALL_RO", "peek", "1", "k"]), bulk("5"));
    assert_eq!(t.cmd(c, &["FUNCTION", "DELETE", "counter"]), simple("OK"));
    let stream = String::from_utf8(t.engine.propagation_mut().take()).expect("text");
    let lines: Vec<&str> = stream
        .split("\r\n")
        .filter(|l| !l.starts_with(['*', '$']))
        .collect();
    assert_eq!(
        lines,
        [
            "SELECT", "0", "FUNCTION", "LOAD", COUNTER, "incrby", "k", "5", "FUNCTION", "DELETE",
            "counter", ""
        ]
    );
}

/// `SAVE` on redis-server 7.0.15 after `FUNCTION LOAD` of [`LIB1`] and
/// `SET k v`: the library's record sits between the aux fields and the
/// database.
const REDIS_RDB_HEX: &str = "524544495330303130fa0972656469732d76657206372e302e3135fa0a72656469732d62697473c040fa056374696d65c2876a106bfa08757365642d6d656dc2a8383e00fa08616f662d62617365c000f5404623216c7561206e616d653d6c6962310a72656469732e72656769737465725f66756e6374696f6e28276666272c2066756e6374696f6e28292072657475726e203120656e6429fe00fb010000016b0176ff081e6d3dea94fb9b";

#[test]
fn rdb_files_carry_libraries_both_ways() {
    let (mut t, c) = engine();
    let redis_file = unhex(REDIS_RDB_HEX);
    let report = t.engine.load_rdb_file(t.now, &redis_file).expect("loads");
    assert_eq!(report.functions, vec![LIB1.as_bytes().to_vec()]);
    assert_eq!(t.cmd(c, &["FCALL", "ff", "0"]), int(1));
    assert_eq!(t.cmd(c, &["GET", "k"]), bulk("v"));
    // The file seedkv writes holds the same record at the same place.
    let saved = t.engine.rdb_file_bytes(t.now);
    let record = &redis_file[0x50..0x99];
    assert_eq!(record[0], crate::rdb::file::opcode::FUNCTION2);
    let at = saved
        .windows(record.len())
        .position(|w| w == record)
        .expect("the library is saved");
    assert_eq!(saved[at + record.len()], crate::rdb::file::opcode::SELECTDB);
    let (mut u, d) = engine();
    assert_eq!(u.cmd(d, &["FUNCTION", "LIST"]), Frame::Array(vec![]));
    u.engine.load_rdb_file(u.now, &saved).expect("loads");
    assert_eq!(u.cmd(d, &["FCALL", "FF", "0"]), int(1));
}
