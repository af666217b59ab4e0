/// A post's claim to be a client's numbered post (issue 34): the client's id (`Client-ID`) and the post's
/// sequence number (`Client-Sequence`, 1 for a client's first post to the session, then one more each time).
public struct ClientStamp: Sendable, Equatable {
    /// The client's id: 1 to 64 characters of `A-Za-z0-9_-`.
    public var client: String
    /// The post's number among the client's posts to the session.
    public var sequence: UInt64

    /// Creates a stamp.
    public init(client: String, sequence: UInt64) {
        self.client = client
        self.sequence = sequence
    }

    /// The stamp of a request's `Client-ID` and `Client-Sequence` headers: nil when neither is sent, 400 when one is
    /// missing or malformed.
    public static func parse(client: String?, sequence: String?) throws(APIError) -> ClientStamp? {
        if client == nil && sequence == nil { return nil }
        guard let client, let sequence else {
            throw APIError(
                .invalidRequest,
                "Client-ID and Client-Sequence go together: send both (a numbered post) or neither"
            )
        }
        guard !client.isEmpty, client.utf8.count <= 64,
            client.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            })
        else {
            throw APIError(.invalidRequest, "Client-ID is 1 to 64 characters of A-Z, a-z, 0-9, - and _, e.g. a UUID")
        }
        guard let number = UInt64(sequence), number >= 1, number <= 9_007_199_254_740_991 else {
            throw APIError(
                .invalidRequest,
                "Client-Sequence is a whole number from 1 to 2^53-1: 1 for the client's first post to the session, "
                    + "then one more for each post"
            )
        }
        return ClientStamp(client: client, sequence: number)
    }
}
