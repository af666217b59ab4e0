import FeedbackJSON

/// An ordered list of header fields stored as bytes: names keep their case, lookups ignore it.
///
/// A value type; a request's headers are built once on the shard queue by the parser and then only read.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// Where one field's name and value lie in `storage`.
    struct Field: Sendable, Equatable {
        var nameStart: Int32
        var nameEnd: Int32
        var valueEnd: Int32
    }

    /// Field after field: the name's and the value's lengths (4 bytes each, little-endian), then the name's bytes and
    /// the value's. One buffer, not a second array of positions: a request's or a response's fields cost one
    /// allocation, and a copy of them one reference. Lookups walk the fields in order, as they did the positions.
    private(set) var storage: [UInt8]
    /// The number of fields.
    public private(set) var count: Int
    /// Bit `n % 64` is set when a field's name is `n` bytes long: a lookup of a name no field is as long as (most of a
    /// request's lookups: `If-Match`, `Idempotency-Key`, `Origin`… that it does not carry) ends without a walk.
    private var nameLengths: UInt64 = 0
    /// Whether every field is known to be sendable as it is (a token name, a value of field-value bytes): the package's
    /// own answers' fields, written from the source's literals, which the response writer then need not check byte by
    /// byte (`ResponseWriter.isValid`). Any field added afterwards clears it.
    private(set) var knownValid = false

    /// The bytes before each field's name: its two lengths.
    private static let prefix = 8

    /// The same fields in the same order (how the list was made, and so `knownValid`, aside).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.count == rhs.count && lhs.storage == rhs.storage
    }

    /// Creates an empty list.
    public init() {
        storage = []
        count = 0
    }

    /// Creates an empty list with room for `bytes` of names and values in `fields` fields.
    init(reservingBytes bytes: Int, fields: Int) {
        self.init()
        storage.reserveCapacity(bytes + fields * Self.prefix)
    }

    /// Creates a list from name/value pairs, in order, with room for a few more fields (a response's `ETag`,
    /// its CORS fields) without growing.
    public init(_ pairs: [(String, String)]) {
        let bytes = pairs.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        self.init(reservingBytes: bytes + 64, fields: pairs.count + 2)
        for (name, value) in pairs { add(name: name, value: value) }
    }

    /// Creates a list of one field, with room for a few more (a response's `ETag`, its CORS fields) without growing.
    public init(name: String, value: String) {
        self.init(reservingBytes: name.utf8.count + value.utf8.count + 64, fields: 3)
        add(name: name, value: value)
    }

    /// Creates a list of one field written in the source (`Content-Type: application/json`), with room for a few
    /// more: its bytes copied as they are, not read out of a `String`.
    init(_ name: StaticString, _ value: StaticString) {
        let bytes = name.utf8CodeUnitCount + value.utf8CodeUnitCount + Self.prefix
        self.init(capacity: bytes, spare: 64 + 2 * Self.prefix) { writer in
            name.withUTF8Buffer { name in
                value.withUTF8Buffer { value in
                    _ = writer.add(name, value)
                }
            }
        }
        knownValid = true
        assert(ResponseWriter.isEachFieldValid(self), "a field written in the source is not sendable as it is")
    }

    /// Creates a list of two fields written in one allocation, with room for a few more: the first written in the
    /// source, the second's value written by `write` into room for `valueCapacity` bytes (it returns how many it
    /// wrote): an answer's `Content-Type` and `ETag`.
    init(
        _ name: StaticString,
        _ value: StaticString,
        _ second: StaticString,
        valueCapacity: Int,
        _ write: (UnsafeMutablePointer<UInt8>) -> Int
    ) {
        let bytes = name.utf8CodeUnitCount + value.utf8CodeUnitCount + second.utf8CodeUnitCount + valueCapacity
        var secondValid = false
        self.init(capacity: bytes + 2 * Self.prefix, spare: 64 + 2 * Self.prefix) { writer in
            _ = writer.add(
                UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount)
            )
            _ = writer.add(
                UnsafeBufferPointer(start: second.utf8Start, count: second.utf8CodeUnitCount),
                valueCapacity: valueCapacity
            ) { room in
                let length = write(room)
                // The written value is judged here, a few bytes; the literals were judged when they were written.
                let written = UnsafeBufferPointer(start: room, count: Swift.min(length, valueCapacity))
                secondValid = ASCII.allFieldValue(written)
                return length
            }
        }
        knownValid = secondValid
        assert(!knownValid || ResponseWriter.isEachFieldValid(self), "a field written in the source is not sendable")
    }

    /// Appends a field. Names and values are taken as given; the response writer refuses CR, LF and NUL.
    public mutating func add(name: String, value: String) {
        appendLengths(name.utf8.count, value.utf8.count)
        storage.append(contentsOf: name.utf8)
        storage.append(contentsOf: value.utf8)
        count += 1
    }

    /// Creates a list whose fields `fill` writes through a `Writer` into `capacity` bytes (names, values, and 8 bytes of
    /// lengths a field), then kept in one allocation with room for `spare` bytes more: the parser's way, which knows
    /// a bound before it starts (a request's fields, a chunked body's trailers). A field that would pass the capacity is not written and makes `Writer.add` return
    /// false.
    init(capacity: Int, spare: Int = 0, _ fill: (inout Writer) -> Void) {
        var fields = 0
        var lengths: UInt64 = 0
        storage = [UInt8](writing: capacity, spare: spare) { out in
            var writer = Writer(out: out)
            fill(&writer)
            fields = writer.count
            lengths = writer.nameLengths
            return writer.written
        }
        count = fields
        nameLengths = lengths
    }

    /// Writes fields into the storage of `init(capacity:_:)`.
    struct Writer: ~Copyable {
        fileprivate let out: UnsafeMutableBufferPointer<UInt8>
        fileprivate var written = 0
        fileprivate var count = 0
        fileprivate var nameLengths: UInt64 = 0

        fileprivate init(out: UnsafeMutableBufferPointer<UInt8>) { self.out = out }

        /// Appends the field whose name and value are the given ranges of `buffer`; false when it would not fit.
        mutating func add(_ buffer: UnsafeBufferPointer<UInt8>, name: Range<Int>, value: Range<Int>) -> Bool {
            add(UnsafeBufferPointer(rebasing: buffer[name]), UnsafeBufferPointer(rebasing: buffer[value]))
        }

        /// Appends the field of these name and value bytes; false when it would not fit.
        mutating func add(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Bool {
            add(name, valueCapacity: value.count) { room in
                if let source = value.baseAddress { room.initialize(from: source, count: value.count) }
                return value.count
            }
        }

        /// Appends the field of this name whose value `write` writes in place, into room for `valueCapacity` bytes,
        /// returning how many it wrote; false when that room would not fit.
        mutating func add(
            _ name: UnsafeBufferPointer<UInt8>,
            valueCapacity: Int,
            _ write: (UnsafeMutablePointer<UInt8>) -> Int
        ) -> Bool {
            guard written + HTTPHeaders.prefix + name.count + valueCapacity <= out.count, let base = out.baseAddress
            else { return false }
            let field = base + written
            if let source = name.baseAddress {
                (field + HTTPHeaders.prefix).initialize(from: source, count: name.count)
            }
            let length = Swift.min(write(field + HTTPHeaders.prefix + name.count), valueCapacity)
            let lengths = (UInt32(name.count).littleEndian, UInt32(length).littleEndian)
            withUnsafeBytes(of: lengths) {
                UnsafeMutableRawPointer(field).copyMemory(from: $0.baseAddress!, byteCount: HTTPHeaders.prefix)
            }
            written += HTTPHeaders.prefix + name.count + length
            count += 1
            nameLengths |= HTTPHeaders.lengthBit(name.count)
            return true
        }
    }

    /// Appends a field whose value `write` appends to the bytes it is handed (a number, an entity tag): no string is
    /// made for it. `write` only appends.
    public mutating func add(name: String, value write: (inout [UInt8]) -> Void) {
        let start = storage.count
        appendLengths(name.utf8.count, 0)
        storage.append(contentsOf: name.utf8)
        appendValue(from: start, write)
    }

    /// `add(name:value:)` with a name written in the source (`ETag`): its bytes copied as they are.
    public mutating func add(staticName name: StaticString, value write: (inout [UInt8]) -> Void) {
        let start = storage.count
        appendLengths(name.utf8CodeUnitCount, 0)
        name.withUTF8Buffer { storage.append(contentsOf: $0) }
        appendValue(from: start, write)
    }

    /// Appends the value `write` writes to the field whose lengths start at `start`, and sets its length.
    private mutating func appendValue(from start: Int, _ write: (inout [UInt8]) -> Void) {
        let valueStart = storage.count
        write(&storage)
        let length = UInt32(storage.count - valueStart).littleEndian
        storage.withUnsafeMutableBytes { $0.storeBytes(of: length, toByteOffset: start + 4, as: UInt32.self) }
        count += 1
    }

    /// The bit of `nameLengths` for a name `length` bytes long.
    private static func lengthBit(_ length: Int) -> UInt64 { 1 << UInt64(length & 63) }

    private mutating func appendLengths(_ name: Int, _ value: Int) {
        knownValid = false
        nameLengths |= Self.lengthBit(name)
        var lengths = (UInt32(name).littleEndian, UInt32(value).littleEndian)
        withUnsafeBytes(of: &lengths) { storage.append(contentsOf: $0) }
    }

    /// The fields' positions, in order.
    var fields: Fields { Fields(storage: storage) }

    /// The fields' positions, read off `storage` one after the other.
    struct Fields: Sequence {
        let storage: [UInt8]

        func makeIterator() -> Iterator { Iterator(storage: storage, offset: 0) }

        struct Iterator: IteratorProtocol {
            let storage: [UInt8]
            var offset: Int

            mutating func next() -> Field? {
                guard offset < storage.count else { return nil }
                let at = offset
                let field = storage.withUnsafeBytes { HTTPHeaders.field(at: at, in: $0) }
                offset = Int(field.valueEnd)
                return field
            }
        }
    }

    /// Replaces every field named `name` (case-insensitively) with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field named `name` (case-insensitively).
    public mutating func remove(name: String) {
        guard contains(name) else { return }
        let kept = fields.filter { !nameEquals($0, name) }
        self = HTTPHeaders(kept.map { (string(Int($0.nameStart)..<Int($0.nameEnd)), string(valueOf: $0)) })
    }

    /// The first value of the field named `name` (case-insensitive), if any.
    public subscript(_ name: String) -> String? {
        first(name).map { string(valueOf: $0) }
    }

    /// Every value of the fields named `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { nameEquals($0, name) }.map { string(valueOf: $0) }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { first(name) != nil }

    /// The fields in order, as strings.
    public func makeIterator() -> AnyIterator<(name: String, value: String)> {
        var fields = self.fields.makeIterator()
        return AnyIterator {
            guard let f = fields.next() else { return nil }
            return (string(Int(f.nameStart)..<Int(f.nameEnd)), string(valueOf: f))
        }
    }

    /// The first field named `name` (case-insensitive), if any.
    func first(_ name: String) -> Field? {
        // One view of the storage for the whole walk, no slice of it; most fields a lookup passes differ in length
        // and have none of their bytes compared.
        let wanted = name.utf8.count
        guard nameLengths & Self.lengthBit(wanted) != 0 else { return nil }
        return storage.withUnsafeBytes { bytes in
            var at = 0
            while at < bytes.count {
                let field = Self.field(at: at, in: bytes)
                at = Int(field.valueEnd)
                if Int(field.nameEnd - field.nameStart) == wanted,
                    Self.equalsIgnoringCase(bytes, from: Int(field.nameStart), name)
                {
                    return field
                }
            }
            return nil
        }
    }

    /// Whether the bytes at `start` spell `name` ignoring ASCII case (as many as `name` has: the caller compared the
    /// lengths).
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, from start: Int, _ name: String) -> Bool {
        // The name's bytes read in place (a small string's from the stack): iterating its UTF-8 view decoded each.
        var name = name
        return name.withUTF8 { wanted in
            for i in 0..<wanted.count where ASCII.lower(bytes[start + i]) != ASCII.lower(wanted[i]) { return false }
            return true
        }
    }

    /// Calls `body` with each field, its name's bytes and its value's, in order, until it returns false: one view of
    /// the storage for the whole walk, no reference counted per field (what the hot paths use: lookups, checking and
    /// writing a response's fields).
    func forEachField(
        _ body: (Field, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Bool
    ) rethrows {
        try storage.withUnsafeBufferPointer { bytes in
            var at = 0
            while at < bytes.count {
                let field = Self.field(at: at, in: UnsafeRawBufferPointer(bytes))
                at = Int(field.valueEnd)
                let more = try body(
                    field,
                    UnsafeBufferPointer(rebasing: bytes[Int(field.nameStart)..<Int(field.nameEnd)]),
                    UnsafeBufferPointer(rebasing: bytes[Int(field.nameEnd)..<at])
                )
                if !more { return }
            }
        }
    }

    /// The field whose two lengths start at `at` in the storage's bytes: the one reader of the layout.
    private static func field(at: Int, in bytes: UnsafeRawBufferPointer) -> Field {
        let name = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        let value = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self)))
        let nameStart = at + prefix
        return Field(
            nameStart: Int32(nameStart),
            nameEnd: Int32(nameStart + name),
            valueEnd: Int32(nameStart + name + value)
        )
    }

    /// The value's bytes of the first field named `name` (case-insensitive), if any: a lookup that makes no string.
    public func valueBytes(_ name: String) -> ArraySlice<UInt8>? {
        first(name).map(valueBytes)
    }

    /// Whether `field`'s name is `name`, ignoring ASCII case.
    func nameEquals(_ field: Field, _ name: String) -> Bool {
        Int(field.nameEnd - field.nameStart) == name.utf8.count
            && storage.withUnsafeBytes { Self.equalsIgnoringCase($0, from: Int(field.nameStart), name) }
    }

    func valueBytes(_ field: Field) -> ArraySlice<UInt8> {
        storage[Int(field.nameEnd)..<Int(field.valueEnd)]
    }

    func nameBytes(_ field: Field) -> ArraySlice<UInt8> {
        storage[Int(field.nameStart)..<Int(field.nameEnd)]
    }

    private func string(valueOf field: Field) -> String { string(Int(field.nameEnd)..<Int(field.valueEnd)) }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: storage[range], as: UTF8.self)
    }

}
