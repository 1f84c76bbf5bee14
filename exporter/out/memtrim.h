/* Gives the memory of finished scrapes back to the kernel: glibc malloc's
 * settings at start-up, and a trim once much was freed or a burst of
 * concurrent scrapes is over. */
#ifndef BS_MEMTRIM_H
#define BS_MEMTRIM_H

#include <stdbool.h>
#include <stddef.h>

/* Before any thread is made. */
void memtrim_setup(void);
/* A scrape was made. */
void memtrim_scrape_begin(void);
/* A scrape holding `bytes` of body was freed. Returns whether this trimmed. */
bool memtrim_scrape_end(size_t bytes);

#endif
