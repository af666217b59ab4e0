/// The `Encoder` behind `StateWriter`: puts what a value encodes into its slot, as a `StateNode`.
struct StateEncoder: Encoder {
    let slot: StateSlot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: StateObject
        switch slot.node {
        case .object(let existing): object = existing
        case .empty:
            object = StateObject()
            slot.node = .object(object)
        default:
            // Another kind of value was encoded here first (JSONEncoder traps): left to it.
            object = StateObject()
            slot.node = .empty
        }
        return KeyedEncodingContainer(StateKeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: StateArray
        switch slot.node {
        case .array(let existing): array = existing
        case .empty:
            array = StateArray()
            slot.node = .array(array)
        default:
            array = StateArray()
            slot.node = .empty
        }
        return StateUnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StateValueContainer(slot: slot, codingPath: codingPath)
    }
}

/// A key as written into a coding path of an array element (`Index 3`, as `JSONEncoder` names it).
struct StateIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

struct StateKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: StateObject
    let codingPath: [any CodingKey]

    private func put(_ node: StateNode, _ key: Key) {
        object.members.append((key.stringValue, node))
    }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(.uint(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(try StateNode.encoding(value, codingPath: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = StateObject()
        put(.object(nested), key)
        return KeyedEncodingContainer(StateKeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = StateArray()
        put(.array(nested), key)
        return StateUnkeyedContainer(array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        object.refused = true
        return StateEncoder(slot: StateSlot(), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        object.refused = true
        return StateEncoder(slot: StateSlot(), codingPath: codingPath + [key])
    }
}

struct StateUnkeyedContainer: UnkeyedEncodingContainer {
    let array: StateArray
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    private func put(_ node: StateNode) { array.elements.append(node) }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.float(value)) }
    mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(value)) }
    mutating func encode(_ value: UInt) throws { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { put(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        put(try StateNode.encoding(value, codingPath: codingPath + [StateIndexKey(count)]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = StateObject()
        let path = codingPath + [StateIndexKey(count)]
        put(.object(nested))
        return KeyedEncodingContainer(StateKeyedContainer<NestedKey>(object: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = StateArray()
        let path = codingPath + [StateIndexKey(count)]
        put(.array(nested))
        return StateUnkeyedContainer(array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        array.refused = true
        return StateEncoder(slot: StateSlot(), codingPath: codingPath)
    }
}

struct StateValueContainer: SingleValueEncodingContainer {
    let slot: StateSlot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.node = .null }
    mutating func encode(_ value: Bool) throws { slot.node = .bool(value) }
    mutating func encode(_ value: String) throws { slot.node = .string(value) }
    mutating func encode(_ value: Double) throws { slot.node = .double(value) }
    mutating func encode(_ value: Float) throws { slot.node = .float(value) }
    mutating func encode(_ value: Int) throws { slot.node = .int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { slot.node = .int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { slot.node = .int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { slot.node = .int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { slot.node = .int(value) }
    mutating func encode(_ value: UInt) throws { slot.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { slot.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { slot.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { slot.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { slot.node = .uint(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        slot.node = try StateNode.encoding(value, codingPath: codingPath)
    }
}
