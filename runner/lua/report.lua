-- crossbench's wrk script: a random URL path per request, optional HTTP pipelining, and a done()
-- that writes wrk's own summary as one JSON object for crossbench/loadgen/wrk.py to read.
--
-- Script arguments (after "--" on wrk's command line):  <pipeline depth> <path> [<path> ...]
--                                                  or  <pipeline depth> @<requests file>
-- A requests file (a workload file's requests, rendered by crossbench/loadgen/wrk_requests.py) is a Lua chunk
-- returning { { method =, path =, headers = {}, body =, weight = }, ... }: each sent with wrk.format() (wrk's -H
-- headers under its own), each chosen by its weight. With one, each thread counts its answers per status in
-- response() and done() merges the threads' counts ("statuses"); response() makes wrk parse every answer's
-- headers and body, which costs it throughput, so it is installed only then or when CROSSBENCH_WRK_STATUSES=1.
-- Environment:  CROSSBENCH_WRK_JSON = the file done() writes (stdout when unset);
--               CROSSBENCH_WRK_CONNECTIONS, CROSSBENCH_WRK_PIPELINE = -c and the depth, written beside wrk's
--               summary so its coordinated-omission correction can be undone from the JSON alone (done() runs
--               in wrk's main Lua state, which never sees init()'s arguments).
-- Headers given with -H (e.g. "Connection: close") are in wrk.headers, so wrk.format() sends them.

local threads = {}

function setup(thread)
   threads[#threads + 1] = thread
   thread:set("thread_number", #threads)  -- each thread gets its own random seed below
end

local function declared(file)
   local reqs, cumulative, total = {}, {}, 0
   for i, r in ipairs(dofile(file)) do
      local headers = {}
      for k, v in pairs(wrk.headers) do headers[k] = v end
      for k, v in pairs(r.headers or {}) do headers[k] = v end
      reqs[i] = wrk.format(r.method, r.path, headers, r.body)
      total = total + r.weight
      cumulative[i] = total
   end
   return reqs, cumulative, total
end

local function count_statuses()
   statuses = {}
   response = function(status)
      statuses[status] = (statuses[status] or 0) + 1
   end
end

function init(args)
   local depth = tonumber(args[1]) or 1
   local reqs, cumulative, total = {}, nil, nil
   if args[2] and args[2]:sub(1, 1) == "@" then
      reqs, cumulative, total = declared(args[2]:sub(2))
   else
      for i = 2, #args do
         reqs[#reqs + 1] = wrk.format(nil, args[i])
      end
   end
   if cumulative or os.getenv("CROSSBENCH_WRK_STATUSES") == "1" then count_statuses() end
   if #reqs == 0 then
      reqs[1] = wrk.format()
   end
   math.randomseed(os.time() * 1000 + (thread_number or 0))

   if #reqs == 1 then
      if depth > 1 or cumulative then              -- as wrk's scripts/pipeline.lua; a declared request has its
         local batch = string.rep(reqs[1], depth)  -- own method, headers and body, not the URL's GET
         request = function() return batch end
      end                                          -- else: no request(), wrk's static request
      return
   end

   local n, random = #reqs, math.random
   local pick = function() return reqs[random(n)] end
   if cumulative then                              -- by weight: the first whose running total passes a draw
      pick = function()
         local draw = random() * total
         for i = 1, n do
            if draw < cumulative[i] then return reqs[i] end
         end
         return reqs[n]
      end
   end
   if depth == 1 then
      request = pick
   else
      local batch = {}
      request = function()
         for i = 1, depth do batch[i] = pick() end
         return table.concat(batch)
      end
   end
end

-- JSON by hand: numbers (null when absent or not finite) and flat objects in a fixed key order.
local function num(x)
   if x == nil or x ~= x or x == math.huge or x == -math.huge then return "null" end
   if x == math.floor(x) and math.abs(x) < 2^53 then return string.format("%.0f", x) end
   return string.format("%.17g", x)
end

local function object(keys, values)
   local parts = {}
   for _, k in ipairs(keys) do
      local v = values[k]
      if type(v) ~= "string" then v = num(v) end
      parts[#parts + 1] = '"' .. k .. '": ' .. v
   end
   return "{" .. table.concat(parts, ", ") .. "}"
end

local function stats(s, with_percentiles)
   local keys, values = { "min", "max", "mean", "stdev" }, {}
   local empty = s.min > s.max                     -- no sample: min stays at UINT64_MAX
   for _, k in ipairs(keys) do
      if not empty then values[k] = s[k] end
   end
   if with_percentiles then
      local pkeys, pvalues = { "50", "75", "90", "99", "99.9" }, {}
      for _, p in ipairs(pkeys) do
         if not empty then pvalues[p] = s:percentile(tonumber(p)) end
      end
      keys[#keys + 1] = "percentiles"
      values.percentiles = object(pkeys, pvalues)
   end
   return object(keys, values)
end

-- Every non-empty bucket of a histogram as [[value, count], ...], so several wrk runs (launches, load hosts)
-- merge exactly. wrk's own accessor, latency(i), scans its 1 us buckets from the minimum on every call, so
-- walking all #latency buckets through it costs buckets x range: with latencies spread over seconds (seed004's
-- /db at C=1000: thousands of buckets over a range of 10^7 us) done() ran for minutes after the window. One
-- pass over wrk's stats struct (count, limit, min, max, data[]: src/stats.h of wrk 4.x) through LuaJIT's FFI
-- reads the same buckets in a single walk from min to max; it is used only when it agrees with the API on the
-- number of buckets and on min and max. Otherwise the API walk, unless it would cost more than API_BUDGET
-- bucket reads (then no histogram: its figures stay, exact merging of that run is refused).
local API_BUDGET = 2e8

local function buckets_by_ffi(s)
   local ok, ffi = pcall(require, "ffi")
   if not ok then return nil end
   local ok_cast, struct = pcall(function() return ffi.cast("uint64_t **", s)[0] end)
   if not ok_cast or struct == nil then return nil end
   local lo, hi = tonumber(struct[2]), tonumber(struct[3])
   if lo ~= s.min or hi ~= s.max then return nil end
   local values, counts = {}, {}
   for v = lo, hi do
      local count = struct[4 + v]
      if count ~= 0 then
         values[#values + 1], counts[#counts + 1] = v, tonumber(count)
      end
   end
   if #values ~= #s then return nil end
   return values, counts
end

local function buckets_by_api(s)
   local n = #s
   if n * (s.max - s.min + 1) > API_BUDGET then return nil end
   local values, counts = {}, {}
   for i = 1, n do
      values[i], counts[i] = s(i)
   end
   return values, counts
end

local function histogram(s)
   if s.min > s.max then return "[]" end            -- no sample
   local values, counts = buckets_by_ffi(s)
   if not values then values, counts = buckets_by_api(s) end
   if not values then return "null" end
   local pairs_ = {}
   for i = 1, #values do
      pairs_[i] = "[" .. num(values[i]) .. ", " .. num(counts[i]) .. "]"
   end
   return "[" .. table.concat(pairs_, ", ") .. "]"
end

-- Every thread's answers per status added up (each thread's own table, read through thread:get), or null when
-- no thread counted them.
local function merged_statuses()
   local counts, keys, seen = {}, {}, false
   for _, thread in ipairs(threads) do
      local own = thread:get("statuses")
      if type(own) == "table" then
         seen = true
         for status, n in pairs(own) do
            local key = tostring(status)
            if not counts[key] then keys[#keys + 1] = key end
            counts[key] = (counts[key] or 0) + n
         end
      end
   end
   if not seen then return "null" end
   table.sort(keys)
   return object(keys, counts)
end

function done(summary, latency, requests)
   local e = summary.errors
   local latency_us = stats(latency, true)
   latency_us = latency_us:sub(1, -2) .. ', "histogram": ' .. histogram(latency) .. "}"
   local json = object(
      { "duration_us", "requests", "bytes", "connections", "pipeline", "errors", "latency_us", "thread_rps",
        "statuses" },
      {
         connections = tonumber(os.getenv("CROSSBENCH_WRK_CONNECTIONS") or ""),
         pipeline    = tonumber(os.getenv("CROSSBENCH_WRK_PIPELINE") or ""),
         duration_us = summary.duration,
         requests    = summary.requests,
         bytes       = summary.bytes,
         errors      = object({ "connect", "read", "write", "status", "timeout" }, e),
         latency_us  = latency_us,
         thread_rps  = stats(requests, false),
         statuses    = merged_statuses(),
      })
   local path = os.getenv("CROSSBENCH_WRK_JSON")
   local out = path and assert(io.open(path, "w")) or io.stdout
   out:write(json, "\n")
   if path then out:close() end
end
