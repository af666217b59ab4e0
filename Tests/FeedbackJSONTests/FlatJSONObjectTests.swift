import Testing

@testable import FeedbackJSON

/// The posted event's short way: a body of plain members read where its bytes lie must read exactly as the parser
/// reads it, and leave everything else (malformed text included) to the parser.
struct FlatJSONObjectTests {
    private func parsed(_ bytes: [UInt8]) -> JSONValue? { try? JSONValue(parsing: bytes) }

    /// Every member the parser sees, read back through `member`, and the whole object through `value`.
    private func expectReadsAsTheParser(_ bytes: [UInt8], _ object: FlatJSONObject) {
        guard case .object(let members)? = parsed(bytes) else {
            Issue.record("accepted what the parser refuses: \(String(decoding: bytes, as: UTF8.self))")
            return
        }
        #expect(object.value == .object(members))
        #expect(object.count == members.count)
        for (name, value) in members { #expect(object.member(name) == value) }
        #expect(object.member("absent") == nil)
        for (name, value) in members {
            let text: String? = if case .string(let text) = value { text } else { nil }
            #expect(object.member(name, isOneOf: ["x", text ?? "-", "y"]) == (text != nil))
            #expect(!object.member(name, isOneOf: [(text ?? "") + "z"]))
        }
        #expect(!object.member("absent", isOneOf: ["", "x"]))
    }

    @Test(arguments: [
        #"{"type":"increment"}"#,
        #"{"type":"set","count":3}"#,
        #" { "type" : "add" , "amount" : -42 , "note" : null , "on" : true , "off" : false } "#,
        "\t\r\n{\"a\":0}\n",
        #"{}"#,
        #"{"":""}"#,
        #"{"n":-0}"#,
        #"{"big":999999999999999999,"small":-999999999999999999}"#,
        #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}"#,
        #"{"text":"with spaces, {braces}, [brackets] and 'quotes' ~"}"#,
    ])
    func plainObjectsReadAsTheParserReadsThem(text: String) throws {
        let bytes = Array(text.utf8)
        let object = try #require(FlatJSONObject(bytes))
        expectReadsAsTheParser(bytes, object)
    }

    @Test(arguments: [
        // Valid JSON, but not plain: the parser reads it.
        #"{"type":"move","to":{"x":1}}"#,
        #"{"events":[{"type":"increment"}]}"#,
        #"{"text":"an escape \" inside"}"#,
        #"{"text":"a\nb"}"#,
        #"{"text":"grüße"}"#,
        #"{"amount":1.5}"#,
        #"{"amount":1e3}"#,
        #"{"amount":1E3}"#,
        #"{"amount":9223372036854775807}"#,
        #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}"#,
        #"[{"type":"increment"}]"#,
        #""increment""#,
        // Malformed or refused: the parser says why.
        #"{"type":"increment","type":"reset"}"#,
        #"{"a":1,}"#,
        #"{"a" 1}"#,
        #"{"a":01}"#,
        #"{"a":-}"#,
        #"{"a":tru}"#,
        #"{"a":truex}"#,
        #"{"a":1} x"#,
        #"{"a":1}}"#,
        #"{"a":1"#,
        #"{"a":"open}"#,
        "{\"a\":\"tab\there\"}",
        #"{a:1}"#,
        #"{"#,
        "",
        "   ",
    ])
    func anythingElseIsLeftToTheParser(text: String) {
        #expect(FlatJSONObject(Array(text.utf8)) == nil)
    }

    /// Bodies near the plain ones, byte by byte: whatever the short way accepts, the parser accepts and reads alike.
    @Test func mutatedBodiesNeverReadOtherwiseThanByTheParser() {
        let seeds = [#"{"type":"set","count":-12,"on":true,"note":null,"name":"a b"}"#, #" {"t" : "x" , "n" : 0 } "#]
        let alphabet = Array(#"{}[]":,-+.eE0123456789 tfnrulsa\"#.utf8) + [0x09, 0x0A, 0x00, 0xC3, 0x7F]
        var random = SplitMix(seed: 30)
        var accepted = 0
        for seed in seeds {
            let original = Array(seed.utf8)
            for _ in 0..<4000 {
                var bytes = original
                for _ in 0...random.next(below: 3) {
                    let at = random.next(below: bytes.count)
                    switch random.next(below: 3) {
                    case 0: bytes[at] = alphabet[random.next(below: alphabet.count)]
                    case 1: bytes.remove(at: at)
                    default: bytes.insert(alphabet[random.next(below: alphabet.count)], at: at)
                    }
                    if bytes.isEmpty { bytes = [0x20] }
                }
                guard let object = FlatJSONObject(bytes) else { continue }
                accepted += 1
                expectReadsAsTheParser(bytes, object)
            }
        }
        // Some mutations stay plain (a digit for a digit, a letter in a string): the comparison above ran.
        #expect(accepted > 100)
    }
}

/// A small deterministic generator (SplitMix64), so that a failure repeats.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
