/// Keeps the mapped sink of a pulled-back feedback so that steps do not allocate.
/// Used only by the engine owner.
final class SinkCache<Child: Sendable, Parent: Sendable>: @unchecked Sendable {
    private let embed: @Sendable (Child) -> Parent
    private var cached: MappedEventSink<Child, Parent>?

    init(_ embed: @escaping @Sendable (Child) -> Parent) { self.embed = embed }

    func sink(over parent: EventSink<Parent>) -> EventSink<Child> {
        if let cached, cached.parent === parent { return cached }
        let made = MappedEventSink(unretained: parent, transform: embed)
        cached = made
        return made
    }
}
