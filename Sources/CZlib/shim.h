#ifndef FEEDBACKHOST_CZLIB_SHIM_H
#define FEEDBACKHOST_CZLIB_SHIM_H
#include <zlib.h>
#endif
