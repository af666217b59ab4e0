import Foundation
import Testing

@testable import FeedbackJSON

struct JSONPatchTests {
    private func json(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    private func roundTrip(_ old: String, _ new: String) throws -> JSONPatch {
        let before = try json(old)
        let after = try json(new)
        let patch = JSONPatch.diff(from: before, to: after)
        #expect(try patch.apply(to: before) == after)
        return patch
    }

    @Test func equalDocumentsGiveAnEmptyPatch() throws {
        #expect(try roundTrip(#"{"a":[1,2,{"b":null}]}"#, #"{"a":[1,2,{"b":null}]}"#).operations.isEmpty)
    }

    @Test func changedMemberIsReplacedAtItsPath() throws {
        let patch = try roundTrip(#"{"count":1,"name":"x"}"#, #"{"count":2,"name":"x"}"#)
        #expect(patch.operations == [.replace(try JSONPointer("/count"), .int(2))])
    }

    @Test func appendedItemsAreAddedAtTheEnd() throws {
        let patch = try roundTrip(#"{"items":[1,2]}"#, #"{"items":[1,2,3,4]}"#)
        #expect(
            patch.operations == [
                .add(try JSONPointer("/items/2"), .int(3)), .add(try JSONPointer("/items/3"), .int(4)),
            ]
        )
    }

    @Test func shrinkingArrayRemovesFromTheEnd() throws {
        let patch = try roundTrip(#"[1,2,3,4]"#, #"[1,2]"#)
        #expect(patch.operations == [.remove(try JSONPointer("/3")), .remove(try JSONPointer("/2"))])
    }

    @Test func rewrittenArrayIsReplacedWhole() throws {
        let patch = try roundTrip(#"{"l":[1,2,3]}"#, #"{"l":[4,5,6,7]}"#)
        #expect(patch.operations == [.replace(try JSONPointer("/l"), try json("[4,5,6,7]"))])
    }

    @Test func membersAddedAndRemovedAndTypeChanges() throws {
        _ = try roundTrip(#"{"a":1,"b":{"c":[true]},"d":"x"}"#, #"{"b":{"c":"now a string"},"e":null,"d":"x"}"#)
        _ = try roundTrip(#"[]"#, #"{"k":"v"}"#)
        _ = try roundTrip(#"{"a/b":{"~":1}}"#, #"{"a/b":{"~":2}}"#)
    }

    @Test func keysWithSlashAndTildeAreEscapedInPaths() throws {
        let patch = try roundTrip(#"{"a/b~c":1}"#, #"{"a/b~c":2}"#)
        guard case .replace(let path, _) = patch.operations.first else {
            Issue.record("expected a replace")
            return
        }
        #expect(path.description == "/a~1b~0c")
    }

    @Test func appliesTheRFC6902AppendixExamples() throws {
        let document = try json(#"{"foo":["bar","baz"],"biz":{"qux":1}}"#)
        let patch = try JSONPatch(
            json: try json(
                #"""
                [{"op":"add","path":"/foo/1","value":"qux"},{"op":"add","path":"/foo/-","value":"end"},
                 {"op":"move","from":"/biz/qux","path":"/moved"},{"op":"copy","from":"/foo/0","path":"/copied"},
                 {"op":"test","path":"/copied","value":"bar"},{"op":"remove","path":"/biz"}]
                """#
            )
        )
        let result = try patch.apply(to: document)
        #expect(result == (try json(#"{"foo":["bar","qux","baz","end"],"moved":1,"copied":"bar"}"#)))
    }

    @Test func failingOperationsThrowWithAReason() throws {
        let document = try json(#"{"a":[1]}"#)
        #expect(throws: JSONPointerError.self) { try JSONPatch([.remove(try JSONPointer("/b"))]).apply(to: document) }
        #expect(throws: JSONPointerError.self) {
            try JSONPatch([.test(try JSONPointer("/a/0"), .int(2))]).apply(to: document)
        }
        #expect(throws: JSONPointerError.self) {
            try JSONPatch([.move(from: try JSONPointer("/a"), to: try JSONPointer("/a/0"))]).apply(to: document)
        }
        #expect(throws: JSONPointerError.self) {
            try JSONPatch([.replace(try JSONPointer("/a/5"), .null)]).apply(to: document)
        }
    }

    @Test func patchSurvivesItsJSONForm() throws {
        let patch = JSONPatch.diff(from: try json(#"{"a":[1],"b":2}"#), to: try json(#"{"a":[1,3],"c":2}"#))
        let text = patch.json.serialized()
        #expect(try JSONPatch(json: try JSONValue(parsing: text)) == patch)
    }

    @Test func serializationIsCanonicalAndEscapesControlCharacters() throws {
        let value = try json(#"{"b":1,"a":"line\nbreak \"quoted\" \u0001","c":[1.5,-2,true,null]}"#)
        let text = String(decoding: value.serialized(), as: UTF8.self)
        #expect(text == #"{"a":"line\nbreak \"quoted\" \u0001","b":1,"c":[1.5,-2,true,null]}"#)
        #expect(try JSONValue(parsing: Array(text.utf8)) == value)
    }

    @Test func pointerResolvesAndRejectsMalformedText() throws {
        let document = try json(#"{"items":[{"name":"x"}],"":0}"#)
        #expect(try JSONPointer("/items/0/name").resolve(in: document) == .string("x"))
        #expect(try JSONPointer("/").resolve(in: document) == .int(0))
        #expect(try JSONPointer("").resolve(in: document) == document)
        #expect(try JSONPointer("/items/01").resolve(in: document) == nil)
        #expect(throws: JSONPointerError.self) { try JSONPointer("items") }
        #expect(throws: JSONPointerError.self) { try JSONPointer("/a~2") }
    }
}
