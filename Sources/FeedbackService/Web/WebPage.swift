public import HTTPServer

/// The web page served at `/`: pick a system, start a session, watch its state live over SSE and send its events.
///
/// The page is plain HTML, CSS and JavaScript in `Web/Files`, embedded in the binary at build time by the
/// `EmbedFiles` plugin; no step of its own, no resource bundle to ship. `/page.js` is `views.js`, then the
/// inspector's scripts, then `page.js`: what a script uses comes before it.
///
/// Stateless: the assets are built once by `register(in:)` and then only read, from any shard queue.
public enum WebPage {
    /// Adds `GET /` and the files it loads (`/client.js`, `/page.js`, `/page.css`, `/favicon.svg`) to `router`.
    public static func register(in router: inout Router) {
        let javaScript = "text/javascript; charset=utf-8"
        let assets: [(path: String, asset: WebAsset)] = [
            ("/", WebAsset(file("index.html"), contentType: "text/html; charset=utf-8")),
            ("/client.js", WebAsset(file("client.js"), contentType: javaScript)),
            ("/page.js", WebAsset(pageScripts.map(file).joined(), contentType: javaScript)),
            ("/page.css", WebAsset(file("page.css"), contentType: "text/css; charset=utf-8")),
            ("/favicon.svg", WebAsset(file("favicon.svg"), contentType: "image/svg+xml; charset=utf-8")),
        ]
        for (path, asset) in assets {
            router.get(path) { request in asset.response(to: request) }
        }
    }

    /// The files `/page.js` is made of, in order: the views and helpers, the inspector's (issue 32), the page's.
    static let pageScripts = [
        "views.js", "timeline.js", "state-tree.js", "session-list.js", "inspector.js", "page.js",
    ]

    /// The text of an embedded file; a missing one is a build mistake, caught by the first test that starts a server.
    static func file(_ name: String) -> String {
        guard let text = EmbeddedFiles.text(named: name) else {
            preconditionFailure("Web/Files/\(name) was not embedded; the EmbedFiles plugin embeds every file there")
        }
        return text
    }
}
