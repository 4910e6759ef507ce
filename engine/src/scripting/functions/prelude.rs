//! The Lua side of the functions' state: one global environment shared by
//! every library's code, as Redis 7.0 shares one globals table, whose reads
//! resolve against the load-time API while FUNCTION LOAD runs a library's
//! code and against the run-time sandbox while FCALL runs a function.
//!
//! Redis swaps the globals' `__index` between a `__LIBRARY_API__` table
//! (only `redis.register_function`, `redis.log`, the log levels and the
//! version) and the protected globals of a script's sandbox; here the
//! environment's `__index` asks which of the two is active. The callbacks
//! a library registers are closures of its chunk and keep its environment,
//! so at run time they see the full `redis` API and the builtins, and at
//! load time nothing but the load API, exactly as in Redis.

/// Called with `(run_env, register_function)`: the sandbox prelude's
/// environment (see `scripting::sandbox`) and the Rust
/// `redis.register_function`. Returns `{ set_loading, load, call }`.
pub const FUNCTIONS_PRELUDE: &str = r##"
local run_env, register_function = ...
local error, tostring, setmetatable, setfenv, xpcall, pcall =
  error, tostring, setmetatable, setfenv, xpcall, pcall

local READONLY = "Attempt to modify a readonly table"
local function nonexistent(k)
  return "Script attempted to access nonexistent global variable '" .. tostring(k) .. "'"
end

-- The run-time sandbox: builtins, read-only libraries and the full redis
-- table; no KEYS or ARGV (a function gets them as arguments: this state's
-- sandbox never runs an EVAL, so they stay unset).
local redis = run_env.redis
local handler = run_env.__redis__err__handler
local base_rawset = run_env.rawset

local load_redis_fields = {
  register_function = register_function,
  log = redis.log,
  LOG_DEBUG = redis.LOG_DEBUG, LOG_VERBOSE = redis.LOG_VERBOSE,
  LOG_NOTICE = redis.LOG_NOTICE, LOG_WARNING = redis.LOG_WARNING,
  REDIS_VERSION = redis.REDIS_VERSION, REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM,
}
local load_redis = setmetatable({}, {
  __index = function(_, k)
    local v = load_redis_fields[k]
    if v == nil then error(nonexistent(k), 2) end
    return v
  end,
  __newindex = function() error(READONLY, 2) end,
  __metatable = false,
})

local loading = false
local env = {}

-- rawset on the shared environment would leak a global to every other
-- function: it is refused like any write to it.
local function guarded_rawset(t, k, v)
  if t == env then error(READONLY, 0) end
  return base_rawset(t, k, v)
end

local function index_run(k) return run_env[k] end

setmetatable(env, {
  __index = function(_, k)
    if loading then
      if k == "redis" then return load_redis end
      error(nonexistent(k), 2)
    end
    if k == "_G" then return env end
    if k == "rawset" then return guarded_rawset end
    local ok, v = pcall(index_run, k)
    if ok then return v end
    error(nonexistent(k), 2)
  end,
  __newindex = function() error(READONLY, 2) end,
  __metatable = false,
})

local function set_loading(on) loading = on end

-- Runs a library's chunk; Redis runs it with no error handler, so what
-- comes back is the raw error value.
local function load(chunk)
  setfenv(chunk, env)
  return pcall(chunk)
end

-- Calls a function with its keys and arguments; the result is kept in a
-- local (not tail-returned), so that the callback's frame stays on the
-- stack the error handler reads positions from.
local function call(f, keys, args)
  setfenv(0, env)
  return xpcall(function()
    local v = f(keys, args)
    return v
  end, handler)
end

return {set_loading = set_loading, load = load, call = call}
"##;
