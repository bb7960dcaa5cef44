/* Symbol visibility for the shoal library. The shared library exports only
 * what is marked SHOAL_API; everything else is hidden. */
#ifndef SHOAL_EXPORT_H
#define SHOAL_EXPORT_H

#if defined(SHOAL_STATIC)
#define SHOAL_API
#elif defined(_WIN32)
#if defined(SHOAL_BUILDING)
#define SHOAL_API __declspec(dllexport)
#else
#define SHOAL_API __declspec(dllimport)
#endif
#else
#define SHOAL_API __attribute__((visibility("default")))
#endif

#endif /* SHOAL_EXPORT_H */
