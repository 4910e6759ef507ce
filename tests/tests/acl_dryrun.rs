//! Issue 20's "done when": a client authenticated as a restricted user can
//! run exactly what ACL DRYRUN says, on seedkv-server as on redis-server
//! 7.0.15. Over a few hundred seeded draws of (user rules, command), each
//! server gets the same ACL SETUSER, is asked ACL DRYRUN, then runs the
//! command as that user, through `redis-cli --user u --pass p` for half
//! of the draws and over a connection that sent AUTH for the other half.
//! The command is refused with NOPERM exactly when DRYRUN said it would
//! be, and both servers give the same SETUSER reply, DRYRUN reply and
//! verdict.
//!
//! Skipped, with a printed reason, when redis-server or redis-cli is not
//! installed (and failing instead under `SEEDKV_REQUIRE_TOOLS=1`).

use seedkv_engine::resp::Frame;
use seedkv_tests::draw::SplitMix64;
use seedkv_tests::{cli, redis_server, require_tool, RespClient, ServerProcess};

/// Draws per run: enough that every rule and command of the vocabularies
/// below meets many others, few enough to stay within seconds.
const DRAWS: usize = 300;

/// Rules per drawn user beyond its three grants, at most.
const RULES_EXTRA_MAX: usize = 3;

/// The seed of the draws; a failure names its draw, which this seed
/// reproduces.
const SEED: u64 = 20;

/// Rules a user is drawn from: commands and categories, key and channel
/// patterns with each access, and selectors.
const RULES: &[&str] = &[
    "+@all",
    "-@all",
    "allcommands",
    "nocommands",
    "+@read",
    "+@write",
    "-@write",
    "+@string",
    "-@string",
    "+@hash",
    "+@list",
    "+@set",
    "+@keyspace",
    "-@keyspace",
    "+@pubsub",
    "-@pubsub",
    "+@scripting",
    "+@connection",
    "+@fast",
    "+@slow",
    "-@dangerous",
    "+get",
    "-get",
    "+set",
    "-set",
    "+del",
    "+publish",
    "+subscribe",
    "+psubscribe",
    "+eval",
    "+sort",
    "+client|getname",
    "-client|getname",
    "+client",
    "+config|get",
    "+acl|whoami",
    "~k*",
    "~*",
    "%R~r*",
    "%W~w*",
    "%RW~x*",
    "%R~*",
    "~w1",
    "allkeys",
    "resetkeys",
    "&ch*",
    "&news",
    "&*",
    "allchannels",
    "resetchannels",
    "(+get ~r*)",
    "(+@write %W~*)",
    "(+publish &x*)",
    "(+@all %R~k* &news)",
];

/// A drawn user's first three rules grant some commands, keys and
/// channels, so that allowed commands are about as common as refused ones.
const COMMAND_GRANTS: &[&str] = &[
    "+@all",
    "allcommands",
    "+@read",
    "+@write",
    "+@string",
    "+@keyspace",
    "+@fast",
    "+@slow",
    "+@pubsub",
    "+@hash",
    "+@list",
];

const KEY_GRANTS: &[&str] = &[
    "~*", "~k*", "%R~r*", "%W~w*", "%RW~x*", "%R~*", "allkeys", "~w1",
];

const CHANNEL_GRANTS: &[&str] = &["&*", "&ch*", "&news", "allchannels", "resetchannels"];

/// Keys the commands name: each pattern above matches some of them.
const KEYS: &[&str] = &["k1", "r1", "w1", "x1", "other"];

/// Channels the commands name.
const CHANNELS: &[&str] = &["ch1", "news", "x1", "other"];

/// Commands a user is drawn to run: `K` is a drawn key, `C` a drawn
/// channel. None changes users or the server's configuration, so the
/// draws stay independent of one another.
const COMMANDS: &[&str] = &[
    "get K",
    "set K v",
    "set K v get",
    "del K K",
    "exists K",
    "mset K 1 K 2",
    "mget K K",
    "incr K",
    "append K x",
    "getdel K",
    "hset K f v",
    "hget K f",
    "lpush K a",
    "lrange K 0 -1",
    "sadd K m",
    "smembers K",
    "zadd K 1 m",
    "copy K K",
    "lmove K K left right",
    "sort K",
    "sort K store K",
    "object encoding K",
    "type K",
    "expire K 100",
    "eval \"return 1\" 1 K",
    "eval \"return 1\" 2 K K",
    "publish C m",
    "subscribe C C",
    "psubscribe C",
    "ping",
    "echo hi",
    "dbsize",
    "scan 0",
    "acl whoami",
    "client getname",
    "client id",
    "config get maxmemory",
];

/// One drawn case.
struct Case {
    rules: Vec<String>,
    command: Vec<String>,
    /// Run the command through redis-cli rather than an AUTHed connection.
    through_cli: bool,
}

