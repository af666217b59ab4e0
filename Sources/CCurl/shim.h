#ifndef FEEDBACKHOST_CCURL_SHIM_H
#define FEEDBACKHOST_CCURL_SHIM_H
#include <curl/curl.h>
// Typed, non-variadic wrappers are added by CurlClient's work (Swift cannot call C variadics).
#endif
