-- wrk script for the events benchmark (scripts/events-bench.sh). Run with -tN -cN: each thread holds one
-- keep-alive connection and posts {"type":"increment"} to its own session, taken in turn from the file named by
-- SESSIONS_FILE (one id per line; a file with one id sends every thread to the same session).
-- Counts every answer that is not 200 and prints the total as "non-200: N".
local ids = {}
local threads = {}

function setup(thread)
    if #ids == 0 then
        for line in io.lines(os.getenv("SESSIONS_FILE")) do
            if #line > 0 then ids[#ids + 1] = line end
        end
        assert(#ids > 0, "no session ids in SESSIONS_FILE")
    end
    thread:set("session", ids[(#threads % #ids) + 1])
    threads[#threads + 1] = thread
end

function init(args)
    failures = 0
    req = wrk.format("POST", "/v1/sessions/" .. session .. "/events",
        { ["Content-Type"] = "application/json" }, '{"type":"increment"}')
end

function request()
    return req
end

function response(status, headers, body)
    if status ~= 200 then failures = failures + 1 end
end

function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do total = total + thread:get("failures") end
    io.write(string.format("non-200: %d\n", total))
end
