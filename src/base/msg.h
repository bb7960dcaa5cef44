/* The (msg, msg_size) convention of the systems' validators and file
 * loaders: an optional caller buffer that receives why a call failed. NULL
 * or a size of 0 means the caller does not want the text. */
#ifndef SHOAL_BASE_MSG_H
#define SHOAL_BASE_MSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* snprintf into an optional caller buffer. */
static inline void set_msg(char* msg, int msg_size, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void set_msg(char* msg, int msg_size, const char* fmt, ...)
{
    if (msg == NULL || msg_size <= 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)msg_size, fmt, ap);
    va_end(ap);
}

#endif /* SHOAL_BASE_MSG_H */
