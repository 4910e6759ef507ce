//! The `aclfile`, differentially: seedkv-server and redis-server 7.0.15
//! are each started with an ACL file of their own (same contents) and run
//! the same steps: ACL SETUSER / SAVE / LOAD / GETUSER / LIST, logins
//! before and after a LOAD (which disconnects the clients of every user but
//! `default`), malformed files written by the test, a missing file, a SAVE
//! that cannot rename, and user names and patterns that are not UTF-8.
//! Every reply must be the same (each server's own file path reads as
//! `<aclfile>`), and every file ACL SAVE writes must be byte-equal. The
//! rules used keep at most one single-command rule per selector: Redis
//! orders several by its command dict's hash, which changes between runs.
//!
//! Also the start: a file that does not load and `user` directives next
//! to an `aclfile` make both servers exit with the same log line.
//!
//! Skipped, with a printed reason, when redis-server is not installed
//! (and failing instead under `SEEDKV_REQUIRE_TOOLS=1`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seedkv_engine::resp::Frame;
use seedkv_tests::closing::ClosingConnection;
use seedkv_tests::{find_in_path, redis_server_with, server_binary, ServerProcess};

/// The file both servers start with.
const INITIAL: &[u8] = b"user alice on >pa ~a* &news +get\nuser bob on nopass ~* &* +@all -debug\n";

/// Files ACL LOAD must refuse (or accept) exactly as Redis does.
const FILES: &[&[u8]] = &[
    b"",
    b"\n\n  \n",
    b"# a comment\n",
    b"user\n",
    b"usr x on\n",
    b"user x on \"unbalanced\n",
    b"user x on\nuser x off\n",
    b"user x +nosuch #abc +nosuch2\n",
    b"user x on\nuser x on\nuser y +nope -nope2 +@nocat ~* ~a foo\n",
    b"user x (~a +get\n",
    b"user x\x0b on\n",
    b"user x\ton\n",
    b"   user   x   on  \n",
    b"user x ~* ~a\n",
    b"user x <nopw\n",
    b"user x +config|nosuch +client|list|x\n",
    b"user x allchannels &c &d #x\n",
    b"user x '(+get ~a)' on\n",
    b"user x (+get ~a) (+set ~b) on >p\n",
    b"user x (\"+get\" ~a) on\r\nuser y on \t>p\r\n",
    b"user x on nopass\nuser y ~a\x00b\n",
    b"user x\xa0 on ~k\xfe* &c\xfd +get\n",
    b"user default on >dp ~* &* +@all\nuser z on nopass -@all +get\n",
    INITIAL,
];

/// One server under test, its file, and what it answered.
struct Run {
    port: u16,
    file: PathBuf,
    log: Vec<String>,
    /// The file after each ACL SAVE.
    saved: Vec<Vec<u8>>,
}

impl Run {
    fn step(&mut self, conn: &mut ClosingConnection, args: &[&[u8]]) {
        let shown = match conn.command(args) {
            None => "<closed>".to_string(),
            Some(frame) => format!("{:?}", mask(frame, self.file.to_str().unwrap().as_bytes())),
        };
        let words: Vec<String> = args
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        self.log.push(format!("{words:?} -> {shown}"));
    }

    fn save(&mut self, conn: &mut ClosingConnection) {
        self.step(conn, &[b"acl", b"save"]);
        self.saved
            .push(std::fs::read(&self.file).unwrap_or_default());
    }
}

/// `file` as `<aclfile>` in every string of the reply.
fn mask(frame: Frame, file: &[u8]) -> Frame {
    let swap = |bytes: Vec<u8>| -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i..].starts_with(file) {
                out.extend_from_slice(b"<aclfile>");
                i += file.len();
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        out
    };
    match frame {
        Frame::Error(e) => Frame::Error(swap(e)),
        Frame::Bulk(b) => Frame::Bulk(swap(b)),
        Frame::Array(items) if is_log_entry(&items) => Frame::Array(log_entry(items)),
        Frame::Array(items) => Frame::Array(items.into_iter().map(|f| mask(f, file)).collect()),
        other => other,
    }
}

fn is_log_entry(items: &[Frame]) -> bool {
    items.first() == Some(&Frame::Bulk(b"count".to_vec()))
}

/// An ACL LOG entry without its age, and of its client-info only the
/// `user=` field (the rest are addresses, ids, ages and buffer sizes).
fn log_entry(items: Vec<Frame>) -> Vec<Frame> {
    let mut out = Vec::new();
    for pair in items.chunks(2) {
        let [key, value] = pair else { continue };
        let value = match (key, value) {
            (Frame::Bulk(k), _) if k == b"age-seconds" => continue,
            (Frame::Bulk(k), Frame::Bulk(info)) if k == b"client-info" => {
                let user = info
                    .split(|&b| b == b' ')
                    .find(|f| f.starts_with(b"user="))
                    .unwrap_or_default();
                Frame::Bulk(user.to_vec())
            }
            (_, v) => v.clone(),
        };
        out.push(key.clone());
        out.push(value);
    }
    out
}

