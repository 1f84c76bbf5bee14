/* Picks the exposition format from Accept and gzip from Accept-Encoding. */
#ifndef BS_NEGOTIATE_H
#define BS_NEGOTIATE_H

#include <stdbool.h>

#include "expo.h"

enum expo_format negotiate_format(const char *accept);
bool negotiate_gzip(const char *accept_encoding);

#endif
