//! Strings as bitmaps (SETBIT ... BITFIELD_RO), HyperLogLog strings
//! (PFADD ... PFDEBUG) and geo sets (GEOADD ... GEORADIUSBYMEMBER_RO),
//! every option, on `rare:` keys in [`HOME_DB`] cleared at the start of
//! each section. Every line answers without an error on redis-server
//! 7.0.15 (PFDEBUG DECODE before GETREG, which makes the value dense).

use rand_chacha::ChaCha8Rng;

use super::{Section, SectionFn, HOME_DB};

pub(crate) const SECTIONS: &[SectionFn] = &[bitmaps, hyperloglog, geo];

fn bitmaps(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:bm rare:bm2 rare:bm3")
        .add("SETBIT rare:bm 7 1")
        .add("SETBIT rare:bm 100 1")
        .add("GETBIT rare:bm 7")
        .add("GETBIT rare:bm 1000")
        .add("BITCOUNT rare:bm")
        .add("BITCOUNT rare:bm 0 -1")
        .add("BITCOUNT rare:bm 0 -1 BYTE")
        .add("BITCOUNT rare:bm 5 200 BIT")
        .add("BITPOS rare:bm 1")
        .add("BITPOS rare:bm 0 1")
        .add("BITPOS rare:bm 1 0 -1 BYTE")
        .add("BITPOS rare:bm 1 8 200 BIT")
        .add("SET rare:bm2 abc")
        .add("BITOP AND rare:bm3 rare:bm rare:bm2")
        .add("BITOP OR rare:bm3 rare:bm rare:bm2")
        .add("BITOP XOR rare:bm3 rare:bm rare:bm2")
        .add("BITOP NOT rare:bm3 rare:bm")
        .add("BITFIELD rare:bm SET i8 0 -100 GET u4 #1 INCRBY i5 100 1")
        .add("BITFIELD rare:bm OVERFLOW WRAP INCRBY u2 102 3 OVERFLOW SAT INCRBY u2 102 3 OVERFLOW FAIL INCRBY u2 102 3")
        .add("BITFIELD rare:bm")
        .add("BITFIELD_RO rare:bm GET i8 0 GET u16 #2");
}

fn hyperloglog(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:h rare:h2 rare:h3")
        .add("PFADD rare:h a b c d e")
        .add("PFADD rare:h a")
        .add("PFADD rare:h2 x y z a")
        .add("PFCOUNT rare:h")
        .add("PFCOUNT rare:h rare:h2")
        .add("PFMERGE rare:h3 rare:h rare:h2")
        .add("PFMERGE rare:h3")
        .add("PFCOUNT rare:h3")
        .add("PFDEBUG ENCODING rare:h")
        .add("PFDEBUG DECODE rare:h")
        .add("PFDEBUG GETREG rare:h")
        .add("PFDEBUG TODENSE rare:h")
        .add("PFDEBUG ENCODING rare:h")
        .add("PFSELFTEST");
}

fn geo(s: &mut Section, _rng: &mut ChaCha8Rng) {
    s.batch(HOME_DB)
        .add("DEL rare:geo rare:geo2 rare:geo3")
        .add("GEOADD rare:geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania")
        .add("GEOADD rare:geo NX 12.496366 41.902782 Rome")
        .add("GEOADD rare:geo XX CH 13.361389 38.115557 Palermo")
        .add("GEODIST rare:geo Palermo Catania")
        .add("GEODIST rare:geo Palermo Catania km")
        .add("GEODIST rare:geo Palermo Rome mi")
        .add("GEODIST rare:geo Palermo Rome ft")
        .add("GEODIST rare:geo Palermo Rome m")
        .add("GEOHASH rare:geo Palermo Catania nosuch")
        .add("GEOPOS rare:geo Palermo nosuch")
        .add("GEOSEARCH rare:geo FROMLONLAT 15 37 BYRADIUS 200 km ASC COUNT 2 WITHCOORD WITHDIST WITHHASH")
        .add("GEOSEARCH rare:geo FROMMEMBER Palermo BYBOX 400 400 km DESC COUNT 1 ANY")
        .add("GEOSEARCHSTORE rare:geo2 rare:geo FROMLONLAT 15 37 BYRADIUS 500 km STOREDIST")
        .add("GEOSEARCHSTORE rare:geo3 rare:geo FROMMEMBER Rome BYBOX 1000 1000 km ASC COUNT 2")
        .add("GEORADIUS rare:geo 15 37 200 km WITHDIST WITHCOORD WITHHASH COUNT 2 ASC")
        .add("GEORADIUS rare:geo 15 37 500 km STORE rare:geo2")
        .add("GEORADIUS rare:geo 15 37 500 km STOREDIST rare:geo3")
        .add("GEORADIUS rare:geo 15 37 200 km DESC COUNT 1 ANY")
        .add("GEORADIUS_RO rare:geo 15 37 200 km DESC")
        .add("GEORADIUS_RO rare:geo 15 37 200 km ASC COUNT 1 ANY WITHCOORD WITHDIST WITHHASH")
        .add("GEORADIUSBYMEMBER rare:geo Palermo 300 km WITHDIST COUNT 1 ANY")
        .add("GEORADIUSBYMEMBER rare:geo Palermo 300 km STORE rare:geo2")
        .add("GEORADIUSBYMEMBER rare:geo Palermo 300 km WITHCOORD WITHHASH DESC")
        .add("GEORADIUSBYMEMBER rare:geo Palermo 300 km ASC STOREDIST rare:geo3")
        .add("GEORADIUSBYMEMBER_RO rare:geo Palermo 300 km ASC WITHCOORD")
        .add("GEORADIUSBYMEMBER_RO rare:geo Palermo 300 km DESC COUNT 1 ANY WITHDIST WITHHASH")
        .add("GEOSEARCHSTORE rare:geo3 rare:geo FROMLONLAT 15 37 BYBOX 900 900 km DESC COUNT 1 ANY")
        .add("GEOSEARCH rare:geo FROMMEMBER Rome BYRADIUS 900 km ASC");
}