/// The steps, run against the server of `run`.
fn script(run: &mut Run) {
    let port = run.port;
    let mut admin = ClosingConnection::open(port);
    let mut alice = ClosingConnection::open(port);
    let mut bob = ClosingConnection::open(port);
    let mut plain = ClosingConnection::open(port);
    run.step(&mut admin, &[b"acl", b"list"]);
    run.step(&mut admin, &[b"config", b"get", b"aclfile"]);
    run.step(&mut admin, &[b"config", b"set", b"aclfile", b"/tmp/x.acl"]);
    run.step(&mut alice, &[b"auth", b"alice", b"pa"]);
    run.step(&mut alice, &[b"get", b"a1"]);
    run.step(&mut alice, &[b"get", b"b1"]);
    run.step(&mut bob, &[b"auth", b"bob", b"anything"]);
    run.step(&mut plain, &[b"ping"]);
    // A save of the users loaded at start, then of changed ones.
    run.save(&mut admin);
    run.step(
        &mut admin,
        &[
            b"acl", b"setuser", b"carol", b"on", b">pc", b"~c*", b"%R~r*", b"&ch", b"+@hash",
            b"-hdel",
        ],
    );
    run.step(
        &mut admin,
        &[
            b"acl",
            b"setuser",
            b"dan",
            b"(~d* +set)",
            b"(%W~w* +@list)",
            b"resetchannels",
        ],
    );
    run.step(
        &mut admin,
        &[
            b"acl", b"setuser", b"n\xffx", b"on", b"~k\xfe*", b"&c\xfd", b"+get",
        ],
    );
    run.step(&mut admin, &[b"acl", b"getuser", b"n\xffx"]);
    // The ACL LOG shows the name, the key and the client's `user=` raw.
    run.step(&mut admin, &[b"acl", b"setuser", b"n\xffx", b">pw"]);
    let mut raw = ClosingConnection::open(port);
    run.step(&mut raw, &[b"auth", b"n\xffx", b"pw"]);
    run.step(&mut raw, &[b"get", b"k\xfe1"]);
    run.step(&mut raw, &[b"get", b"o\xfd"]);
    run.step(&mut admin, &[b"acl", b"log", b"1"]);
    run.step(&mut admin, &[b"acl", b"getuser", b"dan"]);
    run.save(&mut admin);
    // Changes after the save, undone by a LOAD, which also logs out and
    // disconnects every client of a user other than `default`.
    run.step(&mut admin, &[b"acl", b"deluser", b"carol"]);
    run.step(
        &mut admin,
        &[b"acl", b"setuser", b"eve", b"on", b"nopass", b"+@all"],
    );
    run.step(&mut admin, &[b"acl", b"setuser", b"alice", b"~b*"]);
    run.step(&mut admin, &[b"acl", b"load"]);
    run.step(&mut alice, &[b"acl", b"whoami"]);
    run.step(&mut bob, &[b"acl", b"whoami"]);
    run.step(&mut plain, &[b"acl", b"whoami"]);
    run.step(&mut admin, &[b"acl", b"list"]);
    let mut carol = ClosingConnection::open(port);
    run.step(&mut carol, &[b"auth", b"carol", b"pc"]);
    run.step(&mut carol, &[b"hset", b"c1", b"f", b"v"]);
    run.step(&mut carol, &[b"hdel", b"c1", b"f"]);
    run.step(&mut carol, &[b"auth", b"eve", b"x"]);
    // Malformed (and odd but valid) files.
    for contents in FILES {
        std::fs::write(&run.file, contents).unwrap();
        run.step(&mut admin, &[b"acl", b"load"]);
        run.step(&mut admin, &[b"acl", b"list"]);
        if contents.starts_with(b"user default on >dp") {
            run.step(&mut admin, &[b"acl", b"whoami"]);
            run.step(&mut admin, &[b"auth", b"dp"]);
        }
    }
    run.step(&mut admin, &[b"auth", b"alice", b"pa"]);
    run.step(&mut admin, &[b"acl", b"load"]);
    run.step(&mut admin, &[b"acl", b"whoami"]);
    let mut admin = ClosingConnection::open(port);
    run.step(&mut admin, &[b"auth", b"dp"]);
    run.save(&mut admin);
    std::fs::remove_file(&run.file).unwrap();
    run.step(&mut admin, &[b"acl", b"load"]);
    // A directory where the file should be: the rename fails.
    std::fs::create_dir(&run.file).unwrap();
    run.step(&mut admin, &[b"acl", b"save"]);
    run.step(&mut admin, &[b"acl", b"list"]);
    std::fs::remove_dir(&run.file).unwrap();
    run.save(&mut admin);
    run.step(&mut admin, &[b"acl", b"load"]);
}

