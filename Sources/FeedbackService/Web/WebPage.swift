public import HTTPServer

/// The web page served at `/`: pick a system, start a session, watch its state live over SSE and send its events.
/// HTML, CSS and plain JavaScript embedded in the binary as string literals; no build step.
///
/// Stateless: the assets are built once by `register(in:)` and then only read, from any shard queue.
public enum WebPage {
    /// Adds `GET /` and the files it loads (`/client.js`, `/page.js`, `/page.css`, `/favicon.svg`) to `router`.
    public static func register(in router: inout Router) {
        let assets: [(path: String, asset: WebAsset)] = [
            ("/", WebAsset(html, contentType: "text/html; charset=utf-8")),
            ("/client.js", WebAsset(clientScript, contentType: "text/javascript; charset=utf-8")),
            ("/page.js", WebAsset(pageViews + "\n" + pageScript, contentType: "text/javascript; charset=utf-8")),
            ("/page.css", WebAsset(style, contentType: "text/css; charset=utf-8")),
            ("/favicon.svg", WebAsset(icon, contentType: "image/svg+xml; charset=utf-8")),
        ]
        for (path, asset) in assets {
            router.get(path) { request in asset.response(to: request) }
        }
    }

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
          <meta charset="utf-8">
          <meta name="viewport" content="width=device-width, initial-scale=1">
          <title>FeedbackHost</title>
          <link rel="icon" href="/favicon.svg" type="image/svg+xml">
          <link rel="stylesheet" href="/page.css">
          <script src="/client.js" defer></script>
          <script src="/page.js" defer></script>
        </head>
        <body>
          <header>
            <h1>FeedbackHost</h1>
            <span id="connection" class="badge" data-status="idle">no session</span>
          </header>
          <main>
            <nav aria-label="Systems">
              <h2>Systems</h2>
              <ul id="systems"><li class="muted">loading…</li></ul>
            </nav>
            <section id="session" hidden>
              <div class="session-head">
                <h2 id="session-system"></h2>
                <span class="muted">rev <b id="session-rev">–</b></span>
                <code id="session-id"></code>
                <span class="spacer"></span>
                <button type="button" id="reconnect" title="Drop the stream and open a new one">Reconnect</button>
                <button type="button" id="end-session" class="danger">End session</button>
              </div>
              <p id="notice" class="notice" hidden></p>
              <div id="view"></div>
              <details id="events-panel" open>
                <summary>Client events</summary>
                <div id="examples" class="row"></div>
                <form id="custom-event" class="row">
                  <select id="event-type" aria-label="Event type"></select>
                  <input id="event-json" aria-label="Event as JSON" spellcheck="false">
                  <button type="submit">Send</button>
                </form>
              </details>
              <details>
                <summary>State</summary>
                <pre id="state-json"></pre>
              </details>
              <p id="error" class="error" role="alert" hidden></p>
            </section>
            <section id="welcome">
              <p>Pick a system to start a session. Its state streams here over Server-Sent Events; the buttons post
              its client events. Other pages can do the same with <a href="/client.js">/client.js</a>.</p>
            </section>
          </main>
        </body>
        </html>
        """#

    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="none" \#
        stroke="#2563eb" stroke-width="2.5"/><circle cx="8" cy="2" r="2" fill="#2563eb"/></svg>
        """#
}
