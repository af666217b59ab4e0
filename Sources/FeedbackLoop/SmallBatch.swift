/// The values of a batch sent to a loop (a post's events, the states its trial made), in order: one kept inline, two
/// or more in an array. Nearly every post carries one event, so its decoded event and the state its trial makes travel
/// to the loop without an array each (two allocations a post, session 42).
///
/// A value type; built by `append` on the thread that handles the post, then only read.
@usableFromInline
package struct SmallBatch<Element>: RandomAccessCollection {
    @usableFromInline
    package enum Storage {
        case empty
        case one(Element)
        case many([Element])
    }

    @usableFromInline
    package var storage: Storage = .empty

    @inlinable
    package init() {}

    @inlinable
    package var startIndex: Int { 0 }

    @inlinable
    package var endIndex: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let values): values.count
        }
    }

    @inlinable
    package subscript(position: Int) -> Element {
        switch storage {
        case .one(let value):
            precondition(position == 0, "index out of range")
            return value
        case .many(let values):
            return values[position]
        case .empty:
            preconditionFailure("index out of range")
        }
    }

    /// Adds `value` at the end: the first kept inline, the second moves both into an array (room for `capacity`).
    @inlinable
    package mutating func append(_ value: Element, capacity: Int) {
        // Taken out, so that an array held is uniquely referenced and grows in place.
        var current = Storage.empty
        swap(&current, &storage)
        switch consume current {
        case .empty:
            storage = .one(value)
        case .one(let first):
            var values: [Element] = []
            values.reserveCapacity(Swift.max(capacity, 2))
            values.append(first)
            values.append(value)
            storage = .many(values)
        case .many(var values):
            values.append(value)
            storage = .many(values)
        }
    }

    /// The values as an array (an allocation for one value: for the loop's unconditional send, which takes one).
    @inlinable
    package var array: [Element] {
        switch storage {
        case .empty: []
        case .one(let value): [value]
        case .many(let values): values
        }
    }
}

extension SmallBatch: Sendable where Element: Sendable {}

extension SmallBatch.Storage: Sendable where Element: Sendable {}