fn aclfile_in(dir: &Path) -> PathBuf {
    let file = dir.join("users.acl");
    std::fs::write(&file, INITIAL).unwrap();
    file
}

#[test]
fn acl_save_load_and_errors_match_redis() {
    let redis_dir = tempfile::tempdir().unwrap();
    let redis_file = aclfile_in(redis_dir.path());
    let redis_dir_arg = redis_dir.path().display().to_string();
    let redis_file_arg = redis_file.display().to_string();
    let Some(redis) = redis_server_with(&["--dir", &redis_dir_arg, "--aclfile", &redis_file_arg])
    else {
        return;
    };
    let seedkv_dir = tempfile::tempdir().unwrap();
    let seedkv_file = aclfile_in(seedkv_dir.path());
    let seedkv_dir_arg = seedkv_dir.path().display().to_string();
    let seedkv_file_arg = seedkv_file.display().to_string();
    let seedkv = ServerProcess::seedkv(&[
        "--dir",
        &seedkv_dir_arg,
        "--save",
        "",
        "--aclfile",
        &seedkv_file_arg,
    ]);
    let mut expected = Run {
        port: redis.port,
        file: redis_file,
        log: Vec::new(),
        saved: Vec::new(),
    };
    let mut actual = Run {
        port: seedkv.port,
        file: seedkv_file,
        log: Vec::new(),
        saved: Vec::new(),
    };
    script(&mut expected);
    script(&mut actual);
    assert_eq!(expected.log.len(), actual.log.len());
    for (e, a) in expected.log.iter().zip(&actual.log) {
        assert_eq!(e, a, "redis-server vs seedkv-server");
    }
    assert_eq!(expected.saved.len(), actual.saved.len());
    for (i, (e, a)) in expected.saved.iter().zip(&actual.saved).enumerate() {
        assert_eq!(
            String::from_utf8_lossy(e),
            String::from_utf8_lossy(a),
            "ACL SAVE number {i}"
        );
        assert_eq!(e, a, "ACL SAVE number {i}, bytes");
    }
    // The scripts did reach the saves with content.
    assert!(actual.saved.iter().all(|f| f.starts_with(b"user ")));
}

/// The line a server that refused to start logged about ACLs, its file
/// path as `<aclfile>`.
fn startup_refusal(program: &Path, args: &[String], file: &Path) -> String {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the server");
    assert!(!out.status.success(), "{program:?} should refuse to start");
    let text = [out.stdout, out.stderr].concat();
    let text = String::from_utf8_lossy(&text).replace(file.to_str().unwrap(), "<aclfile>");
    let line = text
        .lines()
        .find(|l| l.contains("ACL"))
        .unwrap_or_else(|| panic!("no ACL line in the log of {program:?}:\n{text}"));
    // After Redis's `pid:role date time level ` prefix, or seedkv's own.
    let at = line
        .find("Aborting")
        .or_else(|| line.find("Configuring"))
        .unwrap_or(0);
    line[at..].to_string()
}

#[test]
fn a_file_that_does_not_load_stops_the_start_as_in_redis() {
    let Some(redis_bin) = find_in_path("redis-server") else {
        seedkv_tests::missing_tool("redis-server", "apt-get install redis-server");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.acl");
    let missing = dir.path().join("missing.acl");
    std::fs::write(&file, b"user x on +nosuch\nuser x off\n").unwrap();
    let conf = dir.path().join("both.conf");
    std::fs::write(
        &conf,
        format!("user x on nopass\naclfile {}\n", file.display()),
    )
    .unwrap();
    let dir_arg = dir.path().display().to_string();
    let cases: Vec<(Vec<String>, &Path)> = vec![
        (vec!["--aclfile".into(), file.display().to_string()], &file),
        (
            vec!["--aclfile".into(), missing.display().to_string()],
            &missing,
        ),
        (vec![conf.display().to_string()], &file),
    ];
    for (args, named) in cases {
        // Redis exits at once, before ACLs, when told to listen nowhere.
        let port = seedkv_tests::free_port().to_string();
        let mut redis_args = args.clone();
        redis_args.extend(["--port", &port, "--save", "", "--dir", &dir_arg].map(String::from));
        let mut seedkv_args = args.clone();
        seedkv_args.extend(["--port", "0", "--save", "", "--dir", &dir_arg].map(String::from));
        let expected = startup_refusal(&redis_bin, &redis_args, named);
        let actual = startup_refusal(&server_binary(), &seedkv_args, named);
        assert_eq!(expected, actual, "{args:?}");
    }
}
