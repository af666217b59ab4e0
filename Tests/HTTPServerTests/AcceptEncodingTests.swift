import Testing

@testable import HTTPServer

struct AcceptEncodingTests {
    @Test func missingHeaderGivesIdentity() {
        #expect(AcceptEncoding.preferred(nil) == .identity)
    }

    @Test(arguments: ["", "   ", ",", " , ,"])
    func emptyValueGivesIdentity(value: String) {
        #expect(AcceptEncoding.preferred(value) == .identity)
    }

    @Test(arguments: ["gzip", "gzip, deflate, br", "br, gzip", "deflate, gzip;q=0.1", "x-gzip"])
    func listedGzipIsChosen(value: String) {
        #expect(AcceptEncoding.preferred(value) == .gzip)
    }

    @Test(arguments: ["GZIP", "GZip;Q=1", "X-GZIP", " \tgzip\t ", "gzip ; q = 1"])
    func codingAndParameterNamesAreCaseInsensitiveAndWhitespaceIsIgnored(value: String) {
        #expect(AcceptEncoding.preferred(value) == .gzip)
    }

    @Test(arguments: ["gzip;q=0", "gzip;q=0.0", "gzip;q=0.000", "deflate, br", "identity", "gzip;q=0, *"])
    func gzipNotAcceptableGivesIdentity(value: String) {
        #expect(AcceptEncoding.preferred(value) == .identity)
    }

    @Test func wildcardCoversUnlistedGzip() {
        #expect(AcceptEncoding.preferred("*") == .gzip)
        #expect(AcceptEncoding.preferred("br;q=1, *;q=0.5") == .gzip)
    }

    @Test func wildcardWithQZeroForbidsGzipAndIdentity() {
        #expect(AcceptEncoding.preferred("*;q=0") == .identity)
        #expect(AcceptEncoding.preferred("identity;q=0, *;q=0") == .identity)
    }

    @Test func refusedIdentityMakesAnyAcceptableGzipWin() {
        #expect(AcceptEncoding.preferred("gzip;q=0.001, identity;q=0") == .gzip)
        #expect(AcceptEncoding.preferred("identity;q=0, *") == .gzip)
        #expect(AcceptEncoding.preferred("*;q=0, gzip;q=0.2") == .gzip)
    }

    @Test func highestWeightWins() {
        #expect(AcceptEncoding.preferred("gzip;q=0.5, identity;q=0.8") == .identity)
        #expect(AcceptEncoding.preferred("gzip;q=0.8, identity;q=0.5") == .gzip)
        #expect(AcceptEncoding.preferred("identity;q=0.9, *;q=0.3") == .identity)
        #expect(AcceptEncoding.preferred("gzip;q=0.301, *;q=0.300") == .gzip)
    }

    @Test func tiesPreferGzip() {
        #expect(AcceptEncoding.preferred("identity, gzip") == .gzip)
        #expect(AcceptEncoding.preferred("identity;q=0.5, gzip;q=0.5") == .gzip)
        #expect(AcceptEncoding.preferred("*;q=0.7") == .gzip)
    }

    @Test func unlistedIdentityRanksBelowListedGzip() {
        #expect(AcceptEncoding.preferred("gzip;q=0.001") == .gzip)
    }

    @Test(arguments: [
        "gzip;q=abc", "gzip;q=", "gzip;q", "gzip;q=1.5", "gzip;q=2", "gzip;q=0.5000", "gzip;q=1.001",
        "gzip;q=-1", "gzip;q=.5", "gzip;q=0.5.0",
    ])
    func elementWithMalformedWeightIsIgnored(value: String) {
        #expect(AcceptEncoding.preferred(value) == .identity)
        #expect(AcceptEncoding.preferred(value + ", *;q=0.5") == .gzip)
    }

    @Test(arguments: ["gzip;q=1.0", "gzip;q=1.000", "gzip;q=1.", "gzip;q=0.5", "gzip;q=0.05", "gzip;q=0.001"])
    func wellFormedWeightsAreAccepted(value: String) {
        #expect(AcceptEncoding.preferred(value) == .gzip)
    }

    @Test func firstElementForACodingCounts() {
        #expect(AcceptEncoding.preferred("gzip;q=0, gzip") == .identity)
        #expect(AcceptEncoding.preferred("gzip, gzip;q=0") == .gzip)
        #expect(AcceptEncoding.preferred("x-gzip;q=0, gzip") == .identity)
    }

    @Test func otherParametersAreIgnored() {
        #expect(AcceptEncoding.preferred("gzip;level=9") == .gzip)
        #expect(AcceptEncoding.preferred("gzip;level=9;q=0") == .identity)
    }

    @Test func unavailableGzipIsNeverChosen() {
        #expect(AcceptEncoding.preferred("gzip", available: []) == .identity)
        #expect(AcceptEncoding.preferred("*", available: [.identity]) == .identity)
    }
}
