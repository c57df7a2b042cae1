-- wrk script for run.sh's pipelined row: every write carries PIPELINE (default 16) GET / requests back to back on
-- one keep-alive connection (HTTP/1.1 pipelining); wrk counts each response as one request.
--   wrk -t1 -c64 -d5s -s Benchmarks/scripts/pipeline.lua http://127.0.0.1:PORT/
local depth = tonumber(os.getenv("PIPELINE") or "16")
local batch

init = function(args)
   local one = wrk.format("GET", "/")
   batch = string.rep(one, depth)
end

request = function()
   return batch
end
