-- wrk script: GET the sessions given as arguments, round-robin per request.
-- Usage: wrk ... -s scripts/get-session.lua URL -- ID1 ID2 ...
local ids = {}
local next = 1

function init(args)
    for i = 1, #args do ids[i] = args[i] end
end

function request()
    local id = ids[next]
    next = next % #ids + 1
    return wrk.format("GET", "/v1/sessions/" .. id)
end
