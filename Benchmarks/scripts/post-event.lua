-- wrk script: POST a small JSON event to /v1/events (the HTTPServer benchmark's second endpoint).
wrk.method = "POST"
wrk.path = "/v1/events"
wrk.body = '{"session":"bench-1","kind":"tap","value":1}'
wrk.headers["Content-Type"] = "application/json"
