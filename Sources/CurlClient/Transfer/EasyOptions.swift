import CCurl
import Upstream

/// Sets the libcurl options of one easy handle from a request and the client's configuration.
///
/// Used once per transfer, on the client's queue, before the handle joins the multi handle.
struct EasyOptions {
    let handle: UnsafeMutableRawPointer
    let url: String

    // swift-format-ignore: FunctionParameterCount
    func apply(
        request: UpstreamRequest,
        configuration: CurlFetcher.Configuration,
        streaming: Bool,
        transfer: UnsafeMutableRawPointer,
        driver: UnsafeMutableRawPointer,
        errorBuffer: UnsafeMutablePointer<CChar>,
        headerList: inout UnsafeMutablePointer<curl_slist>?
    ) throws(UpstreamError) {
        try set(CURLOPT_URL, request.url)
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_ACCEPT_ENCODING, "")
        try check(fh_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)

        try set(CURLOPT_FOLLOWLOCATION, configuration.maxRedirects > 0 ? 1 : 0)
        try set(CURLOPT_MAXREDIRS, configuration.maxRedirects)
        try set(CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeoutMilliseconds)
        let total =
            request.totalTimeoutMilliseconds
            ?? (streaming ? configuration.streamTotalTimeoutMilliseconds : configuration.totalTimeoutMilliseconds)
        try set(CURLOPT_TIMEOUT_MS, total)
        try set(CURLOPT_LOW_SPEED_LIMIT, configuration.lowSpeedBytesPerSecond)
        try set(
            CURLOPT_LOW_SPEED_TIME,
            configuration.lowSpeedBytesPerSecond > 0 ? configuration.lowSpeedTimeSeconds : 0
        )
        if !streaming {
            // Refuses at once when Content-Length announces too much; the write callback checks the rest.
            try check(
                fh_easy_setopt_off(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(configuration.maxBodyBytes)),
                CURLOPT_MAXFILESIZE_LARGE
            )
        }

        try setMethodAndBody(request)

        var list: UnsafeMutablePointer<curl_slist>?
        for field in request.headers {
            list = curl_slist_append(list, "\(field.name): \(field.value)")
        }
        if request.body != nil {
            // No `Expect: 100-continue` round trip before small bodies.
            list = curl_slist_append(list, "Expect:")
        }
        headerList = list
        if let list {
            try check(fh_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list), CURLOPT_HTTPHEADER)
        }

        try check(fh_easy_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, writeCallback), CURLOPT_WRITEFUNCTION)
        try check(fh_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, transfer), CURLOPT_WRITEDATA)
        try check(
            fh_easy_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, headerCallback),
            CURLOPT_HEADERFUNCTION
        )
        try check(fh_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, transfer), CURLOPT_HEADERDATA)
        // Sockets are closed by the driver once Dispatch no longer watches them.
        try check(fh_easy_setopt_close_socket_function(handle, closeSocketCallback), CURLOPT_CLOSESOCKETFUNCTION)
        try check(fh_easy_setopt_pointer(handle, CURLOPT_CLOSESOCKETDATA, driver), CURLOPT_CLOSESOCKETDATA)
    }

    private func setMethodAndBody(_ request: UpstreamRequest) throws(UpstreamError) {
        let method = request.method.uppercased()
        switch method {
        case "GET" where request.body == nil:
            try set(CURLOPT_HTTPGET, 1)
        case "HEAD":
            try set(CURLOPT_NOBODY, 1)
        default:
            let body = request.body ?? []
            try check(
                fh_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                CURLOPT_POSTFIELDSIZE_LARGE
            )
            let code = body.withUnsafeBufferPointer { buffer in
                // COPYPOSTFIELDS copies the bytes now; an empty body still needs a valid pointer.
                fh_easy_setopt_pointer(
                    handle,
                    CURLOPT_COPYPOSTFIELDS,
                    UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                )
            }
            try check(code, CURLOPT_COPYPOSTFIELDS)
            if method != "POST" {
                try set(CURLOPT_CUSTOMREQUEST, method)
            }
        }
    }

    private func set(_ option: CURLoption, _ value: Int) throws(UpstreamError) {
        try check(fh_easy_setopt_long(handle, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(UpstreamError) {
        try check(fh_easy_setopt_string(handle, option, value), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(UpstreamError) {
        guard code != CURLE_OK else { return }
        if option == CURLOPT_URL || code == CURLE_UNSUPPORTED_PROTOCOL {
            throw UpstreamError(.invalidRequest, "The URL \(url) is not a usable http or https URL.")
        }
        let reason = String(cString: curl_easy_strerror(code))
        throw UpstreamError(.other, "libcurl refused option \(option.rawValue) for \(url): \(reason).")
    }
}

private let writeCallback: curl_write_callback = { data, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.receivedBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let headerCallback: curl_write_callback = { data, size, count, userdata in
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
    transfer.receivedHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
    return size * count
}

private let closeSocketCallback: curl_closesocket_callback = { clientp, socket in
    let driver = Unmanaged<MultiDriver>.fromOpaque(clientp!).takeUnretainedValue()
    driver.curlClosesSocket(socket)
    return 0
}
