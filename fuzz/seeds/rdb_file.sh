#!/bin/sh
# Writes fuzz/seeds/rdb_file/: small RDB files SAVEd by a real redis-server
# 7.0.15, every type and encoding in three databases with TTLs, compressed
# and not, and under an LRU and an LFU policy (IDLE and FREQ opcodes).
# Run from fuzz/seeds/ with redis-server and redis-cli on PATH: sh rdb_file.sh
set -eu
port=7787
out=$(pwd)/rdb_file
work=$(mktemp -d)
mkdir -p "$out"
redis-server --port $port --dir "$work" --dbfilename dump.rdb --save '' \
    --hash-max-listpack-entries 4 --zset-max-listpack-entries 4 \
    --set-max-intset-entries 4 --daemonize yes --logfile "$work/log"
sleep 0.5
cli() { redis-cli -p $port "$@" >/dev/null; }
populate() {
    for db in 0 3 15; do
        cli -n $db SET s1 hello
        cli -n $db SET s2 12345
        cli -n $db SET s3 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
        cli -n $db RPUSH l1 a 1 -70000 "hello world"
        cli -n $db HSET h1 f v n 5
        cli -n $db HSET h2 f1 v1 f2 v2 f3 v3 f4 v4 f5 v5
        cli -n $db SADD st1 1 2 70000
        cli -n $db SADD st2 a b
        cli -n $db SADD st3 1 2 3 4 5 6
        cli -n $db ZADD z1 1 a 2.5 b inf c
        cli -n $db ZADD z2 1 a 2 b 3 c 4 d 5 e
        cli -n $db PEXPIRE s1 100000000
        cli -n $db PEXPIREAT h1 4102444800000
    done
}
save_as() {
    cli SAVE
    cp "$work/dump.rdb" "$out/$1"
}
populate
cli CONFIG SET rdbcompression yes
save_as types_compressed
cli CONFIG SET rdbcompression no
save_as types_plain
cli CONFIG SET maxmemory-policy allkeys-lru
save_as idle
cli CONFIG SET maxmemory-policy allkeys-lfu
save_as freq
cli FLUSHALL
cli CONFIG SET maxmemory-policy noeviction
save_as empty
cli SHUTDOWN NOSAVE || true
rm -rf "$work"
