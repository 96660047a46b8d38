/*-------------------------------------------------------------------------
 *
 * pthread.h
 *	  The few POSIX thread calls the client library makes (a once for the
 *	  C locale and for the key of each thread's sizing memo, and that key),
 *	  for the WebAssembly build of node/: Debian's wasi-libc targets
 *	  WebAssembly without threads and has no pthread.h.  An instance of the
 *	  module runs on one thread (a JavaScript agent), so a once is a flag
 *	  and a key holds one value, which no thread's exit ever frees.  Found
 *	  first on the include path of that build only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFN_PTHREAD_H
#define BFN_PTHREAD_H

#include <errno.h>

typedef int pthread_once_t;
typedef unsigned pthread_key_t;

#define PTHREAD_ONCE_INIT 0

/* Keys an instance can make: the client library makes one. */
#define BFN_PTHREAD_KEYS 4

static inline int
pthread_once(pthread_once_t *once, void (*routine) (void))
{
	if (*once == 0)
	{
		*once = 1;
		routine();
	}
	return 0;
}

/* The one thread's value of each key (one array per file that uses keys). */
static inline void **
bfn_key_value(pthread_key_t key)
{
	static void *values[BFN_PTHREAD_KEYS];

	return &values[key];
}

static inline int
pthread_key_create(pthread_key_t *key, void (*destructor) (void *))
{
	static pthread_key_t made;

	(void) destructor;			/* the one thread never exits */
	if (made == BFN_PTHREAD_KEYS)
		return EAGAIN;
	*key = made++;
	return 0;
}

static inline void *
pthread_getspecific(pthread_key_t key)
{
	return *bfn_key_value(key);
}

static inline int
pthread_setspecific(pthread_key_t key, const void *value)
{
	*bfn_key_value(key) = (void *) value;
	return 0;
}

#endif							/* BFN_PTHREAD_H */
