-- wrk script: POST {"type":"increment"} to the sessions given as arguments, round-robin per request; with
-- REQUEST=get in the environment, GET them instead.
-- Usage: [REQUEST=get] wrk ... -s scripts/post-session-event.lua URL -- ID1 ID2 ...
local ids = {}
local next = 1
local get = os.getenv("REQUEST") == "get"

function init(args)
    for i = 1, #args do ids[i] = args[i] end
end

function request()
    local id = ids[next]
    next = next % #ids + 1
    if get then return wrk.format("GET", "/v1/sessions/" .. id) end
    return wrk.format("POST", "/v1/sessions/" .. id .. "/events",
        {["Content-Type"] = "application/json"}, '{"type":"increment"}')
end
