/* Presents a DCI4 value the way its description asks (dci4stat's job, and
 * the collector's for info labels). */
#ifndef DCI4_FORMAT_H
#define DCI4_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "dci4_wire.h"

#define DCI4_TEXT_MAX 512

/* Writes the value in slot (d->size bytes) as text into out (DCI4_TEXT_MAX
 * bytes); non-printable bytes of strings become '?'. Returns 0, or -EPROTO
 * for a type, format or presentation it does not know ("?" is written). */
int dci4_format_value(const struct dci4_desc *d, const uint8_t *slot, char *out);

#endif