fn draw_case(draw: &mut SplitMix64, n: usize) -> Case {
    let mut rules: Vec<String> = [COMMAND_GRANTS, KEY_GRANTS, CHANNEL_GRANTS]
        .iter()
        .map(|grants| draw.pick(grants).to_string())
        .collect();
    let extra = (draw.next_u64() % (RULES_EXTRA_MAX as u64 + 1)) as usize;
    rules.extend((0..extra).map(|_| draw.pick(RULES).to_string()));
    let template = draw.pick(COMMANDS);
    let words = seedkv_engine::resp::parse::split_args(template.as_bytes()).expect("quoted");
    let command = words
        .iter()
        .map(|w| match w.as_slice() {
            b"K" => draw.pick(KEYS).to_string(),
            b"C" => draw.pick(CHANNELS).to_string(),
            other => String::from_utf8(other.to_vec()).expect("ascii"),
        })
        .collect::<Vec<_>>();
    // A subscription would keep redis-cli waiting for messages.
    let subscribes = command[0].ends_with("subscribe");
    Case {
        rules,
        command,
        through_cli: n.is_multiple_of(2) && !subscribes,
    }
}

/// What one server said about a case.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    setuser: String,
    dryrun: String,
    /// Whether the command, run as the user, was refused with NOPERM.
    refused: Option<bool>,
}

fn render(frame: &Frame) -> String {
    match frame {
        Frame::Simple(s) => format!("+{}", String::from_utf8_lossy(s)),
        Frame::Error(e) => format!("-{}", String::from_utf8_lossy(e)),
        Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

fn as_bytes(words: &[String]) -> Vec<&[u8]> {
    words.iter().map(|w| w.as_bytes()).collect()
}

/// Sets the user up, asks DRYRUN, then runs the command as the user.
fn outcome(port: u16, admin: &mut RespClient, case: &Case) -> Outcome {
    let mut setuser: Vec<String> = ["acl", "setuser", "u", "reset", "on", ">p"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    setuser.extend(case.rules.iter().cloned());
    let setuser = render(&admin.command(&as_bytes(&setuser)));
    let mut dryrun: Vec<String> = vec!["acl".into(), "dryrun".into(), "u".into()];
    dryrun.extend(case.command.iter().cloned());
    let dryrun = render(&admin.command(&as_bytes(&dryrun)));
    if setuser != "+OK" || dryrun.starts_with('-') {
        return Outcome {
            setuser,
            dryrun,
            refused: None,
        };
    }
    let reply = if case.through_cli {
        let mut args = vec!["--user", "u", "--pass", "p", "--no-auth-warning"];
        args.extend(case.command.iter().map(String::as_str));
        cli(port, &args)
    } else {
        let mut user = RespClient::connect(port);
        let auth = user.command(&[b"auth", b"u", b"p"]);
        assert_eq!(
            auth,
            Frame::Simple(b"OK".to_vec()),
            "AUTH as the drawn user"
        );
        render(&user.command(&as_bytes(&case.command)))
    };
    let refused = reply.starts_with("NOPERM") || reply.starts_with("-NOPERM");
    Outcome {
        setuser,
        dryrun,
        refused: Some(refused),
    }
}

#[test]
fn a_restricted_user_runs_exactly_what_dryrun_allows() {
    let Some(redis) = redis_server() else {
        return;
    };
    if !require_tool("redis-cli") {
        return;
    }
    let seedkv = ServerProcess::seedkv(&[]);
    let mut redis_admin = RespClient::connect(redis.port);
    let mut seedkv_admin = RespClient::connect(seedkv.port);
    let mut draw = SplitMix64(SEED);
    let (mut checked, mut refused_count) = (0, 0);
    for n in 0..DRAWS {
        let case = draw_case(&mut draw, n);
        let what = format!(
            "draw {n}: ACL SETUSER u {} / {}",
            case.rules.join(" "),
            case.command.join(" ")
        );
        let expected = outcome(redis.port, &mut redis_admin, &case);
        let got = outcome(seedkv.port, &mut seedkv_admin, &case);
        assert_eq!(got, expected, "{what}: seedkv differs from redis-server");
        if let Some(refused) = got.refused {
            assert_eq!(
                refused,
                got.dryrun != "+OK",
                "{what}: DRYRUN said {:?}",
                got.dryrun
            );
            checked += 1;
            refused_count += usize::from(refused);
        }
    }
    // Most draws must reach the command, and both verdicts must be common,
    // or the test proves little.
    eprintln!("{checked} of {DRAWS} draws ran, {refused_count} refused");
    assert!(checked * 2 > DRAWS, "only {checked} of {DRAWS} draws ran");
    assert!(
        refused_count * 5 > checked && (checked - refused_count) * 5 > checked,
        "{refused_count} of {checked} refused: the draws are lopsided"
    );
}
