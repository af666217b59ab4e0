import SessionJournal

/// Revoking a session's tokens: the generation moves on in memory at once (older tokens are refused from then on) and
/// is journaled through the session's recorder like any of its records, so that the revocation is fenced where the
/// journal is shared (a superseded copy's revocation is refused, and the copy dropped) and reaches whichever replica
/// reads the session back next.
extension SystemSession {
    @usableFromInline
    var tokenGeneration: UInt64 { tokens.current }

    @usableFromInline
    func revokeTokens(completion: @escaping @Sendable (Result<UInt64, APIError>) -> Void) {
        let generation = tokens.advance { generation in
            recorder?.journal([.tokens(sessionID: id.description, generation: generation)])
        }
        answerOnceJournaled(.success(generation), completion)
    }
}
