/// A growable FIFO ring buffer. Not thread-safe: it lives inside a loop's core, under its engine lock.
@usableFromInline
struct EventQueue<Element> {
    @usableFromInline
    var buffer: ContiguousArray<Element?> = []
    @usableFromInline
    var head: Int = 0
    @usableFromInline
    var count: Int = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { count == 0 }

    @inlinable
    mutating func append(_ element: Element) {
        if count == buffer.count { grow() }
        var index = head + count
        if index >= buffer.count { index -= buffer.count }
        buffer[index] = element
        count += 1
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        // Move the element out: no retain/release of its payload.
        var element: Element?
        swap(&element, &buffer[head])
        head += 1
        if head == buffer.count { head = 0 }
        count -= 1
        if count == 0 {
            head = 0
            // An idle loop keeps no large buffer.
            if buffer.count > 64 { buffer = [] }
        }
        return element
    }

    /// Removes and returns every element, oldest first.
    @inlinable
    mutating func removeAll() -> [Element] {
        var all: [Element] = []
        all.reserveCapacity(count)
        while let element = popFirst() { all.append(element) }
        buffer = []
        return all
    }

    @usableFromInline
    mutating func grow() {
        var grown = ContiguousArray<Element?>(repeating: nil, count: Swift.max(4, buffer.count * 2))
        for offset in 0..<count {
            var index = head + offset
            if index >= buffer.count { index -= buffer.count }
            grown[offset] = buffer[index]
        }
        buffer = grown
        head = 0
    }
}

extension EventQueue: Sendable where Element: Sendable {}

extension EventQueue {
    /// Puts `element` back in front of the others (an entry that must wait after all).
    @usableFromInline
    mutating func pushFront(_ element: Element) {
        if count == buffer.count { grow() }
        head = head == 0 ? buffer.count - 1 : head - 1
        buffer[head] = element
        count += 1
    }

    /// Removes the elements that satisfy `predicate`, keeping the others in order.
    @usableFromInline
    mutating func removeAll(where predicate: (Element) -> Bool) {
        let all = removeAll()
        for element in all where !predicate(element) { append(element) }
    }
}

extension EventQueue {
    /// Whether any queued element satisfies `predicate`, oldest first.
    @inlinable
    func contains(where predicate: (Element) -> Bool) -> Bool {
        var index = head
        for _ in 0..<count {
            if let element = buffer[index], predicate(element) { return true }
            index += 1
            if index == buffer.count { index = 0 }
        }
        return false
    }
}
