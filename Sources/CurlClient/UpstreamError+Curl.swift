import CCurl
import Upstream

extension UpstreamError {
    /// Translates a libcurl result into an error a person can act on; nil for `CURLE_OK`.
    ///
    /// `detail` is libcurl's own sentence from `CURLOPT_ERRORBUFFER` (may be empty).
    static func from(curlCode code: CURLcode, url: String, detail: String) -> UpstreamError? {
        guard code != CURLE_OK else { return nil }
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        let (kind, sentence) = describe(code, url: url)
        return UpstreamError(kind, "\(sentence) (libcurl: \(reason))")
    }

    private static func describe(_ code: CURLcode, url: String) -> (Code, String) {
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return (.invalidRequest, "The URL \(url) is not a usable http or https URL.")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return (.couldNotResolve, "Could not resolve the host of \(url); check the name and DNS.")
        case CURLE_COULDNT_CONNECT:
            return (.couldNotConnect, "Could not connect to \(url); is the upstream running and reachable?")
        case CURLE_OPERATION_TIMEDOUT:
            return (.timedOut, "The request to \(url) timed out.")
        case CURLE_FILESIZE_EXCEEDED:
            return (.tooLarge, "The response body from \(url) is larger than the configured maximum.")
        case CURLE_TOO_MANY_REDIRECTS:
            return (.tooManyRedirects, "The request to \(url) was redirected more often than allowed.")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_SSL_SHUTDOWN_FAILED:
            return (.tlsFailure, "The TLS connection to \(url) failed; check the certificate and that it speaks TLS.")
        case CURLE_WEIRD_SERVER_REPLY, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_BAD_CONTENT_ENCODING,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return (.badResponse, "The upstream at \(url) sent an incomplete or invalid HTTP response.")
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR:
            return (.connectionFailed, "The connection to \(url) failed during the transfer.")
        default:
            return (.other, "The request to \(url) failed.")
        }
    }
}
