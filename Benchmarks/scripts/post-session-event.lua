-- wrk script: POST {"type":"increment"} to the sessions given as arguments, round-robin per request; with
-- REQUEST=get in the environment, GET them instead; with REQUEST=keyed, each post carries an Idempotency-Key of its
-- own (the server then journals its answer too); with REQUEST=add, each post is {"type":"add","amount":3} (an event
-- of two members).
-- Usage: [REQUEST=get|keyed|add] wrk ... -s scripts/post-session-event.lua URL -- ID1 ID2 ...
local ids = {}
local next = 1
local get = os.getenv("REQUEST") == "get"
local keyed = os.getenv("REQUEST") == "keyed"
local body = os.getenv("REQUEST") == "add" and '{"type":"add","amount":3}' or '{"type":"increment"}'
local sent = 0

function init(args)
    for i = 1, #args do ids[i] = args[i] end
end

function request()
    local id = ids[next]
    next = next % #ids + 1
    if get then return wrk.format("GET", "/v1/sessions/" .. id) end
    local headers = {["Content-Type"] = "application/json"}
    if keyed then
        sent = sent + 1
        headers["Idempotency-Key"] = string.format("k%x-%d", math.random(0, 0x7fffffff), sent)
    end
    return wrk.format("POST", "/v1/sessions/" .. id .. "/events", headers, body)
end
