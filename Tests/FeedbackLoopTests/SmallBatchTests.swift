import Testing

@testable import FeedbackLoop

/// A post's batch keeps one value inline and two or more in an array, and reads the same either way.
@Suite struct SmallBatchTests {
    @Test func oneValueInlineMoreInAnArrayInOrder() {
        var batch = SmallBatch<String>()
        #expect(batch.isEmpty && batch.array.isEmpty)
        batch.append("a", capacity: 3)
        #expect(Array(batch) == ["a"] && batch.array == ["a"] && batch[0] == "a")
        guard case .one = batch.storage else {
            Issue.record("one value is kept inline")
            return
        }
        batch.append("b", capacity: 3)
        batch.append("c", capacity: 3)
        #expect(Array(batch) == ["a", "b", "c"] && batch.count == 3 && batch[2] == "c")
        #expect(batch.array == ["a", "b", "c"])
        guard case .many(let values) = batch.storage else {
            Issue.record("two values or more are kept in an array")
            return
        }
        #expect(values.capacity >= 3)
    }
}
