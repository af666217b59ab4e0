-- wrk script: POST {"type":"increment"} round-robin to the sessions given as arguments, each as ID=TOKEN, with
-- "Authorization: Bearer TOKEN" (a session's post-scope token).
-- Usage: wrk ... -s scripts/post-session-event-token.lua URL -- ID1=TOKEN1 ID2=TOKEN2 ...
local sessions = {}
local next = 1

function init(args)
    for i = 1, #args do
        local id, token = args[i]:match("([^=]+)=(.+)")
        sessions[i] = {id = id, token = token}
    end
end

function request()
    local session = sessions[next]
    next = next % #sessions + 1
    return wrk.format("POST", "/v1/sessions/" .. session.id .. "/events",
        {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. session.token},
        '{"type":"increment"}')
end
