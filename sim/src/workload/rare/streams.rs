//! Streams with every command and option: XADD (explicit, `ms-*`, `*`,
//! NOMKSTREAM, MAXLEN/MINID with `~`/`=` and LIMIT), ranges, XREAD and
//! XREADGROUP (COUNT, BLOCK on an empty stream for 1 ms, NOACK, history),
//! consumer groups (XGROUP, XPENDING, XCLAIM with every option,
//! XAUTOCLAIM, XACK), XINFO, XDEL, XTRIM, XSETID, on `rare:` keys in
//! [`HOME_DB`] cleared at the start and the end. Every line answers
//! without an error on redis-server 7.0.15.

use rand_chacha::ChaCha8Rng;

use super::{Section, SectionFn, HOME_DB};

pub(crate) const SECTIONS: &[SectionFn] = &[streams];

fn streams(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:x rare:x2")
        .add("XADD rare:x 1-1 f v")
        .add("XADD rare:x 1-* f v")
        .add("XADD rare:x * f v g w")
        .add("XADD rare:x NOMKSTREAM MAXLEN ~ 100 LIMIT 10 * f v")
        .add("XADD rare:x MINID = 0 * f v")
        .add("XADD rare:x2 NOMKSTREAM * f v")
        .add("XLEN rare:x")
        .add("XRANGE rare:x - +")
        .add("XRANGE rare:x (1-1 + COUNT 2")
        .add("XREVRANGE rare:x + - COUNT 2")
        .add("XREVRANGE rare:x + (1-1")
        .add("XREAD COUNT 2 STREAMS rare:x 0")
        .add("XREAD COUNT 1 BLOCK 1 STREAMS rare:x $")
        .add("XGROUP CREATE rare:x g 0")
        .add("XGROUP CREATE rare:x2 g2 $ MKSTREAM ENTRIESREAD 0")
        .add("XGROUP CREATECONSUMER rare:x g c1")
        .add("XGROUP SETID rare:x g 0 ENTRIESREAD 0")
        .add("XREADGROUP GROUP g c1 COUNT 2 STREAMS rare:x >")
        .add("XREADGROUP GROUP g c2 COUNT 1 NOACK STREAMS rare:x >")
        .add("XREADGROUP GROUP g c1 STREAMS rare:x 0")
        .add("XREADGROUP GROUP g2 c1 COUNT 1 BLOCK 1 STREAMS rare:x2 >")
        .add("XPENDING rare:x g")
        .add("XPENDING rare:x g - + 10")
        .add("XPENDING rare:x g IDLE 0 - + 10 c1")
        .add("XCLAIM rare:x g c2 0 1-1")
        .add("XCLAIM rare:x g c2 0 1-1 IDLE 5 RETRYCOUNT 3 FORCE JUSTID LASTID 1-1")
        .add("XCLAIM rare:x g c2 0 1-2 TIME 1 JUSTID")
        .add("XAUTOCLAIM rare:x g c1 0 0-0 COUNT 2")
        .add("XAUTOCLAIM rare:x g c1 0 0-0 COUNT 2 JUSTID")
        .add("XACK rare:x g 1-1 1-2")
        .add("XINFO STREAM rare:x")
        .add("XINFO STREAM rare:x FULL")
        .add("XINFO STREAM rare:x FULL COUNT 2")
        .add("XINFO GROUPS rare:x")
        .add("XINFO CONSUMERS rare:x g")
        .add("XINFO HELP")
        .add("XGROUP HELP")
        .add("XDEL rare:x 1-1")
        .add("XTRIM rare:x MAXLEN 2")
        .add("XTRIM rare:x MAXLEN = 2")
        .add("XTRIM rare:x MINID ~ 0 LIMIT 10")
        .add("XSETID rare:x 99999999999999-0")
        .add("XSETID rare:x 99999999999999-0 ENTRIESADDED 100 MAXDELETEDID 1-1")
        .add("XGROUP DELCONSUMER rare:x g c2")
        .add("XGROUP DESTROY rare:x g")
        .add("XGROUP DESTROY rare:x2 g2")
        .add("DEL rare:x rare:x2");
}
