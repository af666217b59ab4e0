/// An ordered list of header fields stored as bytes: names keep their case, lookups ignore it.
///
/// A value type; a request's headers are built once on the shard queue by the parser and then only read.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    struct Field: Sendable, Equatable {
        var nameStart: Int32
        var nameEnd: Int32
        var valueEnd: Int32
    }

    /// name bytes followed by value bytes, field after field.
    private(set) var storage: [UInt8]
    private(set) var fields: [Field]

    /// Creates an empty list.
    public init() {
        storage = []
        fields = []
    }

    /// Creates an empty list with room for `bytes` of names and values in `fields` fields.
    init(reservingBytes bytes: Int, fields: Int) {
        self.init()
        storage.reserveCapacity(bytes)
        self.fields.reserveCapacity(fields)
    }

    /// Creates a list from name/value pairs, in order, with room for a few more fields (a response's `ETag`,
    /// its CORS fields) without growing.
    public init(_ pairs: [(String, String)]) {
        let bytes = pairs.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        self.init(reservingBytes: bytes + 64, fields: pairs.count + 2)
        for (name, value) in pairs { add(name: name, value: value) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Appends a field. Names and values are taken as given; the response writer refuses CR, LF and NUL.
    public mutating func add(name: String, value: String) {
        let start = Int32(storage.count)
        storage.append(contentsOf: name.utf8)
        let nameEnd = Int32(storage.count)
        storage.append(contentsOf: value.utf8)
        fields.append(Field(nameStart: start, nameEnd: nameEnd, valueEnd: Int32(storage.count)))
    }

    /// Appends a field from byte ranges of a buffer (the parser's path).
    mutating func add(_ buffer: UnsafeBufferPointer<UInt8>, name: Range<Int>, value: Range<Int>) {
        let start = Int32(storage.count)
        storage.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[name]))
        let nameEnd = Int32(storage.count)
        storage.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[value]))
        fields.append(Field(nameStart: start, nameEnd: nameEnd, valueEnd: Int32(storage.count)))
    }

    /// Replaces every field named `name` (case-insensitively) with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field named `name` (case-insensitively).
    public mutating func remove(name: String) {
        guard contains(name) else { return }
        let kept = self.filter { !Self.equalsIgnoringCase(Array($0.name.utf8)[...], name) }
        self = HTTPHeaders(kept.map { ($0.name, $0.value) })
    }

    /// The first value of the field named `name` (case-insensitive), if any.
    public subscript(_ name: String) -> String? {
        guard let i = firstIndex(name) else { return nil }
        return string(valueOf: fields[i])
    }

    /// Every value of the fields named `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { nameEquals($0, name) }.map { string(valueOf: $0) }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { firstIndex(name) != nil }

    /// The fields in order, as strings.
    public func makeIterator() -> AnyIterator<(name: String, value: String)> {
        var index = 0
        return AnyIterator {
            guard index < fields.count else { return nil }
            defer { index += 1 }
            let f = fields[index]
            return (string(Int(f.nameStart)..<Int(f.nameEnd)), string(valueOf: f))
        }
    }

    func firstIndex(_ name: String) -> Int? {
        fields.firstIndex { nameEquals($0, name) }
    }

    func nameEquals(_ field: Field, _ name: String) -> Bool {
        Self.equalsIgnoringCase(storage[Int(field.nameStart)..<Int(field.nameEnd)], name)
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

    static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ name: String) -> Bool {
        // Most fields a lookup passes differ in length: no byte is compared for them.
        guard bytes.count == name.utf8.count else { return false }
        var utf8 = name.utf8.makeIterator()
        for b in bytes {
            guard let c = utf8.next(), ASCII.lower(b) == ASCII.lower(c) else { return false }
        }
        return utf8.next() == nil
    }
}
