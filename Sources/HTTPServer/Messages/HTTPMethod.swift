/// The request methods the server knows (RFC 9110 section 9 plus PATCH); any other token is answered with 501.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET"
    case head = "HEAD"
    case post = "POST"
    case put = "PUT"
    case delete = "DELETE"
    case patch = "PATCH"
    case options = "OPTIONS"
    case trace = "TRACE"
    case connect = "CONNECT"

    /// Recognises a method from its exact (case-sensitive) bytes.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPMethod? {
        switch bytes.count {
        case 3:
            if matches(bytes, "GET") { return .get }
            if matches(bytes, "PUT") { return .put }
        case 4:
            if matches(bytes, "POST") { return .post }
            if matches(bytes, "HEAD") { return .head }
        case 5:
            if matches(bytes, "PATCH") { return .patch }
            if matches(bytes, "TRACE") { return .trace }
        case 6:
            if matches(bytes, "DELETE") { return .delete }
        case 7:
            if matches(bytes, "OPTIONS") { return .options }
            if matches(bytes, "CONNECT") { return .connect }
        default:
            break
        }
        return nil
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let p = name.utf8Start
        for i in 0..<bytes.count where bytes[i] != p[i] { return false }
        return true
    }
}
