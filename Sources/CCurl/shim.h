#ifndef FEEDBACKHOST_CCURL_SHIM_H
#define FEEDBACKHOST_CCURL_SHIM_H
#include <curl/curl.h>

// Swift cannot call C variadic functions (curl_easy_setopt, curl_multi_setopt, curl_easy_getinfo).
// One typed wrapper per argument kind; the naming follows the option's argument type.

// MARK: easy handle options

static inline CURLcode fh_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fh_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fh_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fh_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fh_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fh_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    // CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature.
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fh_easy_setopt_close_socket_function(CURL *handle, curl_closesocket_callback value) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, value);
}

// MARK: easy handle information

static inline CURLcode fh_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode fh_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: multi handle options

static inline CURLMcode fh_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode fh_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode fh_multi_setopt_socket_function(CURLM *multi, curl_socket_callback value) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, value);
}

static inline CURLMcode fh_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback value) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, value);
}

// MARK: multi messages (CURLMsg.data is a union)

static inline CURLcode fh_message_result(const CURLMsg *message) {
    return message->data.result;
}

// MARK: constants defined as macros Swift does not import

static inline size_t fh_write_function_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline int fh_pause_continue(void) { return CURLPAUSE_CONT; }
static inline curl_socket_t fh_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

#endif
