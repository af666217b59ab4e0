import FeedbackJSON

/// An RFC 9457 problem details object, the one shape of every `application/problem+json` body the product sends:
/// `type`, `title`, `status`, `detail` and extension members. `body` is its one encoder.
///
/// A `Sendable` value; build it anywhere.
public struct Problem: Sendable, Equatable {
    /// A URI naming the kind of problem; `about:blank` when the status says it all.
    public var type: String
    /// A short summary of the kind of problem.
    public var title: String
    /// The HTTP status.
    public var status: Int
    /// What happened to this request, and what to do about it.
    public var detail: String
    /// Extension members, by name, each as compact JSON text (`[1,2]`, `"text"`). A member named like a standard
    /// one is left out.
    public var extensions: [String: [UInt8]]

    /// Creates a problem; `title` defaults to the status's reason phrase.
    public init(
        type: String = "about:blank",
        title: String? = nil,
        status: Int,
        detail: String,
        extensions: [String: [UInt8]] = [:]
    ) {
        self.type = type
        self.title = title ?? HTTPStatus.reason(status)
        self.status = status
        self.detail = detail
        self.extensions = extensions
    }

    /// The problem a module error is.
    public init(_ error: HTTPServerError) {
        self.init(status: error.status, detail: error.message)
    }

    /// The compact JSON object, members sorted by name (equal problems always give equal bytes).
    public var body: [UInt8] {
        var members: [(name: String, json: [UInt8])] = [
            ("detail", JSONString.quoted(detail)),
            ("status", Array(String(status).utf8)),
            ("title", JSONString.quoted(title)),
            ("type", JSONString.quoted(type)),
        ]
        for (name, json) in extensions where !members.contains(where: { $0.name == name }) {
            members.append((name, json))
        }
        members.sort { $0.name < $1.name }
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.escape(member.name, into: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: member.json)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `application/problem+json` (RFC 9457).
    public static let mediaType = "application/problem+json"

    /// The response: this status, `Content-Type: application/problem+json`, `headers` after it, and `body`.
    public func response(headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var all = HTTPHeaders([("Content-Type", Self.mediaType)])
        for field in headers { all.add(name: field.name, value: field.value) }
        return Response(status: status, headers: all, body: body)
    }
}
