/// Chooses a response's content coding from a request's `Accept-Encoding` field value
/// (RFC 9110 §12.5.3). Stateless; safe from any thread.
///
/// Rules, in the order they apply:
/// - No field (`nil`): the client stated no preference; this server then sends `identity`, so a
///   client that did not ask (plain `curl`, scripts) never receives gzip.
/// - An empty (or all-whitespace) value: the client wants no content coding: `identity`.
/// - Elements are `coding [; q=value]`, separated by commas, with optional whitespace; codings and
///   the parameter name are case-insensitive; `x-gzip` means `gzip` (RFC 9110 §8.4.1.3).
/// - A q-value must match the RFC's grammar (`0`, `0.` plus up to 3 digits, `1`, `1.` plus up to three
///   zeros). An element with a malformed q-value (`q=abc`, `q=0.5000`, `q=1.5`, `q=-1`) is ignored as
///   a whole, as if the client had not listed that coding. Other parameters are ignored. When a coding
///   is listed twice, its first element counts.
/// - A coding's weight is its own element's q; else the q of `*`, if listed; else it is not acceptable.
/// - `identity` is acceptable unless `identity;q=0`, or `*;q=0` without an `identity` element, says
///   otherwise; when it is acceptable only by default (neither listed nor covered by `*`) it ranks
///   below every coding the client listed with q > 0.
/// - q=0 forbids; among acceptable available codings the highest q wins; ties go to `gzip`.
/// - When nothing available is acceptable, the result is `identity` (RFC 9110 §12.5.3: send the
///   response without a content coding), even when `identity` itself was refused.
public enum AcceptEncoding {
    /// The coding to use for a response, given the request's `Accept-Encoding` value and the
    /// codings this response can be sent with (`identity` is always possible).
    public static func preferred(_ headerValue: String?, available: [ContentCoding] = [.gzip]) -> ContentCoding {
        guard let headerValue else { return .identity }
        let weights = parse(headerValue)
        if weights.isEmpty { return .identity }
        let wildcard = weights["*"]
        var best: (coding: ContentCoding, weight: Int)?
        // gzip first so that it wins ties.
        for coding in [ContentCoding.gzip, .identity] where coding == .identity || available.contains(coding) {
            // An unlisted identity is acceptable by default but outranked by every listed coding:
            // leaving it out here makes it the fallback below.
            guard let weight = weights[coding.rawValue] ?? wildcard else { continue }
            if weight > 0, weight > best?.weight ?? 0 {
                best = (coding, weight)
            }
        }
        return best?.coding ?? .identity
    }

    /// Maps each lowercased coding to its weight in thousandths (0...1000), skipping malformed
    /// elements. Returns an empty dictionary for a value without elements.
    private static func parse(_ value: String) -> [String: Int] {
        var weights: [String: Int] = [:]
        for element in value.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = element.split(separator: ";", omittingEmptySubsequences: false)
            var coding = trimmed(parts[0]).lowercased()
            if coding.isEmpty { continue }
            if coding == "x-gzip" { coding = "gzip" }
            var weight = 1000
            var malformed = false
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard trimmed(pair[0]).lowercased() == "q" else { continue }
                guard pair.count == 2, let parsed = qvalue(trimmed(pair[1])) else {
                    malformed = true
                    break
                }
                weight = parsed
            }
            if malformed || weights[coding] != nil { continue }
            weights[coding] = weight
        }
        return weights
    }

    /// Parses `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )` into thousandths.
    private static func qvalue(_ text: Substring) -> Int? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else {
            return nil
        }
        let whole = Int(first - UInt8(ascii: "0"))
        if bytes.count == 1 { return whole * 1000 }
        guard bytes[1] == UInt8(ascii: "."), bytes.count <= 5 else { return nil }
        var fraction = 0
        var scale = 100
        for digit in bytes[2...] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            fraction += Int(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        if whole == 1 && fraction != 0 { return nil }
        return whole * 1000 + fraction
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = text.lastIndex(where: { !isSpace($0) })!
        return text[start...end]
    }
}
