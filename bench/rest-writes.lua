-- wrk script: sequential PATCH writes of small documents, each to a new document id.
-- The project comes from the environment (FLINT_BENCH_PROJECT), so runs do not collide.
local project = os.getenv("FLINT_BENCH_PROJECT") or "bench"
local i = 0
request = function()
  i = i + 1
  local body = '{"fields":{"i":{"integerValue":"' .. i .. '"},"name":{"stringValue":"write"}}}'
  return wrk.format("PATCH", "/v1/projects/" .. project .. "/databases/(default)/documents/bench-wrk/w" .. i,
    {["Authorization"] = "Bearer owner", ["Content-Type"] = "application/json"}, body)
end
