public import FeedbackJSON

/// The events of one post, as the API read them from its body: JSON values, or a body of one event of plain members
/// read where its bytes lie (`FlatJSONObject`, the common post), which the session decodes with no `JSONValue` made.
/// Either way the session checks and refuses the same events in the same words (`SystemEvents`).
public struct PostedEvents: Sendable, ExpressibleByArrayLiteral {
    @usableFromInline
    enum Form: Sendable {
        case values([JSONValue])
        case flat(FlatJSONObject)
    }

    @usableFromInline
    let form: Form

    /// Events as JSON values.
    public init(_ values: [JSONValue]) { form = .values(values) }

    public init(arrayLiteral values: JSONValue...) { form = .values(values) }

    /// One event, the object a body held.
    public init(_ object: FlatJSONObject) { form = .flat(object) }

    /// How many events the post holds.
    @inlinable
    public var count: Int {
        switch form {
        case .values(let values): values.count
        case .flat: 1
        }
    }
}
