import CCurl
import Testing
import Upstream

@testable import CurlClient

struct UpstreamErrorTests {
    @Test(arguments: [
        (CURLE_COULDNT_RESOLVE_HOST, UpstreamError.Code.couldNotResolve),
        (CURLE_COULDNT_CONNECT, .couldNotConnect),
        (CURLE_OPERATION_TIMEDOUT, .timedOut),
        (CURLE_FILESIZE_EXCEEDED, .tooLarge),
        (CURLE_TOO_MANY_REDIRECTS, .tooManyRedirects),
        (CURLE_PEER_FAILED_VERIFICATION, .tlsFailure),
        (CURLE_SSL_CONNECT_ERROR, .tlsFailure),
        (CURLE_UNSUPPORTED_PROTOCOL, .invalidRequest),
        (CURLE_GOT_NOTHING, .badResponse),
        (CURLE_RECV_ERROR, .connectionFailed),
    ])
    func curlResultsMapToActionableCodes(result: CURLcode, code: UpstreamError.Code) {
        let error = UpstreamError.from(curlCode: result, url: "http://upstream.test/x", detail: "")
        #expect(error?.code == code)
        #expect(error?.message.contains("http://upstream.test/x") == true)
    }

    @Test func successIsNoError() {
        #expect(UpstreamError.from(curlCode: CURLE_OK, url: "u", detail: "") == nil)
    }

    @Test func libcurlDetailIsKept() {
        let error = UpstreamError.from(
            curlCode: CURLE_COULDNT_RESOLVE_HOST,
            url: "http://h/",
            detail: "no such host h"
        )
        #expect(error?.message.hasSuffix("(libcurl: no such host h)") == true)
    }
}
