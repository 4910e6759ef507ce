//! The sandbox scripts run in, written in Lua and loaded once per Lua
//! state.
//!
//! Redis 7.0 patches its Lua to make tables read-only; stock Lua 5.1 cannot,
//! so scripts see an environment that is a proxy instead: an empty table
//! whose reads fall through to a hidden table of globals (the allowed
//! builtins, read-only proxies of the libraries string, math, table,
//! coroutine, bit and redis, `_G`, and the run's `KEYS` and `ARGV`), whose
//! misses and writes raise Redis's errors. The real tables stay out of
//! reach (`__metatable` hides every proxy's metatable, and the string
//! metatable too). There is no `os`, `io`, `package`, `require`, `dofile`,
//! `loadfile` or `print`: the state never opens those libraries, and the
//! proxies do not expose what base defines.
//!
//! Why one environment per state, not one per run: nothing a script does
//! can change it (every table it reaches is a read-only proxy, and the
//! sandbox's `rawset` refuses them), so a fresh one per run only cost
//! about twenty allocations and a few hundred counted VM instructions per
//! EVAL. What differs between runs is `KEYS` and `ARGV`: per-run, writable
//! tables, as in Redis (where they are plain globals set before each run),
//! stored in the hidden globals by `run`. Globals resolve through a table
//! chain, without a Lua call per lookup; only a miss calls the function
//! that raises "nonexistent global".

/// The chunk name of the prelude. Frames from this chunk (the environment's
/// `__index` raising "nonexistent global") are skipped when an error's
/// position is reported, so that it points at the script's line, as
/// Redis's C metamethod does.
pub const PRELUDE_CHUNK_NAME: &str = "=seedkv";

/// Called with `(redis, math, libs, handler, errmsg)`: the `redis` table
/// and the `math` library with Redis's `random` (see [`super::api`]), the
/// Rust libraries (`bit`, `cjson`, `cmsgpack`, `struct`), the error
/// handler, and `errmsg(e)` that turns an error raised by a Rust function
/// into its message. Returns `{ env, run, proxies, env_metatable,
/// string_metatable, install }` (see [`super::sandbox_base`]).
pub const PRELUDE: &str = r##"
local redis, math, rust_libs, handler, errmsg = ...
local error, type, tostring, select = error, type, tostring, select
local setmetatable, rawset, unpack, pairs = setmetatable, rawset, unpack, pairs
local setfenv, xpcall, pcall = setfenv, xpcall, pcall

local READONLY = "Attempt to modify a readonly table"
-- Every read-only proxy, to the table it shows.
local protected = setmetatable({}, {__mode = "k"})

local function readonly(t)
  local p = setmetatable({}, {
    __index = t,
    __newindex = function() error(READONLY, 2) end,
    __metatable = false,
  })
  protected[p] = t
  return p
end

local LIBS = {
  string = string, table = table, coroutine = coroutine, math = math,
  redis = redis,
}
for name, t in pairs(rust_libs) do LIBS[name] = t end

-- Redis's pcall hands back a raised error table's message, as Redis 6 did;
-- errors raised by the Rust functions (redis.*, math.random) become theirs.
local function pack(...) return {n = select("#", ...), ...} end
local function redis_pcall(f, ...)
  local r = pack(pcall(f, ...))
  if not r[1] then
    local e = r[2]
    if type(e) == "userdata" then e = errmsg(e) end
    if type(e) == "table" and type(e.err) == "string" then e = e.err end
    return false, e
  end
  return unpack(r, 1, r.n)
end

local BASE = {
  xpcall = xpcall, tostring = tostring, setmetatable = setmetatable,
  next = next, assert = assert, tonumber = tonumber, rawequal = rawequal,
  collectgarbage = collectgarbage, getmetatable = getmetatable,
  pcall = redis_pcall, type = type, select = select, unpack = unpack,
  gcinfo = gcinfo, pairs = pairs, rawget = rawget, loadstring = loadstring,
  ipairs = ipairs, _VERSION = _VERSION, load = load, error = error,
  __redis__err__handler = handler,
  -- getmetatable, setmetatable, next, pairs, ipairs, rawget and rawset
  -- are replaced by `install` (Rust: see sandbox_base.rs).
}

-- cjson.null (the NULL light userdata) reads as glibc's "%p" prints NULL,
-- as in Redis; the engine's Lua prints pointers as creation numbers. A
-- Lua function, not a Rust one: mlua hands a Rust function -0 as 0.
local NULL = rust_libs.cjson.null
BASE.tostring = function(...)
  if select("#", ...) == 0 then
    error("bad argument #1 to 'tostring' (value expected)", 2)
  end
  if (...) == NULL then return "userdata: (nil)" end
  return tostring(...)
end

-- The string metatable's __index is the real string library: hide it.
getmetatable("").__metatable = false

-- The globals a script reads: builtins, library proxies, `_G`, and per
-- run KEYS and ARGV. Never reachable from a script: only the environment's
-- hidden metatable refers to it.
local globals = {}
for name, t in pairs(LIBS) do globals[name] = readonly(t) end
for name, v in pairs(BASE) do globals[name] = v end
setmetatable(globals, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
  __metatable = false,
})

local env = setmetatable({}, {
  __index = globals,
  __newindex = function() error(READONLY, 2) end,
  __metatable = false,
})
protected[env] = globals
globals._G = env

-- What getmetatable shows for `_G` and for strings, as Redis's read-only
-- tables: the globals' metatable (whose __index raises "nonexistent
-- global") and the string metatable (whose __index is `string`).
local env_metatable = readonly({
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
})
local string_metatable = readonly({__index = globals.string})

-- The Rust builtins that see through the proxies (getmetatable, ...).
local function install(name, f) globals[name] = f end

-- The thread's globals become the environment too, so that chunks made by
-- loadstring see (and cannot write) the same globals.
local function run(f, keys, argv)
  globals.KEYS, globals.ARGV = keys, argv
  setfenv(0, env)
  setfenv(f, env)
  return xpcall(f, handler)
end

return {
  env = env, run = run, proxies = protected, env_metatable = env_metatable,
  string_metatable = string_metatable, install = install,
}
"##;
